/* SPDX-License-Identifier: BSD-2-Clause */
/* forklisten.c - a forked child's copy of a U-Net listener, the child's
 * side (forklisten.h).  Raw system calls: the channel is a kernel
 * socket, and none of this is the program's to intercept. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "forkrelay.h"
#include "forklisten.h"
#include "log.h"
#include "signals.h"

/* The copies not announced yet: a descriptor and the socket it was
 * (a later open may reuse a closed copy's number).  Changed under
 * pending_lock; fd and fl_unannounced are read without it first, so
 * that a child that never accepts (a forking server's per-connection
 * child, whose copy stays unannounced) pays no lock on its polls. */
struct unannounced {
	int fd;
	dev_t dev;
	ino_t ino;
};

static struct unannounced pending[RELAY_MAX_PER_FORK];
int fl_unannounced;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

void fl_child_forked(void)
{
	/* Fork's child handler: one thread; the lock may have been held by
	 * another thread of the parent's, which the child does not have. */
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	pending_lock = fresh;
}

void fl_child_add(int fd)
{
	int n = fl_unannounced;
	struct stat st;

	if (n == RELAY_MAX_PER_FORK || fstat(fd, &st) < 0)
		return;
	pending[n] = (struct unannounced){ fd, st.st_dev, st.st_ino };
	__atomic_store_n(&fl_unannounced, n + 1, __ATOMIC_RELEASE);
}

/* Whether fd is among the unannounced, without the lock (a hint: the
 * caller looks again under it). */
static bool maybe_pending(int fd)
{
	int n = __atomic_load_n(&fl_unannounced, __ATOMIC_ACQUIRE);

	for (int i = 0; i < n; i++)
		if (__atomic_load_n(&pending[i].fd, __ATOMIC_RELAXED) == fd)
			return true;
	return false;
}

/* A note to the relay.  The channel never fills this way: the relay
 * reads it at every turn, and at most FL_PENDING handovers, each
 * answered by one note, are outstanding (so a non-blocking channel's
 * EAGAIN is not expected here). */
static int note(int fd, uint32_t kind, uint32_t id)
{
	struct fl_note n = { kind, id };
	long r;

	do
		r = syscall(SYS_sendto, fd, &n, sizeof(n), MSG_NOSIGNAL, NULL, 0);
	while (r < 0 && errno == EINTR);
	return r == (long)sizeof(n) ? 0 : -1;
}

void fl_child_use(int fd)
{
	struct stat st;
	bool found = false;

	if (!maybe_pending(fd))
		return;
	run_lock(&pending_lock);
	for (int i = 0, n = fl_unannounced; i < n; i++) {
		if (pending[i].fd != fd)
			continue;
		found = fstat(fd, &st) == 0 && st.st_dev == pending[i].dev &&
			st.st_ino == pending[i].ino;
		/* Announced now, or not the copy any more: either way done
		 * with (the last entry moves into its place). */
		__atomic_store_n(&pending[i].fd, pending[n - 1].fd, __ATOMIC_RELAXED);
		pending[i].dev = pending[n - 1].dev;
		pending[i].ino = pending[n - 1].ino;
		__atomic_store_n(&fl_unannounced, n - 1, __ATOMIC_RELEASE);
		break;
	}
	run_unlock(&pending_lock);
	if (!found)
		return;
	if (note(fd, FL_NOTE_ACCEPTS, (uint32_t)getpid()) < 0)
		run_log("fd %d tcp listener (the parent's): cannot tell the parent's relay this "
			"process accepts: %s",
			fd, strerror(errno));
	else
		run_log("fd %d tcp listener (the parent's): this process accepts; the parent's "
			"relay hands connections over",
			fd);
}

void fl_child_poll(const void *pollfds, unsigned long n)
{
	const struct pollfd *p = pollfds;

	for (unsigned long i = 0; i < n && fl_child_unannounced(); i++)
		if (p[i].fd >= 0 && (p[i].events & POLLIN))
			fl_child_use(p[i].fd);
}

void fl_child_select(int nfds, const void *readfds)
{
	const fd_set *r = readfds;

	if (!r)
		return;
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE && fl_child_unannounced(); fd++)
		if (FD_ISSET(fd, r))
			fl_child_use(fd);
}

int fl_accept(int fd, int flags, struct sockaddr_in *local, struct sockaddr_in *peer)
{
	fl_child_use(fd);
	for (;;) {
		struct fl_handover h;
		union {
			struct cmsghdr c;
			char buf[CMSG_SPACE(sizeof(int))];
		} ctl;
		struct iovec v = { &h, sizeof(h) };
		struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl.buf,
				    .msg_controllen = sizeof(ctl.buf) };
		struct cmsghdr *c;
		int nfd = -1;
		long n;

		/* Blocking or not as the channel is: the program's fcntl and
		 * ioctl(FIONBIO) on its listener reach the channel. */
		n = syscall(SYS_recvmsg, fd, &m, (flags & SOCK_CLOEXEC) ? MSG_CMSG_CLOEXEC : 0);
		if (n < 0)
			return -1; /* EAGAIN, EINTR as the kernel's accept */
		if (n == 0) {
			/* The parent's relay is gone (the parent exited): the
			 * listener with it. */
			errno = EINVAL;
			return -1;
		}
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
			    c->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(&nfd, CMSG_DATA(c), sizeof(nfd));
		if (n == (long)sizeof(h) && nfd < 0 && (m.msg_flags & MSG_CTRUNC)) {
			/* No descriptor free for it (RLIMIT_NOFILE): the kernel
			 * closed the child's end.  Say it was taken, so that the
			 * relay sees that end closed and ends the connection,
			 * rather than wait for us forever. */
			note(fd, FL_NOTE_TAKEN, h.id);
			errno = EMFILE;
			return -1;
		}
		if (n != (long)sizeof(h) || nfd < 0 || (m.msg_flags & MSG_CTRUNC)) {
			/* Not one of the relay's messages whole: the channel
			 * is ours alone, so this is a bug; skip it. */
			if (nfd >= 0)
				syscall(SYS_close, nfd);
			run_log("fd %d tcp listener (the parent's): a malformed handover skipped", fd);
			continue;
		}
		if (note(fd, FL_NOTE_TAKEN, h.id) < 0) {
			/* The relay cannot start the connection for us. */
			int err = errno;

			syscall(SYS_close, nfd);
			errno = err == EPIPE ? ECONNABORTED : err;
			return -1;
		}
		if (flags & SOCK_NONBLOCK)
			syscall(SYS_fcntl, nfd, F_SETFL, O_NONBLOCK);
		*local = h.local;
		*peer = h.peer;
		return nfd;
	}
}
