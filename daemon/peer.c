/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peer.c - what the daemon knows of the process at the other end of a
 * connection, from the kernel and never from anything the client says:
 * a pidfd of the very process that connected (SO_PEERPIDFD), and through
 * it that process's namespaces, capabilities and limits.
 *
 * /proc/PID names whatever process has PID now; a pid may be reused once
 * its process is gone.  Every read of /proc/PID here is therefore followed
 * by a check that the pidfd's process is still alive: while it lives, PID
 * is still its, so what was read was its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include "unetd.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define MAX_USERNS_DEPTH 33 /* the kernel's limit is 32 nested user namespaces */

int unetd_peer_open(int fd, struct unetd_client *c)
{
	socklen_t len = sizeof(c->pidfd);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &c->pidfd, &len) == 0 && c->pidfd >= 0)
		return 0;
	/* Kernels before 6.5: the pid at connect time.  The connection is
	 * still open, so its process is usually alive and this is it; the
	 * liveness checks below hold either way. */
	c->pidfd = pidfd_open((pid_t)c->pid, 0);
	return c->pidfd < 0 ? -errno : 0;
}

static int peer_alive(const struct unetd_client *c)
{
	return pidfd_send_signal(c->pidfd, 0, NULL, 0) ? -ESRCH : 0;
}

/* open("/proc/PID/what") of the connecting process itself. */
static int peer_open(const struct unetd_client *c, const char *what)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/%s", c->pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (peer_alive(c)) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

/* The text of /proc/PID/what (NUL-terminated) in buf. */
static int peer_read(const struct unetd_client *c, const char *what, char *buf, size_t size)
{
	int fd = peer_open(c, what);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	/* Alive after the read too: the text was its own. */
	return peer_alive(c);
}

static int ns_ino(int fd, uint64_t *ino)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

/*
 * Whether the connecting process may administer the network namespace
 * netns_fd: it is the namespace the process is in, or the namespace is
 * owned by a user namespace that the client's user created -- the
 * outermost user namespace below ours on its chain is owned by the
 * connection's uid (SO_PEERCRED, fixed at connect).  The creator of a user
 * namespace holds every capability in it and in all below it: the
 * kernel's own rule, applied to the client's uid.
 *
 * Never judged from the process's capabilities or user namespace now:
 * a client can connect, then exec a setuid program (its pid then shows
 * root's capabilities in the initial user namespace) and send the request
 * from a child that kept the connection.  Root (uid 0) may use any.
 */
int unetd_peer_may_admin_netns(const struct unetd_client *c, int netns_fd, char *msg, size_t msglen)
{
	uint64_t target = 0, own = 0;
	int fd, cur, err;

	if (c->uid == 0)
		return 0;
	fd = peer_open(c, "ns/net");
	if (fd < 0) {
		snprintf(msg, msglen, "cannot see the network namespace of pid %u: %s", c->pid,
			 strerror(-fd));
		return -EPERM;
	}
	err = ns_ino(fd, &own) ?: ns_ino(netns_fd, &target);
	close(fd);
	if (err)
		return err;
	if (own == target)
		return 0;

	err = -EPERM;
	cur = ioctl(netns_fd, NS_GET_USERNS);
	for (int depth = 0; cur >= 0 && depth < MAX_USERNS_DEPTH; depth++) {
		int parent = ioctl(cur, NS_GET_PARENT);
		uid_t owner;

		if (parent < 0)
			break; /* cur is our own (the initial) user namespace */
		/* Outermost below ours: its parent has no parent. */
		{
			int grand = ioctl(parent, NS_GET_PARENT);

			if (grand < 0) {
				if (!ioctl(cur, NS_GET_OWNER_UID, &owner) && owner == c->uid)
					err = 0;
				close(parent);
				break;
			}
			close(grand);
		}
		close(cur);
		cur = parent;
	}
	if (cur >= 0)
		close(cur);
	if (err)
		snprintf(msg, msglen,
			 "uid %u may not administer that network namespace (not its own, nor under a user namespace it created)",
			 c->uid);
	return err;
}

int unetd_peer_memlock(const struct unetd_client *c, uint64_t *lim)
{
	char buf[4096], soft[32], *p;
	int err = peer_read(c, "limits", buf, sizeof(buf));

	if (err)
		return err;
	p = strstr(buf, "Max locked memory");
	if (!p || sscanf(p + 17, "%31s", soft) != 1)
		return -EIO;
	*lim = !strcmp(soft, "unlimited") ? UINT64_MAX : strtoull(soft, NULL, 10);
	return 0;
}
