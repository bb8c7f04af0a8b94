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

#include <linux/capability.h>
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

/* CAP_NET_ADMIN in the process's effective set, and its effective uid
 * (as the daemon sees it). */
static int peer_caps(const struct unetd_client *c, bool *net_admin, uint32_t *euid)
{
	char buf[4096], *p;
	unsigned long long eff;
	unsigned int r, e;
	int err = peer_read(c, "status", buf, sizeof(buf));

	if (err)
		return err;
	p = strstr(buf, "\nUid:");
	if (!p || sscanf(p + 5, "%u %u", &r, &e) != 2)
		return -EIO;
	p = strstr(buf, "\nCapEff:");
	if (!p || sscanf(p + 8, "%llx", &eff) != 1)
		return -EIO;
	*net_admin = eff & (1ull << CAP_NET_ADMIN);
	*euid = e;
	return 0;
}

/*
 * Whether the connecting process may administer the network namespace
 * netns_fd: it is the process's own, or the process holds CAP_NET_ADMIN
 * in the user namespace that owns it -- its own user namespace with the
 * capability in its effective set, or one that it (its euid) created
 * below its own, where it holds every capability.  This is the kernel's
 * own rule for acting in a namespace (capable in its owner), applied to
 * the client, so the daemon does in a namespace only what the client
 * could do there itself.
 */
int unetd_peer_may_admin_netns(const struct unetd_client *c, int netns_fd, char *msg, size_t msglen)
{
	uint64_t target = 0, own = 0, user_ino = 0;
	int fd, cur = -1, user = -1, err;
	bool net_admin;
	uint32_t euid;

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
	user = peer_open(c, "ns/user");
	cur = ioctl(netns_fd, NS_GET_USERNS);
	if (user < 0 || cur < 0 || ns_ino(user, &user_ino) || peer_caps(c, &net_admin, &euid))
		goto out;
	for (int depth = 0; depth < MAX_USERNS_DEPTH; depth++) {
		uint64_t ino = 0, parent_ino = 0;
		uid_t owner;
		int parent;

		if (ns_ino(cur, &ino))
			break;
		if (ino == user_ino) {
			if (net_admin)
				err = 0;
			break;
		}
		parent = ioctl(cur, NS_GET_PARENT);
		if (parent < 0)
			break; /* the initial user namespace: not below the client's */
		if (!ns_ino(parent, &parent_ino) && parent_ino == user_ino &&
		    !ioctl(cur, NS_GET_OWNER_UID, &owner) && owner == euid) {
			close(parent);
			err = 0; /* created by the client: every capability in it */
			break;
		}
		close(cur);
		cur = parent;
	}
out:
	if (err)
		snprintf(msg, msglen,
			 "uid %u may not administer that network namespace (not its own, no CAP_NET_ADMIN over it)",
			 c->uid);
	if (cur >= 0)
		close(cur);
	if (user >= 0)
		close(user);
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
