/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * strict.c - unetd-fuzz's judged checks of the protocol's strictness
 * (--strict).
 *
 * --strict: every reserved byte of every request type (the header's
 * reserved word, each body's pad and reserved fields, the TCP_OPEN flag
 * bits no version defines, the bytes after an interface name's NUL, an
 * interface name without one), set one at a time to a seeded non-zero
 * value in an otherwise well-formed request, must be refused with EINVAL
 * on a connection that then goes on serving (a HELLO answered on it);
 * and a body one byte shorter or longer than its type's struct (the
 * header's length saying so) must drop the connection, every type,
 * while a fresh connection is served.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#define REPLY_MS 5000

/* A request with header h (its len and seq as given) and len bytes of
 * body, and its reply: as call(). */
static int call_hdr(int fd, const struct unetd_req_hdr *h, const void *body, size_t len,
		    struct fuzz_reply *r)
{
	uint8_t buf[sizeof(*h) + 256];
	int got;

	memcpy(buf, h, sizeof(*h));
	memcpy(buf + sizeof(*h), body, len);
	if (send_req(fd, buf, sizeof(*h) + len, false))
		return -1;
	while ((got = get_reply(fd, REPLY_MS, r)) == 1 && r->h.seq != h->seq)
		;
	return got;
}

/* A request type, its body's size and its reserved bytes. */
struct strict_type {
	uint16_t type;
	const char *name;
	size_t size;
	size_t off, len; /* the reserved bytes (len 0: none) */
};

