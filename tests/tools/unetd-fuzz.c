/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unetd-fuzz - seeded hostile requests on unetd's socket:
 *
 *   unetd-fuzz --socket PATH --iface IF [--count N] [--seed S] [--seconds T]
 *
 * Each request is one of: random bytes of any length (up to past the
 * largest message), a good header with a random type and body, a request
 * with a file descriptor attached, truncated and overlong bodies, and
 * well-formed requests with random fields (endpoints on IF or on names
 * that are no interface, random kinds and sizes, channels on random
 * endpoints and tags, destroys of endpoints that may not exist).  A
 * dropped connection is counted and made again.  At the end the daemon
 * must still answer HELLO and STATUS on a fresh connection: exit 0 if it
 * does, 1 if not.  Prints
 *   fuzz requests=N replies=N errors=N dropped=N endpoints=N
 * Bounded by --count (default 10000) and --seconds (default 60).
 *
 *   unetd-fuzz --socket PATH --hold N
 *
 * opens N connections at once, says HELLO on each, and prints
 *   hold served=K of N
 * (how many the daemon answered), exit 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/unetd_proto.h"

static uint64_t seed = 0x756e6574642d667aULL;

static uint32_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (uint32_t)(seed >> 11);
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send len bytes (one packet), with an fd attached if with_fd. */
static int send_req(int fd, const void *buf, size_t len, bool with_fd)
{
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	char cbuf[CMSG_SPACE(sizeof(int))];
	int devnull = -1;
	ssize_t n;

	if (with_fd) {
		struct cmsghdr *cm;

		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &devnull, sizeof(int));
	}
	n = sendmsg(fd, &m, MSG_NOSIGNAL);
	if (devnull >= 0)
		close(devnull);
	return n < 0 ? -errno : 0;
}

/* Wait up to ms for a reply: 1 got one (its fds closed, *err its error),
 * 0 none, -1 the connection is gone. */
static int get_reply(int fd, int ms, int32_t *err)
{
	union {
		struct unetd_rep_hdr h;
		uint8_t b[UNETD_MAX_MSG];
	} r;
	char cbuf[CMSG_SPACE(sizeof(int) * 8)];
	struct iovec iov = { r.b, sizeof(r.b) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return 0;
	n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int f;

				memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				close(f);
			}
	*err = (size_t)n >= sizeof(r.h) ? r.h.err : -EPROTO;
	return 1;
}

