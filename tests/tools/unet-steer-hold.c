/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-steer-hold - one endpoint holding one of each thing unetctl steer
 * makes a rule for: a routable channel, a connected UDP port and a
 * listening TCP port, on the receive queues of QUEUE_MASK.  Prints
 *   ready endpoint=ID queue_mask=M
 * and holds them until SIGTERM or HOLD seconds, then exits 0.
 *
 *   unet-steer-hold IFACE QUEUE_MASK TAG PEER_IP PEER_TAG UDP_LOCAL:P UDP_REMOTE:P TCP_LOCAL:P HOLD
 */
#include <stdio.h>
#include <unistd.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>
#include <unet-xdp/unet_udp.h>

#include "tool_common.h"

int main(int argc, char **argv)
{
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	UNET_OPTS_INIT(unet_udp_opts, uo);
	uint64_t mask, tag, peer_tag, hold;
	uint32_t peer_ip, udp_ip, tcp_ip;
	uint16_t unused, udp_port, tcp_port;
	struct unet_endpoint_info info;
	struct unet_endpoint *ep;
	struct unet_channel *ch;
	struct unet_udp_sock *us;
	struct unet_tcp *ts;

	if (argc != 10 || parse_u64(argv[2], 0xffff, &mask) || !mask ||
	    parse_u64(argv[3], 65535, &tag) || parse_ipv4_port(argv[4], &peer_ip, &unused) ||
	    parse_u64(argv[5], 65535, &peer_tag) || parse_ipv4_port(argv[6], &udp_ip, &udp_port) ||
	    parse_ipv4_port(argv[7], &uo.remote_addr, &uo.remote_port) ||
	    parse_ipv4_port(argv[8], &tcp_ip, &tcp_port) || parse_u64(argv[9], 600, &hold)) {
		fprintf(stderr, "usage: unet-steer-hold IFACE QUEUE_MASK TAG PEER_IP PEER_TAG "
				"UDP_LOCAL:P UDP_REMOTE:P TCP_LOCAL:P HOLD(<=600)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	catch_stop_signals();
	eo.queue_mask = (uint32_t)mask;
	ep = unet_endpoint__create(argv[1], &eo);
	if (!ep) {
		perror("unet-steer-hold: endpoint");
		return 1;
	}
	ch = unet_channel__open_ipv4(ep, (uint16_t)tag, peer_ip, 0, (uint16_t)peer_tag, NULL);
	if (!ch) {
		perror("unet-steer-hold: channel");
		return 1;
	}
	us = unet_udp__open(ep, udp_ip, udp_port, &uo);
	if (!us) {
		perror("unet-steer-hold: udp");
		return 1;
	}
	ts = unet_tcp__listen(ep, tcp_ip, tcp_port, NULL);
	if (!ts) {
		perror("unet-steer-hold: tcp");
		return 1;
	}
	if (unet_endpoint__info(ep, &info)) {
		perror("unet-steer-hold: info");
		return 1;
	}
	printf("ready endpoint=%u queue_mask=%#x\n", info.id, info.queue_mask);
	for (uint64_t t = 0; t < hold * 10 && !stop_flag; t++)
		usleep(100000);
	unet_tcp__close(ts);
	unet_udp__close(us);
	unet_channel__close(ch);
	unet_endpoint__destroy(ep);
	return 0;
}