#define RES(t, T, f)                                                                          \
	{ t, #t, sizeof(T), offsetof(T, f), sizeof(((T *)0)->f) }
#define NORES(t, T) { t, #t, sizeof(T), 0, 0 }

static const struct strict_type types[] = {
	RES(UNETD_REQ_HELLO, struct unetd_hello, reserved),
	/* the bytes after the name's NUL (the name is "x0") */
	{ UNETD_REQ_EP_CREATE, "UNETD_REQ_EP_CREATE", sizeof(struct unetd_ep_create),
	  offsetof(struct unetd_ep_create, ifname) + 3, 13 },
	RES(UNETD_REQ_EP_DESTROY, struct unetd_ep_ref, reserved),
	RES(UNETD_REQ_CH_OPEN, struct unetd_ch_open, pad),
	RES(UNETD_REQ_CH_CLOSE, struct unetd_ch_ref, pad),
	{ UNETD_REQ_STATUS, "UNETD_REQ_STATUS", 0, 0, 0 },
	{ UNETD_REQ_WHOAMI, "UNETD_REQ_WHOAMI", sizeof(struct unetd_whoami),
	  offsetof(struct unetd_whoami, ifname) + 3, 13 },
	NORES(UNETD_REQ_UDP_OPEN, struct unetd_udp_open),
	RES(UNETD_REQ_UDP_CLOSE, struct unetd_udp_close, pad),
	/* the flag bits past UNETD_TCP_GROUP: strict_run's own loop */
	NORES(UNETD_REQ_TCP_OPEN, struct unetd_tcp_open),
	RES(UNETD_REQ_TCP_CLOSE, struct unetd_tcp_close, pad),
	RES(UNETD_REQ_CH_OPEN_IPV4, struct unetd_ch_open_ipv4, pad),
	NORES(UNETD_REQ_UDP_OPEN_GROUP, struct unetd_udp_open),
	RES(UNETD_REQ_CH_OPEN_IPV6, struct unetd_ch_open_ipv6, pad),
};

/* A well-formed body of t, zero where reserved: endpoint handles that
 * are nobody's, the interface "x0" (none: nothing is made). */
static void base_body(const struct strict_type *t, uint8_t *b)
{
	const uint32_t ep = 0xeeeeeeeeu;

	memset(b, 0, t->size);
	switch (t->type) {
	case UNETD_REQ_HELLO: {
		struct unetd_hello h = { .version = UNETD_PROTO_VERSION };

		memcpy(b, &h, sizeof(h));
		break;
	}
	case UNETD_REQ_EP_CREATE:
		memcpy(b + offsetof(struct unetd_ep_create, ifname), "x0", 2);
		break;
	case UNETD_REQ_WHOAMI:
		memcpy(b + offsetof(struct unetd_whoami, ifname), "x0", 2);
		break;
	case UNETD_REQ_STATUS:
		break;
	default: /* every other body starts with its endpoint */
		memcpy(b, &ep, sizeof(ep));
		break;
	}
}

/* A reserved byte set: refused with EINVAL, and the connection still
 * answers a HELLO.  true if so. */
static bool refused_kept(int fd, uint32_t *seq, const struct unetd_req_hdr *h,
			 const uint8_t *body, size_t len, const char *what)
{
	struct unetd_hello hello = { .version = UNETD_PROTO_VERSION };
	struct unetd_req_hdr q = *h;
	struct fuzz_reply r;
	int got;

	q.seq = ++*seq;
	got = call_hdr(fd, &q, body, len, &r);
	if (got != 1 || r.h.err != -EINVAL) {
		fprintf(stderr, "unetd-fuzz: %s: %s (err %d: %s)\n", what,
			got == 1 ? "not refused with EINVAL" : got ? "connection dropped" : "no reply",
			got == 1 ? r.h.err : 0, got == 1 ? r.h.msg : "");
		return false;
	}
	if (call(fd, ++*seq, UNETD_REQ_HELLO, &hello, sizeof(hello), REPLY_MS, &r) != 1 || r.h.err) {
		fprintf(stderr, "unetd-fuzz: %s: the connection was not kept\n", what);
		return false;
	}
	return true;
}

/* A body of len bytes for type t (its header saying len): the daemon
 * must drop the connection.  true if so. */
static bool length_dropped(const char *path, const struct strict_type *t, size_t len)
{
	struct unetd_req_hdr h = { .version = UNETD_PROTO_VERSION, .type = t->type,
				   .len = (uint32_t)len, .seq = 1 };
	uint8_t body[256] = { 0 };
	struct fuzz_reply r;
	int fd = connect_to(path), got;

	if (fd < 0)
		return false;
	base_body(t, body);
	got = call_hdr(fd, &h, body, len, &r);
	close(fd);
	if (got != -1) {
		fprintf(stderr, "unetd-fuzz: %s with a body of %zu bytes (its struct: %zu): %s\n",
			t->name, len, t->size, got ? "answered, not dropped" : "no reply, not dropped");
		return false;
	}
	return true;
}

bool strict_run(const char *path)
{
	struct unetd_hello hello = { .version = UNETD_PROTO_VERSION };
	long res_n = 0, res_ok = 0, len_n = 0, len_ok = 0, ctl_n = 0, ctl_ok = 0;
	uint8_t body[256];
	struct fuzz_reply r;
	uint32_t seq = 0;
	char what[128];
	bool kept;
	int fd = connect_to(path);

	if (fd < 0) {
		fprintf(stderr, "unetd-fuzz: connect %s: %s\n", path, strerror(errno));
		return false;
	}
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		const struct strict_type *t = &types[i];
		struct unetd_req_hdr h = { .version = UNETD_PROTO_VERSION, .type = t->type,
					   .len = (uint32_t)t->size };

		/* The same request with its reserved bytes zero: not refused
		 * for them (it may be refused for naming no endpoint). */
		base_body(t, body);
		h.seq = ++seq;
		ctl_n++;
		if (call_hdr(fd, &h, body, t->size, &r) == 1 &&
		    !(r.h.err == -EINVAL && strstr(r.h.msg, "zero")))
			ctl_ok++;
		else
			fprintf(stderr, "unetd-fuzz: %s with every reserved byte zero: refused: %s\n",
				t->name, r.h.msg);
		/* The header's reserved word, a byte at a time. */
		for (size_t k = 0; k < sizeof(h.reserved); k++) {
			struct unetd_req_hdr bad = h;

			((uint8_t *)&bad.reserved)[k] = (uint8_t)(1 + rnd() % 255);
			snprintf(what, sizeof(what), "%s, header reserved byte %zu", t->name, k);
			res_n++;
			res_ok += refused_kept(fd, &seq, &bad, body, t->size, what);
		}
		/* The body's, a byte at a time. */
		for (size_t k = 0; k < t->len; k++) {
			uint8_t v = (uint8_t)(1 + rnd() % 255);

			base_body(t, body);
			/* TCP_OPEN's first flags byte: only the bits no
			 * version defines. */
			if (t->type == UNETD_REQ_TCP_OPEN && k == 0)
				v = (uint8_t)((v << 2) | 0x04);
			body[t->off + k] = v;
			snprintf(what, sizeof(what), "%s, reserved byte %zu of %zu", t->name, k, t->len);
			res_n++;
			res_ok += refused_kept(fd, &seq, &h, body, t->size, what);
		}
		/* TCP_OPEN's flag bits that no version defines, one at a
		 * time. */
		for (unsigned bit = 2; t->type == UNETD_REQ_TCP_OPEN && bit < 16; bit++) {
			uint16_t flags = (uint16_t)(1u << bit);

			base_body(t, body);
			memcpy(body + offsetof(struct unetd_tcp_open, flags), &flags, sizeof(flags));
			snprintf(what, sizeof(what), "%s, flag bit %u", t->name, bit);
			res_n++;
			res_ok += refused_kept(fd, &seq, &h, body, t->size, what);
		}
		/* An interface name of 16 bytes, no NUL. */
		if (t->type == UNETD_REQ_EP_CREATE || t->type == UNETD_REQ_WHOAMI) {
			base_body(t, body);
			memcpy(body, "x0_no_nul_name_x", 16);
			snprintf(what, sizeof(what), "%s, an interface name without a NUL", t->name);
			res_n++;
			res_ok += refused_kept(fd, &seq, &h, body, t->size, what);
		}
		/* Bodies a byte short and a byte long: a protocol error. */
		if (t->size) {
			len_n++;
			len_ok += length_dropped(path, t, t->size - 1);
		}
		len_n++;
		len_ok += length_dropped(path, t, t->size + 1);
	}
	kept = call(fd, ++seq, UNETD_REQ_HELLO, &hello, sizeof(hello), REPLY_MS, &r) == 1 &&
	       !r.h.err;
	close(fd);
	printf("strict reserved refused=%ld of %ld clean=%ld of %ld length dropped=%ld of %ld "
	       "kept=%d\n",
	       res_ok, res_n, ctl_ok, ctl_n, len_ok, len_n, kept);
	return res_ok == res_n && ctl_ok == ctl_n && len_ok == len_n && kept;
}