static size_t fill_body(uint16_t type, uint8_t *b, const char *iface)
{
	switch (type) {
	case UNETD_REQ_HELLO: {
		struct unetd_hello h = { .version = rnd() % 4 ? UNETD_PROTO_VERSION : rnd() };

		memcpy(b, &h, sizeof(h));
		return sizeof(h);
	}
	case UNETD_REQ_EP_CREATE: {
		static const uint32_t sizes[] = { 0, 1, 2048, 4096, 65536, 1u << 20, 1u << 30, UINT32_MAX };
		struct unetd_ep_create c = { 0 };

		if (rnd() % 3)
			snprintf(c.ifname, sizeof(c.ifname), "%s", iface);
		else
			for (size_t i = 0; i < sizeof(c.ifname); i++)
				c.ifname[i] = (char)rnd();
		c.kind = rnd() % 4 ? rnd() % 3 : rnd();
		c.segment_size = sizes[rnd() % 8];
		c.frame_size = rnd() % 2 ? 2048 : sizes[rnd() % 8];
		c.ring_size = rnd() % 2 ? 1024 : sizes[rnd() % 8];
		memcpy(b, &c, sizeof(c));
		return sizeof(c);
	}
	case UNETD_REQ_EP_DESTROY: {
		struct unetd_ep_ref r = { .ep = rnd() % 8 };

		memcpy(b, &r, sizeof(r));
		return sizeof(r);
	}
	case UNETD_REQ_CH_OPEN: {
		struct unetd_ch_open c = { .ep = rnd() % 8, .tag = (uint16_t)rnd(),
					   .peer_tag = (uint16_t)rnd() };

		for (int i = 0; i < 6; i++)
			c.peer_mac[i] = (uint8_t)rnd();
		memcpy(b, &c, sizeof(c));
		return sizeof(c);
	}
	case UNETD_REQ_CH_CLOSE: {
		struct unetd_ch_ref r = { .ep = rnd() % 8, .tag = (uint16_t)rnd() };

		memcpy(b, &r, sizeof(r));
		return sizeof(r);
	}
	case UNETD_REQ_CH_OPEN_IPV4: {
		/* Peers the daemon must refuse (none, broadcast, multicast,
		 * loopback, unresolved) and random ones; tags and ports any. */
		static const uint32_t peers[] = { 0, 0xffffffffu, 0xe0000001u, 0x7f000001u,
						  0x0ac90001u, 0x0ac90002u };
		struct unetd_ch_open_ipv4 c = { .ep = rnd() % 8, .tag = (uint16_t)rnd(),
						.peer_tag = (uint16_t)rnd(),
						.peer_port = rnd() % 2 ? 0 : (uint16_t)rnd(),
						.pad = rnd() % 8 ? 0 : (uint16_t)rnd() };

		c.peer_addr = htonl(rnd() % 2 ? peers[rnd() % 6] : (uint32_t)rnd());
		memcpy(b, &c, sizeof(c));
		return sizeof(c);
	}
	default:
		return 0;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' }, { "iface", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },  { "seed", required_argument, NULL, 'S' },
		{ "seconds", required_argument, NULL, 't' }, { "hold", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *iface = "lo";
	long count = 10000, seconds = 60, replies = 0, errors = 0, dropped = 0, created = 0, i;
	long hold = 0;
	static uint8_t buf[UNETD_MAX_MSG + 512];
	time_t end;
	int c, fd = -1, ok;
	int32_t err;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': path = optarg; break;
		case 'i': iface = optarg; break;
		case 'n': count = strtol(optarg, NULL, 10); break;
		case 'S': seed = strtoull(optarg, NULL, 0) | 1; break;
		case 't': seconds = strtol(optarg, NULL, 10); break;
		case 'H': hold = strtol(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (!path || count < 1 || seconds < 1) {
		fprintf(stderr, "usage: unetd-fuzz --socket PATH --iface IF [--count N] "
				"[--seed S] [--seconds T]\n");
		return 2;
	}
	if (hold > 0) {
		static int fds[1024];
		struct unetd_req_hdr h = { .version = UNETD_PROTO_VERSION, .type = UNETD_REQ_HELLO,
					   .len = sizeof(struct unetd_hello), .seq = 1 };
		struct unetd_hello hello = { .version = UNETD_PROTO_VERSION };
		long served = 0;

		if (hold > 1024)
			hold = 1024;
		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), &hello, sizeof(hello));
		for (i = 0; i < hold; i++)
			fds[i] = connect_to(path);
		for (i = 0; i < hold; i++)
			if (fds[i] >= 0 && !send_req(fds[i], buf, sizeof(h) + sizeof(hello), false) &&
			    get_reply(fds[i], 2000, &err) == 1 && !err)
				served++;
		for (i = 0; i < hold; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		printf("hold served=%ld of %ld\n", served, hold);
		return 0;
	}
	end = time(NULL) + seconds;
	for (i = 0; i < count && time(NULL) < end; i++) {
		struct unetd_req_hdr *h = (struct unetd_req_hdr *)buf;
		bool with_fd = false;
		size_t len;

		if (fd < 0 && (fd = connect_to(path)) < 0) {
			fprintf(stderr, "unetd-fuzz: connect %s: %s\n", path, strerror(errno));
			return 1;
		}
		h->version = UNETD_PROTO_VERSION;
		h->seq = (uint32_t)i;
		h->reserved = 0;
		switch (rnd() % 8) {
		case 0: /* noise, of any length up to past the largest message */
			len = rnd() % sizeof(buf);
			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)rnd();
			break;
		case 1: /* a header and a random body of a random claimed length */
			h->type = (uint16_t)(rnd() % (UNETD_REQ__COUNT + 2));
			len = sizeof(*h) + rnd() % 256;
			h->len = rnd() % 2 ? (uint32_t)(len - sizeof(*h)) : rnd();
			for (size_t k = sizeof(*h); k < len; k++)
				buf[k] = (uint8_t)rnd();
			break;
		case 2: /* well-formed, with a descriptor attached */
			with_fd = true;
			/* fall through */
		default: /* well-formed, random fields; sometimes cut short */
			h->type = (uint16_t)(1 + rnd() % (UNETD_REQ__COUNT - 1));
			h->len = (uint32_t)fill_body(h->type, buf + sizeof(*h), iface);
			len = sizeof(*h) + h->len;
			if (rnd() % 16 == 0 && len > 1)
				len -= 1 + rnd() % (len - 1);
			break;
		}
		if (send_req(fd, buf, len, with_fd)) {
			dropped++;
			close(fd);
			fd = -1;
			continue;
		}
		switch (get_reply(fd, 200, &err)) {
		case 1:
			replies++;
			if (err)
				errors++;
			else if (h->type == UNETD_REQ_EP_CREATE && len == sizeof(*h) + h->len)
				created++;
			break;
		case -1:
			dropped++;
			close(fd);
			fd = -1;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	/* The daemon must still serve a well-behaved client. */
	ok = 0;
	fd = connect_to(path);
	if (fd >= 0) {
		struct unetd_req_hdr h = { .version = UNETD_PROTO_VERSION, .type = UNETD_REQ_HELLO,
					   .len = sizeof(struct unetd_hello), .seq = 1 };
		struct unetd_hello hello = { .version = UNETD_PROTO_VERSION };

		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), &hello, sizeof(hello));
		if (!send_req(fd, buf, sizeof(h) + sizeof(hello), false) &&
		    get_reply(fd, 2000, &err) == 1 && !err) {
			h.type = UNETD_REQ_STATUS;
			h.len = 0;
			h.seq = 2;
			memcpy(buf, &h, sizeof(h));
			ok = !send_req(fd, buf, sizeof(h), false) && get_reply(fd, 2000, &err) == 1 &&
			     !err;
		}
		close(fd);
	}
	printf("fuzz requests=%ld replies=%ld errors=%ld dropped=%ld endpoints=%ld alive=%d\n", i,
	       replies, errors, dropped, created, ok);
	return ok ? 0 : 1;
}
