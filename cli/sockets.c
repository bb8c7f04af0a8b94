/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sockets.c - unetctl sockets: the U-Net sockets of processes running
 * under unet-run, from the file each publishes (run/run_sockets.h).
 *
 * The files' directory is writable by everyone, so nothing in it is
 * believed for what it claims: a file is read only when it is a regular
 * file of the exact size, owned by the owner of the process it names,
 * still locked by that process, and its header agrees with the process
 * (pid, owner, start time); every slot is checked field by field.  A
 * user who is not root reads only their own files (they are 0600).  Only
 * names a publisher makes are read (PID or PID.N, canonical), and a
 * process is listed from its first believed file only.  Its name
 * (comm) is its owner's to choose: the emitter escapes it.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../run/run_sockets.h"
#include "unetctl.h"

/* Field 22 of /proc/PID/stat (the start time), 0 when unknown. */
static uint64_t proc_starttime(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	for (int f = 2; p && f < 22; f++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &v);
	return v;
}

static void proc_comm(int pid, char *comm, size_t n)
{
	char path[64];
	ssize_t r;
	int fd;

	snprintf(comm, n, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	r = read(fd, comm, n - 1);
	close(fd);
	if (r <= 0) {
		snprintf(comm, n, "?");
		return;
	}
	/* The kernel ends it with one newline; any before are the name's. */
	if (comm[r - 1] == '\n')
		r--;
	comm[r] = 0;
}

static void emit_addr(const char *key, uint32_t addr, uint16_t port)
{
	char ip[INET_ADDRSTRLEN], s[INET_ADDRSTRLEN + 8];

	inet_ntop(AF_INET, &addr, ip, sizeof(ip));
	snprintf(s, sizeof(s), "%s:%u", ip, ntohs(port));
	em_str(key, s);
}

static const char *state_name(uint8_t kind, uint8_t state)
{
	if (state == RUN_SOCK_LISTENING && kind == RUN_SOCK_TCP)
		return "listening";
	if (state == RUN_SOCK_CONNECTED)
		return "connected";
	if (state == RUN_SOCK_BOUND && kind == RUN_SOCK_UDP)
		return "bound";
	return NULL;
}

/* One slot, read again from the file until no writer was inside it
 * (a few tries; a slot changing all the time is skipped).  Returns true
 * with *out when it holds a socket. */
static bool read_slot(int fd, unsigned int i, struct run_sockets_slot *out)
{
	off_t off = (off_t)offsetof(struct run_sockets_file, slot) + (off_t)i * (off_t)sizeof(*out);

	for (int tries = 0; tries < 4; tries++) {
		struct run_sockets_slot again;

		if (pread(fd, out, sizeof(*out), off) != (ssize_t)sizeof(*out) || (out->seq & 1))
			continue;
		if (pread(fd, &again, sizeof(again), off) != (ssize_t)sizeof(again) ||
		    again.seq != out->seq)
			continue;
		return out->kind != RUN_SOCK_FREE;
	}
	return false;
}

/* The process pid's file, if it passes for that process's: true when it
 * did (whether or not it holds sockets). */
static bool list_file(int dirfd, const char *name, int pid)
{
	struct run_sockets_file hdr;
	struct stat st, pst;
	char proc[64], comm[32];
	bool believed = false;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false; /* another user's (0600), or gone */
	snprintf(proc, sizeof(proc), "/proc/%d", pid);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != (off_t)sizeof(hdr) ||
	    stat(proc, &pst) < 0 || pst.st_uid != st.st_uid)
		goto out;
	/* The process holds the lock while it lives (and until exec). */
	if (flock(fd, LOCK_SH | LOCK_NB) == 0 || errno != EWOULDBLOCK)
		goto out;
	if (pread(fd, &hdr, offsetof(struct run_sockets_file, slot), 0) !=
		    (ssize_t)offsetof(struct run_sockets_file, slot) ||
	    hdr.magic != RUN_SOCKETS_MAGIC || hdr.version != RUN_SOCKETS_VERSION ||
	    hdr.pid != pid || hdr.uid != st.st_uid || hdr.nslots != RUN_SOCKETS_SLOTS ||
	    hdr.starttime == 0 || hdr.starttime != proc_starttime(pid))
		goto out;
	believed = true;
	proc_comm(pid, comm, sizeof(comm));
	for (unsigned int i = 0; i < RUN_SOCKETS_SLOTS; i++) {
		struct run_sockets_slot s;
		const char *state;

		if (!read_slot(fd, i, &s))
			continue;
		state = state_name(s.kind, s.state);
		if ((s.kind != RUN_SOCK_UDP && s.kind != RUN_SOCK_TCP) || !state ||
		    s.fd > (uint32_t)INT32_MAX)
			continue;
		em_open(NULL, EM_LINE);
		em_u64("pid", (uint64_t)pid);
		em_u64("uid", st.st_uid);
		em_str("comm", comm);
		em_u64("fd", s.fd);
		em_str("kind", s.kind == RUN_SOCK_UDP ? "udp" : "tcp");
		em_str("state", state);
		emit_addr("local", s.local_addr, s.local_port);
		emit_addr("peer", s.peer_addr, s.peer_port);
		em_u64(s.kind == RUN_SOCK_UDP ? "rx_datagrams" : "rx_bytes", s.rx);
		em_u64(s.kind == RUN_SOCK_UDP ? "tx_datagrams" : "tx_bytes", s.tx);
		em_close();
	}
out:
	close(fd);
	return believed;
}

