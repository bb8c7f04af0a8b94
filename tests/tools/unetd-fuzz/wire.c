/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wire.c - unetd-fuzz's side of the daemon's socket: connect, send one
 * request, take one reply; and the run's random stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz.h"

uint64_t fuzz_seed = 0x756e6574642d667aULL;

uint32_t rnd(void)
{
	fuzz_seed ^= fuzz_seed << 13;
	fuzz_seed ^= fuzz_seed >> 7;
	fuzz_seed ^= fuzz_seed << 17;
	return (uint32_t)(fuzz_seed >> 11);
}

int connect_to(const char *path)
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

int send_req(int fd, const void *buf, size_t len, bool with_fd)
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

int get_reply(int fd, int ms, struct fuzz_reply *out)
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
	if (!out)
		return 1;
	memset(out, 0, sizeof(*out));
	if ((size_t)n < sizeof(r.h)) {
		out->h.err = -EPROTO;
		return 1;
	}
	out->h = r.h;
	out->body_len = (size_t)n - sizeof(r.h);
	if (out->body_len > sizeof(out->body))
		out->body_len = sizeof(out->body);
	memcpy(out->body, r.b + sizeof(r.h), out->body_len);
	return 1;
}

int call(int fd, uint32_t seq, uint16_t type, const void *body, uint32_t len, int ms,
	 struct fuzz_reply *r)
{
	uint8_t buf[sizeof(struct unetd_req_hdr) + 256];
	struct unetd_req_hdr h = { .version = UNETD_PROTO_VERSION, .type = type, .len = len,
				   .seq = seq };
	int got;

	if (len > sizeof(buf) - sizeof(h))
		return -1;
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), body, len);
	if (send_req(fd, buf, sizeof(h) + len, false))
		return -1;
	/* A late reply to an earlier request of this connection is not
	 * this one's. */
	while ((got = get_reply(fd, ms, r)) == 1 && r->h.seq != seq)
		;
	return got;
}
