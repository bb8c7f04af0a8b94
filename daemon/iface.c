/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface.c - the interfaces unetd serves.
 *
 * An interface is set up when a client first asks for it: the XDP
 * program attached (if it is not), its maps opened (the daemon claims
 * slots and adds channels for direct grants through them), and the
 * daemon's own real endpoint bound on every queue not set aside for
 * direct grants (--grant-queues): the one emulated endpoints are served
 * from.  A queue has one UMEM, so a queue is either the daemon's or one
 * grant's, never both.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <linux/nsfs.h>

#include "core/objects.h" /* unet_endpoint_dup_sockets */
#include "unetd.h"

/* Queues of the device, as a mask (the library serves 16 at most). */
static uint32_t device_queues(struct unetd_iface *f)
{
	struct unet_iface_status st;

	if (unet_iface__status(f->maps, &st) || !st.nqueues)
		return 1;
	return st.nqueues >= 32 ? UINT32_MAX : (1u << st.nqueues) - 1;
}

static int real_endpoint(struct unetd *d, struct unetd_iface *f, uint32_t mask)
{
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	struct epoll_event ev;

	o.pin_root = d->pin_root;
	o.kind = UNET_ENDPOINT_DIRECT; /* the daemon's own: never ask a daemon */
	o.queue_mask = mask;
	/* Clients' frames come built, checksums and all: the room TX
	 * metadata takes in front of a frame would only cost a move of
	 * every relayed frame (datapath.c). */
	o.no_tx_csum_offload = true;
	f->ep = unet_endpoint__create(f->ifname, &o);
	if (!f->ep)
		return -errno;
	unet_endpoint__info(f->ep, &f->info);
	f->src.kind = UNETD_SRC_REAL;
	f->src.obj = f;
	ev.events = EPOLLIN;
	ev.data.ptr = &f->src;
	if (unet_endpoint__fd(f->ep) < 0 ||
	    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, unet_endpoint__fd(f->ep), &ev)) {
		int err = -errno;

		unet_endpoint__destroy(f->ep);
		f->ep = NULL;
		return err;
	}
	return 0;
}

/* ---- Network namespaces ------------------------------------------------ */

static int ns_of(int fd, struct unetd_ns *ns)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	ns->dev = st.st_dev;
	ns->ino = st.st_ino;
	return 0;
}

static bool ns_equal(const struct unetd_ns *a, const struct unetd_ns *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* Whether fd lies on nsfs, the filesystem of namespace files (one
 * superblock: the device of our own /proc/self/ns/net).  statx with
 * AT_STATX_DONT_SYNC answers from what the kernel has cached: a network
 * filesystem or FUSE is not asked (a FUSE server could make it wait). */
static bool on_nsfs(int fd)
{
	struct statx sx, own;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO, &sx) ||
	    statx(AT_FDCWD, "/proc/self/ns/net", AT_STATX_DONT_SYNC, STATX_INO, &own))
		return false;
	return sx.stx_dev_major == own.stx_dev_major && sx.stx_dev_minor == own.stx_dev_minor;
}

int unetd_netns_check(int fd, struct unetd_ns *ns)
{
	if (fd < 0)
		return -ENOENT; /* the caller uses the daemon's own */
	/* What the descriptor is, before anything that could wait on it:
	 * an ioctl or fstat on a client's file could wait on its
	 * filesystem (FUSE) or device.  Only a namespace file gets the
	 * ioctl that says which kind of namespace it is. */
	if (!on_nsfs(fd))
		return -EINVAL;
	if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET)
		return -EINVAL;
	return ns_of(fd, ns);
}

int unetd_netns_enter(struct unetd *d, int fd, const struct unetd_ns *ns)
{
	if (fd < 0 || ns_equal(ns, &d->own_netns))
		return 0;
	return setns(fd, CLONE_NEWNET) ? -errno : 0;
}

void unetd_netns_leave(struct unetd *d, int fd, const struct unetd_ns *ns)
{
	if (fd < 0 || ns_equal(ns, &d->own_netns))
		return;
	/* Coming back cannot fail for a namespace we hold an fd of; if it
	 * did, every later request would be served in the wrong one. */
	if (setns(d->own_netns_fd, CLONE_NEWNET)) {
		unetd_log(UNET_LOG_ERROR, "cannot return to our network namespace: %s",
			  strerror(errno));
		abort();
	}
}

/* ---- Interfaces ------------------------------------------------------------ */

static struct unetd_iface *iface_new(struct unetd *d, const struct unetd_client *c,
				     const char *ifname, int *err);

/*
 * Interfaces are per (network namespace, name): a daemon serves devices
 * in every namespace its clients send it (EP_CREATE carries the client's
 * own), entering it to attach, open the device's sockets and bind them;
 * what it made there stays tied to that namespace.
 */
