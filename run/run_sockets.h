/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * run_sockets.h - the file in which a process under unet-run publishes
 * its U-Net sockets, and which `unetctl sockets` reads
 * (docs/unet-run.md, "The socket listing"; docs/unetctl.md).
 *
 * One file per process: RUN_SOCKETS_DIR/PID, or RUN_SOCKETS_DIR/PID.N
 * when PID is another user's file (run_sockets_name below), created by
 * the process itself with mode 0600 (only its owner and root read it) in a
 * root-owned sticky directory, mapped shared and updated in place; the
 * process holds an exclusive flock on it while it lives (the descriptor
 * is close-on-exec, so exec releases it).  A reader believes a file only
 * when it is a regular file of exactly the size below, its owner is the
 * owner of /proc/PID, the header names that PID, owner and the process's
 * start time, and the lock is held: anyone can make a file under the
 * directory, but not one that passes for another user's process.  A
 * reader lists a process from one file at most (a user may give their
 * own process's file a second name, a link).  Same host, so native byte order; addresses and ports in network order.
 */
#ifndef UNET_RUN_SOCKETS_H
#define UNET_RUN_SOCKETS_H

#include <stdint.h>
#include <stdio.h>

#define RUN_SOCKETS_DIR "/run/unet-run"
#define RUN_SOCKETS_MAGIC 0x53524e55u /* "UNRS" */
#define RUN_SOCKETS_VERSION 1u
#define RUN_SOCKETS_SLOTS 1024u

enum run_sock_kind { RUN_SOCK_FREE = 0, RUN_SOCK_UDP = 1, RUN_SOCK_TCP = 2 };

enum run_sock_state {
	RUN_SOCK_BOUND = 1,	/* UDP: bound, not connected */
	RUN_SOCK_CONNECTED = 2, /* UDP connected, TCP connection */
	RUN_SOCK_LISTENING = 3, /* TCP listener */
};

struct run_sockets_slot {
	/* Odd while the writer changes the slot: a reader that sees it odd,
	 * or changed across its copy, skips or retries the slot. */
	uint32_t seq;
	uint32_t fd;
	uint8_t kind;  /* enum run_sock_kind */
	uint8_t state; /* enum run_sock_state */
	uint16_t local_port, peer_port;
	uint16_t pad;
	uint32_t local_addr, peer_addr;
	uint64_t rx, tx; /* UDP: datagrams; TCP: bytes */
};

struct run_sockets_file {
	uint32_t magic, version;
	int32_t pid;
	uint32_t uid;	    /* the process's effective uid at creation */
	uint64_t starttime; /* field 22 of /proc/PID/stat */
	uint32_t nslots;    /* RUN_SOCKETS_SLOTS */
	uint32_t pad;
	struct run_sockets_slot slot[RUN_SOCKETS_SLOTS];
};

/* A file's name: the pid, or the pid and a random N (1..UINT32_MAX) when
 * the pid's name is taken by a file the process may not replace (a
 * squatter's, or a dead process's of another user).  Both in canonical
 * decimal, so one file has one name a reader accepts. */
#define RUN_SOCKETS_NAME_MAX 24

static inline void run_sockets_name(char name[RUN_SOCKETS_NAME_MAX], int32_t pid, uint32_t alt)
{
	if (alt)
		snprintf(name, RUN_SOCKETS_NAME_MAX, "%d.%u", (int)pid, (unsigned int)alt);
	else
		snprintf(name, RUN_SOCKETS_NAME_MAX, "%d", (int)pid);
}

/* The canonical decimal number at *s of at most max (digits only, no
 * leading zero, at least 1), *s moved past it; 0 when there is none. */
static inline uint64_t run_sockets_name_number(const char **s, uint64_t max)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '1' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > max)
			return 0;
	}
	*s = p;
	return v;
}

/* The pid a name is made of, with *alt its N (0 for the plain pid's
 * name); -1 for every other name ("0PID", " PID", "PID.0", "PID.N.M"...),
 * which no publisher makes. */
static inline int32_t run_sockets_name_parse(const char *name, uint32_t *alt)
{
	uint64_t pid = run_sockets_name_number(&name, INT32_MAX), n = 0;

	if (!pid)
		return -1;
	if (*name == '.') {
		name++;
		n = run_sockets_name_number(&name, UINT32_MAX);
		if (!n)
			return -1;
	}
	if (*name)
		return -1;
	*alt = (uint32_t)n;
	return (int32_t)pid;
}

#endif /* UNET_RUN_SOCKETS_H */