/* A file found in the directory, by the parts of its name. */
struct sockets_file {
	int32_t pid;
	uint32_t alt; /* N of PID.N, 0 for PID */
};

static int cmp_file(const void *a, const void *b)
{
	const struct sockets_file *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->alt > y->alt) - (x->alt < y->alt);
}

int do_sockets(const struct cmd *c, int argc, char **argv)
{
	const char *pid_s = NULL;
	const struct optdef defs[] = { { "--pid", &pid_s }, { NULL, NULL } };
	unsigned long want = 0;
	struct dirent *de;
	struct stat st;
	struct sockets_file *files = NULL;
	size_t n = 0, cap = 0;
	char *pos[1];
	int npos, r, dfd = -1;
	DIR *d;

	r = parse_args(c, argc, argv, defs, pos, 0, 0, &npos);
	if (r)
		return r < 0;
	if (pid_s && parse_uint(pid_s, 1, INT32_MAX, &want))
		return fail("invalid --pid: %s", pid_s);
	d = opendir(RUN_SOCKETS_DIR);
	if (!d && errno != ENOENT)
		return fail("%s: %s", RUN_SOCKETS_DIR, strerror(errno));
	if (d) {
		dfd = dirfd(d);
		/* Only root's sticky directory, as the library trusts it. */
		if (fstat(dfd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 07777) != 01777) {
			closedir(d);
			return fail("%s is not a root-owned directory of mode 1777", RUN_SOCKETS_DIR);
		}
		while ((de = readdir(d))) {
			uint32_t alt;
			int32_t pid = run_sockets_name_parse(de->d_name, &alt);

			if (pid < 0 || (want && (unsigned long)pid != want))
				continue;
			if (n == cap) {
				struct sockets_file *v = realloc(files, (cap ? cap * 2 : 64) * sizeof(*v));

				if (!v) {
					free(files);
					closedir(d);
					return fail("%s", strerror(ENOMEM));
				}
				files = v;
				cap = cap ? cap * 2 : 64;
			}
			files[n++] = (struct sockets_file){ .pid = pid, .alt = alt };
		}
		qsort(files, n, sizeof(*files), cmp_file);
	}
	em_open_array("sockets");
	for (size_t i = 0; i < n; i++) {
		char name[RUN_SOCKETS_NAME_MAX];

		run_sockets_name(name, files[i].pid, files[i].alt);
		if (!list_file(dfd, name, files[i].pid))
			continue;
		/* Listed: the process's other names (a link) are passed over. */
		while (i + 1 < n && files[i + 1].pid == files[i].pid)
			i++;
	}
	em_close_array();
	free(files);
	if (d)
		closedir(d);
	return 0;
}
