/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz.h - what the parts of unetd-fuzz share: the seeded random stream,
 * the daemon's socket (wire.c), the fuzz of routable channel opens
 * (chan.c), the strictness checks (strict.c) and the flood (flood.c).
 */
#ifndef UNETD_FUZZ_H
#define UNETD_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/unetd_proto.h"

/* The one random stream of a run (xorshift64): the seed makes a run. */
extern uint64_t fuzz_seed;
uint32_t rnd(void);

int connect_to(const char *path);
/* Send len bytes (one packet), with an fd attached if with_fd: 0 or -errno. */
int send_req(int fd, const void *buf, size_t len, bool with_fd);

/* A reply: its header, and its body (cut to what fits). */
struct fuzz_reply {
	struct unetd_rep_hdr h;
	uint8_t body[sizeof(struct unetd_ep_created)];
	size_t body_len;
};

/* Wait up to ms for a reply: 1 got one (its fds closed), 0 none, -1 the
 * connection is gone.  r may be NULL. */
int get_reply(int fd, int ms, struct fuzz_reply *r);

/* A well-formed request of type with body on fd, and its reply (the one
 * with its seq; earlier ones are skipped), within ms: 1, 0 (no reply in
 * time) or -1 (the connection is gone). */
int call(int fd, uint32_t seq, uint16_t type, const void *body, uint32_t len, int ms,
	 struct fuzz_reply *r);

/* ---- chan.c: well-formed routable channel opens with hostile fields ---- */

struct chan_fuzz;

struct chan_fuzz_opts {
	const char *path;   /* the daemon's socket */
	const char *iface;  /* the device the endpoints are on (this namespace's) */
	uint16_t tag_lo, tag_hi; /* the tags the policy grants the caller; 0, 0: every one */
	uint32_t quota;	    /* the policy's channel quota for the caller; 0: none known */
	uint32_t npeers4, npeers6;
	uint32_t peers4[4];	 /* network order: on-link peers that answer */
	uint8_t peers6[4][16];
};

/* The fuzz's own connection with its endpoints, or NULL (the reason on
 * stderr). */
struct chan_fuzz *chan_fuzz_new(const struct chan_fuzz_opts *o);
/* One step: an open of either family judged, or a close, or an endpoint
 * given back and made again. */
void chan_fuzz_step(struct chan_fuzz *f);
/* An endpoint handle another connection of ours was given: not the
 * fuzz's to use. */
void chan_fuzz_foreign(struct chan_fuzz *f, uint32_t ep);
/* Prints the counts; true if every check held. */
bool chan_fuzz_end(struct chan_fuzz *f);

/* ---- strict.c: judged strictness of the protocol ----------------------- */

/* --strict: every reserved byte of every request type refused (EINVAL,
 * the connection kept), every body a byte short or long dropped.  Prints
 * a summary line; true if every check held. */
bool strict_run(const char *path);

/* ---- flood.c: a flood of refused requests ------------------------------ */

/* --flood: refused CH_OPEN_IPV4s back to back for seconds (count at
 * most) on a connection of their own.  Returns how many were answered
 * (-1: no connection), *refused how many of them were refused. */
long flood_run(const char *path, long seconds, long count, long *refused);

#endif /* UNETD_FUZZ_H */