struct unetd_iface *unetd_iface_get(struct unetd *d, const struct unetd_client *c,
				    const char *ifname, int *err)
{
	const struct unetd_ns *ns = c->netns_fd >= 0 ? &c->netns : &d->own_netns;
	struct unetd_iface *f;

	for (f = d->ifaces; f; f = f->next)
		if (!strcmp(f->ifname, ifname) && ns_equal(&f->ns, ns))
			return f;
	/* The same device's last interface may still be letting go of its
	 * queues and program (teardown.c). */
	*err = unetd_teardown_pending(ns, ifname);
	if (*err)
		return NULL;
	*err = unetd_netns_enter(d, c->netns_fd, &c->netns);
	if (*err)
		return NULL;
	f = iface_new(d, c, ifname, err);
	unetd_netns_leave(d, c->netns_fd, &c->netns);
	if (!f)
		return NULL;
	f->ns = *ns;
	/* Kept to come back to the device's namespace later (UDP ports). */
	f->ns_fd = c->netns_fd >= 0 ? fcntl(c->netns_fd, F_DUPFD_CLOEXEC, 0) : -1;
	f->uid = c->uid;
	return f;
}

static struct unetd_iface *iface_new(struct unetd *d, const struct unetd_client *c,
				     const char *ifname, int *err)
{
	UNET_OPTS_INIT(unet_iface_opts, io);
	struct unetd_iface *f;
	uint32_t all;

	f = calloc(1, sizeof(*f));
	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	snprintf(f->ifname, sizeof(f->ifname), "%s", ifname);
	f->src.kind = UNETD_SRC_REAL;
	f->src.obj = f;
	f->ifindex = (int)if_nametoindex(ifname);
	io.pin_root = d->pin_root;
	if (!f->ifindex) {
		*err = -ENODEV;
		goto fail;
	}
	{
		/* Attached already (by root, in its own namespace)?  Then it
		 * is not ours to detach later. */
		struct unet_iface *m = unet_iface__open(ifname, &io);

		f->attached_for_client = !m && c->netns_fd >= 0 && !ns_equal(&c->netns, &d->own_netns);
		unet_iface__close(m);
	}
	*err = unet_iface__attach(ifname, UNET_XDP_MODE_AUTO, &io);
	if (*err)
		goto fail;
	f->maps = unet_iface__open(ifname, &io);
	if (!f->maps) {
		*err = -errno;
		goto fail;
	}
	all = device_queues(f);
	f->grant_mask = d->grant_queues & all;
	if (all & ~f->grant_mask) {
		*err = real_endpoint(d, f, all & ~f->grant_mask);
		if (*err)
			goto fail;
	}
	if (f->ep && d->iface_layer) {
		/* Routes the UDP datagrams and ARP of emulated endpoints. */
		*err = unet_layer_attach(f->ep, d->iface_layer, f);
		if (*err)
			goto fail;
	}
	f->next = d->ifaces;
	d->ifaces = f;
	unetd_log_user(c->user ? &c->user->log : NULL, c->uid, UNET_LOG_INFO,
		       "%s: serving (emulated on queues %#x, direct grants on %#x)%s", ifname,
		       f->ep ? f->info.queue_mask : 0, f->grant_mask,
		       c->netns_fd >= 0 ? " in the client's network namespace" : "");
	return f;
fail:
	unet_endpoint__destroy(f->ep);
	unet_iface__close(f->maps);
	free(f);
	return NULL;
}

void unetd_iface_put(struct unetd *d, struct unetd_iface *f)
{
	struct unetd_teardown *t;

	if (!f || f->users)
		return;
	for (struct unetd_iface **pp = &d->ifaces; *pp; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	/* What waits on the kernel (the sockets' last close, the detach)
	 * goes to the teardown thread (teardown.c); without memory for
	 * that, it is done here as before. */
	t = unetd_teardown_new(&f->ns, f->ifname);
	if (f->ep) {
		epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, unet_endpoint__fd(f->ep), NULL);
		if (t)
			t->nfds = unet_endpoint_dup_sockets(f->ep, t->fds);
		unet_endpoint__destroy(f->ep);
		f->ep = NULL;
	}
	unet_iface__close(f->maps);
	f->maps = NULL;
	/* In a client's namespace the program and its pins are the
	 * daemon's doing: they go with the interface, or every throwaway
	 * namespace would leave ~12 MB of pinned maps under the pin root,
	 * charged to no one, after the namespace itself is gone. */
	if (t && f->attached_for_client && f->ns_fd >= 0) {
		t->detach = true;
	} else if (f->attached_for_client && !unetd_netns_enter(d, f->ns_fd, &f->ns)) {
		UNET_OPTS_INIT(unet_iface_opts, io);

		io.pin_root = d->pin_root;
		if (unet_iface__detach(f->ifname, &io))
			unetd_log(UNET_LOG_WARN, "%s: detaching in the client's namespace failed",
				  f->ifname);
		unetd_netns_leave(d, f->ns_fd, &f->ns);
	}
	if (t) {
		t->ns_fd = f->ns_fd;
		unetd_teardown_queue(t);
	} else if (f->ns_fd >= 0) {
		close(f->ns_fd);
	}
	f->ns_fd = -1;
	unetd_log_user(unetd_user_log(d, f->uid), f->uid, UNET_LOG_INFO,
		       "%s: no endpoint left: not served any more", f->ifname);
	/* Its socket's event may be in the batch being handled. */
	unetd_defer_free(d, &f->src);
}

void unetd_iface_free_all(struct unetd *d)
{
	while (d->ifaces) {
		struct unetd_iface *f = d->ifaces;

		d->ifaces = f->next;
		unet_endpoint__destroy(f->ep);
		unet_iface__close(f->maps);
		if (f->ns_fd >= 0)
			close(f->ns_fd);
		free(f);
	}
}
