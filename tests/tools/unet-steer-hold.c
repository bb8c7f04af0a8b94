/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unet-steer-hold - one endpoint holding one of each thing unetctl steer
 * makes a rule for: a routable channel, a connected UDP port and a
 * listening TCP port, on the receive queues of QUEUE_MASK, and with the
 * IPv6 arguments the same over IPv6 (a routable IPv6 channel, a UDP/IPv6
 * port connected to REMOTE6, a TCP/IPv6 listener on LOCAL6).  Prints
 *   ready endpoint=ID queue_mask=M
 * and holds them until SIGTERM or HOLD seconds, then exits 0.
 *
 *   unet-steer-hold IFACE QUEUE_MASK TAG PEER_IP PEER_TAG UDP_LOCAL:P UDP_REMOTE:P TCP_LOCAL:P HOLD
 *                   [TAG6 PEER_IP6 PEER_TAG6 LOCAL6 UDP6_PORT REMOTE6 REMOTE6_PORT TCP6_PORT]
 */
#include <arpa/inet.h>
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
	struct unet_udp_sock *us, *us6 = NULL;
	struct unet_tcp *ts, *ts6 = NULL;
	struct unet_channel *ch6 = NULL;
	uint64_t tag6, peer_tag6, udp6_port, remote6_port, tcp6_port;
	struct in6_addr peer6, local6;
	UNET_OPTS_INIT(unet_udp_opts, uo6);

	if ((argc != 10 && argc != 18) || parse_u64(argv[2], 0xffff, &mask) || !mask ||
	    parse_u64(argv[3], 65535, &tag) || parse_ipv4_port(argv[4], &peer_ip, &unused) ||
	    parse_u64(argv[5], 65535, &peer_tag) || parse_ipv4_port(argv[6], &udp_ip, &udp_port) ||
	    parse_ipv4_port(argv[7], &uo.remote_addr, &uo.remote_port) ||
	    parse_ipv4_port(argv[8], &tcp_ip, &tcp_port) || parse_u64(argv[9], 600, &hold)) {
		goto usage;
	}
	if (argc == 18 &&
	    (parse_u64(argv[10], 65535, &tag6) || inet_pton(AF_INET6, argv[11], &peer6) != 1 ||
	     parse_u64(argv[12], 65535, &peer_tag6) || inet_pton(AF_INET6, argv[13], &local6) != 1 ||
	     parse_u64(argv[14], 65535, &udp6_port) ||
	     inet_pton(AF_INET6, argv[15], &uo6.remote_addr6) != 1 ||
	     parse_u64(argv[16], 65535, &remote6_port) || parse_u64(argv[17], 65535, &tcp6_port)))
		goto usage;
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
	if (argc == 18) {
		uo6.remote_port = (uint16_t)remote6_port;
		ch6 = unet_channel__open_ipv6(ep, (uint16_t)tag6, peer6.s6_addr, 0,
					      (uint16_t)peer_tag6, NULL);
		if (!ch6) {
			perror("unet-steer-hold: IPv6 channel");
			return 1;
		}
		us6 = unet_udp__open6(ep, &local6, (uint16_t)udp6_port, &uo6);
		if (!us6) {
			perror("unet-steer-hold: udp6");
			return 1;
		}
		ts6 = unet_tcp__listen6(ep, &local6, (uint16_t)tcp6_port, NULL);
		if (!ts6) {
			perror("unet-steer-hold: tcp6");
			return 1;
		}
	}
	if (unet_endpoint__info(ep, &info)) {
		perror("unet-steer-hold: info");
		return 1;
	}
	printf("ready endpoint=%u queue_mask=%#x\n", info.id, info.queue_mask);
	for (uint64_t t = 0; t < hold * 10 && !stop_flag; t++)
		usleep(100000);
	if (ts6)
		unet_tcp__close(ts6);
	if (us6)
		unet_udp__close(us6);
	unet_channel__close(ch6);
	unet_tcp__close(ts);
	unet_udp__close(us);
	unet_channel__close(ch);
	unet_endpoint__destroy(ep);
	return 0;
usage:
	fprintf(stderr, "usage: unet-steer-hold IFACE QUEUE_MASK TAG PEER_IP PEER_TAG "
			"UDP_LOCAL:P UDP_REMOTE:P TCP_LOCAL:P HOLD(<=600) [TAG6 PEER_IP6 PEER_TAG6 "
			"LOCAL6 UDP6_PORT REMOTE6 REMOTE6_PORT TCP6_PORT]\n");
	return 2;
}
