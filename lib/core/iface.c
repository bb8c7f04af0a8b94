/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface.c - the control plane of one interface: attaching the XDP program,
 * its pinned link and maps, and the channel / endpoint tables in them.
 *
 * Layout (docs/control-plane.md):
 *
 *   <pin_root>/<dev>/link             BPF link of the XDP program
 *   <pin_root>/<dev>/unet_channels    HASH  tag -> unet_channel_val
 *   <pin_root>/<dev>/unet_endpoints   HASH  slot -> unet_endpoint_val
 *   <pin_root>/<dev>/unet_chan_stats  PERCPU_ARRAY by tag
 *   <pin_root>/<dev>/unet_if_stats    PERCPU_ARRAY by unet_if_counter
 *   <pin_root>/<dev>/unet_xsks        XSKMAP
 *   <pin_root>/<dev>/unet_faults      ARRAY[1] unet_fault_cfg (test hook)
 *   <pin_root>/<dev>/...              the layers' maps (lib/udp: unet_udp_*,
 *                                     unet_neigh), pinned the same way
 *
 * where <dev> is <ifname>@<inode of the network namespace> (iface_dir):
 * a device is its namespace and its name, never its name alone.
 *
 * The link is pinned last: its pin marks a complete attach.  A pinned
 * link keeps the program attached after the attaching process exits;
 * removing the pin (with no fd left open) detaches it.
 *
 * We attach with a plain BPF link and not through libxdp's multi-program
 * dispatcher: on the kernel we run on (6.18) libxdp 1.3.1 cannot load its
 * dispatcher (EPERM) and falls back to a single program anyway, and a
 * pinned link gives us exactly the lifetime we want.  The cost is that we
 * do not share the device with other XDP programs: attach fails with
 * -EBUSY when one is there.
 */
#include <ctype.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <dirent.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <linux/sockios.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/layer.h"
#include "unet_xdp.skel.h"

_Static_assert((int)UNET_STAT__COUNT == (int)UNET_CTR__COUNT,
	       "unet.h UNET_STAT_* and unet_abi.h UNET_CTR_* must match");

/* The core's own maps; the object may have more (the layers'), and every
 * map it has is pinned by name. */
static const char *const pinned_maps[] = {
	UNET_MAP_CHANNELS, UNET_MAP_ENDPOINTS, UNET_MAP_CHAN_STATS,
	UNET_MAP_IF_STATS, UNET_MAP_XSKS, UNET_MAP_FAULTS,
};
#define N_PINNED_MAPS (sizeof(pinned_maps) / sizeof(pinned_maps[0]))

/* ---- Small helpers ---------------------------------------------------- */

/* opts->pin_root if the caller's struct is big enough to hold it. */
static int opts_pin_root(const struct unet_iface_opts *opts, const char **root)
{
	size_t need = offsetof(struct unet_iface_opts, pin_root) + sizeof(opts->pin_root);

	*root = NULL;
	if (!opts)
		return 0;
	if (opts->sz < sizeof(opts->sz))
		return -EINVAL;
	/* A newer caller may pass fields we do not know: they must be 0. */
	if (opts->sz > sizeof(*opts)) {
		const char *p = (const char *)opts;

		for (size_t i = sizeof(*opts); i < opts->sz; i++)
			if (p[i])
				return -EINVAL;
	}
	if (opts->sz >= need)
		*root = opts->pin_root;
	return 0;
}

const char *unet_pin_root(const char *opt_root)
{
	const char *env;

	if (opt_root && *opt_root)
		return opt_root;
	env = getenv("UNET_PIN_ROOT");
	if (env && *env)
		return env;
	return UNET_DEFAULT_PIN_ROOT;
}

int unet_check_bpffs(const char *path)
{
	char buf[PATH_MAX];
	struct statfs sfs;
	char *slash;

	if (!path || !*path)
		return -EINVAL;
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (;;) {
		if (statfs(buf, &sfs) == 0) {
			if ((unsigned long)sfs.f_type == (unsigned long)BPF_FS_MAGIC)
				return 0;
			unet_log(UNET_LOG_ERROR, "%s is not on a bpffs (needed for %s)", buf,
				 path);
			return -EMEDIUMTYPE;
		}
		if (errno != ENOENT)
			return -errno;
		/* Walk up to the closest existing parent. */
		while ((slash = strrchr(buf, '/')) && slash[1] == '\0' && slash != buf)
			*slash = '\0';
		slash = strrchr(buf, '/');
		if (!slash)
			strcpy(buf, ".");
		else if (slash == buf)
			buf[1] = '\0';
		else
			*slash = '\0';
	}
}

/* The interface name as a path component: also rejects what could never
 * be a network device name. */
static int check_ifname(const char *ifname)
{
	size_t len;

	if (!ifname)
		return -EINVAL;
	len = strlen(ifname);
	if (len == 0 || len >= IF_NAMESIZE || strchr(ifname, '/') || !strcmp(ifname, ".") ||
	    !strcmp(ifname, ".."))
		return -ENODEV;
	return 0;
}


/*
 * Pinned state decides where frames go, so every directory on the way to
 * it must be ours alone: no symlink, owned by root (or by us), and not
 * writable by group or others -- else another user could swap a pin.  A
 * sticky ancestor (a bpffs mounted without mode= comes up 1777, like
 * /tmp) is accepted: nobody else can rename or remove what root made in
 * it.  The pin root and the interface directory themselves must not be
 * writable by others even with the sticky bit.  Components that do not
 * exist yet are skipped: we create them.  Returns 0, -EPERM (unsafe),
 * -EINVAL (a relative path), -errno.
 */
static int check_dir_safe(const char *path, const char *what, bool sticky_ok)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(st.st_mode)) {
		unet_log(UNET_LOG_ERROR, "%s %s is a symbolic link: refused", what, path);
		return -EPERM;
	}
	if (!S_ISDIR(st.st_mode)) {
		unet_log(UNET_LOG_ERROR, "%s %s is not a directory", what, path);
		return -ENOTDIR;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		unet_log(UNET_LOG_ERROR, "%s %s is owned by uid %u, not root: refused", what, path,
			 (unsigned)st.st_uid);
		return -EPERM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(sticky_ok && (st.st_mode & S_ISVTX))) {
		unet_log(UNET_LOG_ERROR,
			 "%s %s is writable by group or others (mode %04o): refused "
			 "(mount bpffs with mode=0700)",
			 what, path, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static int check_path_safe(const char *root, const char *dir)
{
	char buf[PATH_MAX];
	size_t rlen = strlen(root);
	int err;

	if (root[0] != '/') {
		unet_log(UNET_LOG_ERROR, "pin root %s: must be an absolute path", root);
		return -EINVAL;
	}
	if (strlen(dir) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, dir);
	/* Every ancestor of the pin root, from / down. */
	for (size_t i = 1; i < rlen; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = '\0';
		err = check_dir_safe(buf, "directory", true);
		buf[i] = '/';
		if (err)
			return err;
	}
	err = check_dir_safe(root, "pin root", false);
	if (!err && strcmp(root, dir))
		err = check_dir_safe(dir, "pin directory", false);
	return err;
}

/* The inode of the network namespace the calling thread is in (a thread
 * that setns()'d, as unetd does, is in that one). */
static int netns_ino(uint64_t *ino)
{
	struct stat st;

	if (stat("/proc/thread-self/ns/net", &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

/*
 * dir = <root>/<ifname>@<netns>.  Pins are global to the host (every
 * namespace that mounts the same bpffs sees them) while device names
 * are per network namespace: two namespaces that both have eth0 -- two
 * containers, or a user who made one in a namespace of its own to get
 * unetd to act on it -- must never share a directory.  The namespace is
 * the caller's own, so a process only ever finds the pins of devices it
 * can see.  Returns 0 or -errno.
 */
static int iface_dir(const struct unet_iface_opts *opts, const char *ifname, char *dir,
		     size_t size)
{
	uint64_t ns;
	const char *root;
	int err;

	err = opts_pin_root(opts, &root);
	if (err)
		return err;
	err = check_ifname(ifname);
	if (err)
		return err;
	root = unet_pin_root(root);
	err = unet_check_bpffs(root);
	if (err)
		return err;
	err = netns_ino(&ns);
	if (err)
		return err;
	if ((size_t)snprintf(dir, size, "%s/%s@%" PRIu64, root, ifname, ns) >= size)
		return -ENAMETOOLONG;
	return check_path_safe(root, dir);
}

static int pin_path(char *buf, size_t size, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, size, "%s/%s", dir, name) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* mkdir -p, 0700: only root has any business in pin directories. */
static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		if (i < len)
			buf[i] = '/';
	}
	return 0;
}

/* Unlink every non-directory entry of dir.  Returns 0 or -errno. */
static int clean_dir(const char *dir)
{
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) && errno != ENOENT) {
			err = -errno;
			unet_log(UNET_LOG_WARN, "cannot remove %s/%s: %s", dir, de->d_name,
				 strerror(errno));
		}
	}
	closedir(d);
	return err;
}

/* Exclusive lock on <dir> (flock on the directory itself) serialising
 * attach and detach of one interface between processes.  Returns the
 * locked fd, or -errno. */
static int lock_dir(const char *dir)
{
	struct stat a, b;

	for (int tries = 0; tries < 8; tries++) {
		int err, fd;

		err = mkdir_p(dir);
		if (err)
			return err;
		/* O_NOFOLLOW: the directory itself, never a link put there. */
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		if (flock(fd, LOCK_EX)) {
			err = -errno;
			close(fd);
			return err;
		}
		/* A concurrent detach may have removed the directory while we
		 * waited: then lock the new one. */
		if (fstat(fd, &a) == 0 && stat(dir, &b) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev) {
			/* Someone may have made it between our check and our
			 * mkdir: judge what we locked. */
			char parent[PATH_MAX];
			char *slash;

			snprintf(parent, sizeof(parent), "%s", dir);
			slash = strrchr(parent, '/');
			if (slash && slash != parent)
				*slash = '\0';
			err = check_dir_safe(parent, "pin root", false);
			if (!err)
				err = check_dir_safe(dir, "pin directory", false);
			if (!err)
				return fd;
			close(fd);
			return err;
		}
		close(fd);
	}
	return -EAGAIN;
}

static void unlock_dir(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}

/* Route libbpf's messages to our log while we call into it: the library
 * must not print, and libbpf's default printer writes to stderr. */
static int libbpf_print_to_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum unet_log_level l = level == LIBBPF_WARN	? UNET_LOG_WARN
				: level == LIBBPF_INFO	? UNET_LOG_INFO
							: UNET_LOG_DEBUG;
	char msg[480];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	unet_log(l, "%s", msg); /* already starts "libbpf: " */
	return 0;
}

/*
 * State of the link pinned in dir:
 *   1        pinned and attached to ifindex (*prog_id set if non-NULL);
 *   0        pinned but dead: detached, or its device is gone;
 *   LINK_ELSEWHERE  pinned and attached to another device of this
 *            namespace (the name went to another device: the old one
 *            was renamed, its program still serves it);
 *   -ENOENT  no link pin;
 *   -errno   otherwise.
 */
#define LINK_ELSEWHERE 2
static int pinned_link_state(const char *dir, int ifindex, uint32_t *prog_id)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, err;

	err = pin_path(path, sizeof(path), dir, UNET_PIN_LINK);
	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	err = err ? -errno : 0;
	close(fd);
	if (err)
		return err;
	if (info.type != BPF_LINK_TYPE_XDP || info.xdp.ifindex == 0)
		return 0;
	if ((int)info.xdp.ifindex != ifindex) {
		char name[IF_NAMESIZE];

		/* Alive on a device we can still see: not ours to remove. */
		return if_indextoname(info.xdp.ifindex, name) ? LINK_ELSEWHERE : 0;
	}
	if (prog_id)
		*prog_id = info.prog_id;
	return 1;
}

static bool all_maps_pinned(const char *dir)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < N_PINNED_MAPS; i++) {
		if (pin_path(path, sizeof(path), dir, pinned_maps[i]) || access(path, F_OK))
			return false;
	}
	return true;
}

/* Detach the link pinned in dir, if any, whatever its state. */
static void detach_pinned_link(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	if (pin_path(path, sizeof(path), dir, UNET_PIN_LINK))
		return;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	/* ENOLINK: already detached (device gone); nothing to do. */
	if (bpf_link_detach(fd) && errno != ENOLINK && errno != EINVAL)
		unet_log(UNET_LOG_WARN, "%s: bpf_link_detach: %s", path, strerror(errno));
	close(fd);
}

/* ---- Attach / detach ---------------------------------------------------- */

static const char *flags_name(__u32 flags)
{
	return flags == XDP_FLAGS_DRV_MODE ? "native" : "skb";
}

/* Load the program with its maps pinned in dir and attach it to ifindex
 * in `mode` (AUTO: native, then skb), pinning the link as dir/link.
 * Returns 0 or -errno; on failure nothing is left attached (the caller
 * cleans dir). */
static int load_and_link(const char *ifname, int ifindex, const char *dir,
			 enum unet_xdp_mode mode)
{
	LIBBPF_OPTS(bpf_object_open_opts, oopts, .pin_root_path = dir);
	__u32 try_flags[2], flags = 0;
	char path[PATH_MAX];
	struct unet_xdp_bpf *skel;
	struct bpf_map *map;
	int link_fd = -1, ntry = 0, prog_fd, err;

	if (mode != UNET_XDP_MODE_SKB)
		try_flags[ntry++] = XDP_FLAGS_DRV_MODE;
	if (mode != UNET_XDP_MODE_NATIVE)
		try_flags[ntry++] = XDP_FLAGS_SKB_MODE;

	skel = unet_xdp_bpf__open_opts(&oopts);
	if (!skel) {
		err = -errno;
		unet_log(UNET_LOG_ERROR, "%s: opening the XDP object: %s", ifname, strerror(-err));
		return err;
	}
	err = unet_xdp_bpf__load(skel);
	if (err) {
		unet_log(UNET_LOG_ERROR, "%s: loading the XDP program: %s", ifname, strerror(-err));
		goto out;
	}
	/* The core's maps must be there; every map of the object is pinned
	 * by name (LIBBPF_PIN_BY_NAME), and any that is not is pinned here,
	 * so the layout holds whatever the object says. */
	for (size_t i = 0; i < N_PINNED_MAPS; i++) {
		if (!bpf_object__find_map_by_name(skel->obj, pinned_maps[i])) {
			unet_log(UNET_LOG_ERROR, "%s: the XDP object has no map %s", ifname,
				 pinned_maps[i]);
			err = -ENOENT;
			goto out;
		}
	}
	bpf_object__for_each_map(map, skel->obj) {
		const char *name = bpf_map__name(map);

		/* Internal maps (.rodata, .bss) are the program's own. */
		if (name[0] == '.' || bpf_map__is_pinned(map))
			continue;
		err = pin_path(path, sizeof(path), dir, name);
		if (!err)
			err = bpf_map__pin(map, path);
		if (err) {
			unet_log(UNET_LOG_ERROR, "%s: pinning %s: %s", ifname, name,
				 strerror(-err));
			goto out;
		}
	}

	prog_fd = bpf_program__fd(skel->progs.unet_xdp_rx);
	for (int i = 0; i < ntry; i++) {
		LIBBPF_OPTS(bpf_link_create_opts, lopts, .flags = try_flags[i]);

		flags = try_flags[i];
		link_fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &lopts);
		if (link_fd >= 0)
			break;
		err = -errno;
		unet_log(i + 1 < ntry ? UNET_LOG_INFO : UNET_LOG_ERROR,
			 "%s: attaching in %s mode: %s", ifname, flags_name(flags),
			 strerror(-err));
		/* Only a driver without native XDP is worth a second try. */
		if (err == -EPERM || err == -EBUSY || err == -EEXIST)
			break;
	}
	if (link_fd < 0)
		goto out;
	err = pin_path(path, sizeof(path), dir, UNET_PIN_LINK);
	if (!err && bpf_obj_pin(link_fd, path))
		err = -errno;
	if (err) {
		unet_log(UNET_LOG_ERROR, "%s: pinning the link at %s: %s", ifname, path,
			 strerror(-err));
		goto out;
	}
	unet_log(UNET_LOG_INFO, "%s: XDP program attached in %s mode, pinned in %s", ifname,
		 flags_name(flags), dir);
out:
	/* Closing an unpinned link detaches it; a pinned one lives on. */
	if (link_fd >= 0)
		close(link_fd);
	unet_xdp_bpf__destroy(skel);
	return err;
}

int unet_iface__attach(const char *ifname, enum unet_xdp_mode mode,
		       const struct unet_iface_opts *opts)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	libbpf_print_fn_t old_print;
	char dir[PATH_MAX];
	int ifindex, lock_fd, state, err;

	if (mode != UNET_XDP_MODE_AUTO && mode != UNET_XDP_MODE_NATIVE &&
	    mode != UNET_XDP_MODE_SKB)
		return -EINVAL;
	err = iface_dir(opts, ifname, dir, sizeof(dir));
	if (err)
		return err;
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex) {
		unet_log(UNET_LOG_ERROR, "no such interface: %s", ifname);
		return -ENODEV;
	}
	lock_fd = lock_dir(dir);
	if (lock_fd < 0) {
		unet_log(UNET_LOG_ERROR, "cannot create %s: %s", dir, strerror(-lock_fd));
		return lock_fd;
	}

	state = pinned_link_state(dir, ifindex, NULL);
	if (state == LINK_ELSEWHERE) {
		/* Removing these pins would detach a live program from the
		 * device that was renamed: never. */
		unet_log(UNET_LOG_ERROR,
			 "%s: the pins in %s belong to the program attached to another device "
			 "(renamed?): detach it there first",
			 ifname, dir);
		err = -EBUSY;
		goto out;
	}
	if (state == 1 && all_maps_pinned(dir)) {
		unet_log(UNET_LOG_DEBUG, "%s: already attached", ifname);
		err = 0;
		goto out;
	}
	if (state == 1) {
		unet_log(UNET_LOG_WARN, "%s: attached but maps missing in %s: re-attaching",
			 ifname, dir);
		detach_pinned_link(dir);
	} else if (state == 0) {
		unet_log(UNET_LOG_INFO, "%s: removing stale pins in %s", ifname, dir);
	}
	/* Whatever is left in dir belongs to no live program of ours. */
	err = clean_dir(dir);
	if (err)
		goto out_rmdir;

	err = bpf_xdp_query(ifindex, 0, &q);
	if (err) {
		err = -errno;
		unet_log(UNET_LOG_ERROR, "%s: querying XDP: %s", ifname, strerror(-err));
		goto out_rmdir;
	}
	if (q.attach_mode != XDP_ATTACHED_NONE) {
		unet_log(UNET_LOG_ERROR, "%s: another XDP program (id %u) is attached", ifname,
			 q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id);
		err = -EBUSY;
		goto out_rmdir;
	}

	old_print = libbpf_set_print(libbpf_print_to_log);
	err = load_and_link(ifname, ifindex, dir, mode);
	libbpf_set_print(old_print);
	if (!err)
		goto out;
out_rmdir:
	clean_dir(dir);
	rmdir(dir);
out:
	unlock_dir(lock_fd);
	return err;
}

int unet_iface__detach(const char *ifname, const struct unet_iface_opts *opts)
{
	char dir[PATH_MAX];
	struct stat st;
	int lock_fd, err;

	err = iface_dir(opts, ifname, dir, sizeof(dir));
	if (err)
		return err;
	if (stat(dir, &st))
		return errno != ENOENT ? -errno
		       : if_nametoindex(ifname) ? -ENOENT
						: -ENODEV;
	lock_fd = lock_dir(dir);
	if (lock_fd < 0)
		return lock_fd;
	/* Whether the link is alive, dead, or missing (half-made pins), the
	 * interface's pins go: detach is also how stale pins are cleared. */
	detach_pinned_link(dir);
	err = clean_dir(dir);
	if (!err && rmdir(dir) && errno != ENOENT) {
		err = -errno;
		unet_log(UNET_LOG_WARN, "cannot remove %s: %s", dir, strerror(errno));
	}
	unlock_dir(lock_fd);
	if (!err)
		unet_log(UNET_LOG_INFO, "%s: detached, pins removed from %s", ifname, dir);
	return err;
}

/* ---- Open / close --------------------------------------------------- */

/*
 * The ids of the maps the program attached to this interface uses: a map
 * is accepted only if it is one of them, so a pin swapped for another
 * interface's map (or any other) is caught whatever its path says.
 */
static int prog_map_ids(struct unet_iface *iface)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info), prog_id = 0;
	int fd, state, err = 0;

	state = pinned_link_state(iface->pin_dir, iface->ifindex, &prog_id);
	if (state == LINK_ELSEWHERE)
		return -ESTALE; /* another device's live program: never unchecked */
	if (state <= 0)
		return state == 0 ? -ENOENT : state;
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = UNET_MAX_PROG_MAPS;
	info.map_ids = (__u64)(unsigned long)iface->map_ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	else
		iface->n_map_ids = info.nr_map_ids < UNET_MAX_PROG_MAPS ? info.nr_map_ids
									: UNET_MAX_PROG_MAPS;
	close(fd);
	return err;
}

/* Open the pin dir/name as a map of the attached program with this type
 * and sizes.  Never through a link; the log says which check failed.
 * Returns the fd or -errno (-EPROTO: not the map we expect). */
static int open_pinned_map(struct unet_iface *iface, const char *name, __u32 type,
			   __u32 key_size, __u32 value_size)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	struct stat st;
	bool ours = false;
	int fd, err;

	err = pin_path(path, sizeof(path), iface->pin_dir, name);
	if (err)
		return err;
	if (fstatat(iface->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		err = -errno;
		unet_log(UNET_LOG_ERROR, "opening %s: %s", path, strerror(-err));
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		unet_log(UNET_LOG_ERROR, "%s: not a pinned map (a link?): refused", path);
		return -EPROTO;
	}
	fd = bpf_obj_get(path);
	if (fd < 0) {
		err = -errno;
		unet_log(UNET_LOG_ERROR, "opening %s: %s", path, strerror(-err));
		return err;
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	for (__u32 i = 0; i < iface->n_map_ids; i++)
		ours |= iface->map_ids[i] == info.id;
	if (!ours && !iface->unchecked) {
		unet_log(UNET_LOG_ERROR,
			 "%s: map id %u is not one of the attached program's maps: refused", path,
			 info.id);
		close(fd);
		return -EPROTO;
	}
	if (info.type != type || info.key_size != key_size || info.value_size != value_size) {
		unet_log(UNET_LOG_ERROR,
			 "pinned map %s: type %u key %u value %u, expected %u/%u/%u "
			 "(program and library from different versions?)",
			 path, info.type, info.key_size, info.value_size, type, key_size,
			 value_size);
		close(fd);
		return -EPROTO;
	}
	return fd;
}

int unet_iface_map_open(struct unet_iface *iface, const char *name, uint32_t type,
			uint32_t key_size, uint32_t value_size)
{
	if (!iface || !name || strchr(name, '/'))
		return -EINVAL;
	return open_pinned_map(iface, name, type, key_size, value_size);
}

int unet_iface_map(struct unet_iface *iface, const char *name, uint32_t type, uint32_t key_size,
		   uint32_t value_size)
{
	int i, fd;

	if (!iface || !name)
		return -EINVAL;
	for (i = 0; i < UNET_IFACE_LAYER_MAPS && iface->layer_maps[i].name; i++)
		if (!strcmp(iface->layer_maps[i].name, name))
			return iface->layer_maps[i].fd;
	if (i == UNET_IFACE_LAYER_MAPS)
		return -ENOSPC;
	fd = unet_iface_map_open(iface, name, type, key_size, value_size);
	if (fd < 0)
		return fd;
	iface->layer_maps[i].name = name;
	iface->layer_maps[i].fd = fd;
	return fd;
}

struct unet_iface *unet_iface__open(const char *ifname, const struct unet_iface_opts *opts)
{
	static const struct {
		const char *name;
		size_t fd_off;
		__u32 type, key_size, value_size;
	} maps[] = {
#define M(n, f, t, k, v) { n, offsetof(struct unet_iface, f), t, k, v }
		M(UNET_MAP_CHANNELS, channels_fd, BPF_MAP_TYPE_HASH, sizeof(__u32),
		  sizeof(struct unet_channel_val)),
		M(UNET_MAP_ENDPOINTS, endpoints_fd, BPF_MAP_TYPE_HASH, sizeof(__u32),
		  sizeof(struct unet_endpoint_val)),
		M(UNET_MAP_CHAN_STATS, chan_stats_fd, BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32),
		  sizeof(struct unet_channel_stats)),
		M(UNET_MAP_IF_STATS, if_stats_fd, BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32),
		  sizeof(__u64)),
		M(UNET_MAP_XSKS, xsks_fd, BPF_MAP_TYPE_XSKMAP, sizeof(__u32), sizeof(__u32)),
		M(UNET_MAP_FAULTS, faults_fd, BPF_MAP_TYPE_ARRAY, sizeof(__u32),
		  sizeof(struct unet_fault_cfg)),
#undef M
	};
	struct unet_iface *iface;
	char path[PATH_MAX];
	int err, ncpus;

	iface = calloc(1, sizeof(*iface));
	if (!iface) {
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		*(int *)((char *)iface + maps[i].fd_off) = -1;
	for (int i = 0; i < UNET_IFACE_LAYER_MAPS; i++)
		iface->layer_maps[i].fd = -1;
	iface->dir_fd = -1;

	err = iface_dir(opts, ifname, iface->pin_dir, sizeof(iface->pin_dir));
	if (err)
		goto err;
	strcpy(iface->ifname, ifname);
	/* 0 when the device is gone: the pins can still be looked at (status
	 * shows link_alive false) and cleared. */
	iface->ifindex = (int)if_nametoindex(ifname);

	iface->dir_fd = open(iface->pin_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (iface->dir_fd < 0) {
		err = errno != ENOENT ? -errno : iface->ifindex ? -ENOENT : -ENODEV;
		if (err == -EACCES)
			unet_log(UNET_LOG_ERROR, "opening %s: %s (needs root)", iface->pin_dir,
				 strerror(EACCES));
		goto err;
	}
	err = pin_path(path, sizeof(path), iface->pin_dir, UNET_PIN_LINK);
	if (err)
		goto err;
	{
		struct stat lst;

		/* fstatat, not faccessat: the latter judges by the real uid. */
		if (fstatat(iface->dir_fd, UNET_PIN_LINK, &lst, AT_SYMLINK_NOFOLLOW)) {
			err = -errno;
			goto err;
		}
		if (!S_ISREG(lst.st_mode)) {
			unet_log(UNET_LOG_ERROR, "%s: not a pinned link: refused", path);
			err = -EPROTO;
			goto err;
		}
	}
	/* A dead link (device re-created) has no program to check the maps
	 * against: they can still be listed and reclaimed, as before. */
	err = prog_map_ids(iface);
	if (err == -ENOENT) {
		iface->n_map_ids = 0;
		iface->unchecked = true;
	} else if (err) {
		unet_log(UNET_LOG_ERROR, "%s: reading the attached program: %s", iface->pin_dir,
			 strerror(-err));
		goto err;
	}
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int fd = open_pinned_map(iface, maps[i].name, maps[i].type, maps[i].key_size,
					 maps[i].value_size);

		if (fd < 0) {
			err = fd;
			goto err;
		}
		*(int *)((char *)iface + maps[i].fd_off) = fd;
	}

	ncpus = libbpf_num_possible_cpus();
	if (ncpus < 1) {
		err = ncpus < 0 ? ncpus : -EINVAL;
		goto err;
	}
	iface->ncpus = ncpus;
	return iface;
err:
	unet_iface__close(iface);
	errno = -err;
	return NULL;
}

void unet_iface__close(struct unet_iface *iface)
{
	int *fds[6];

	if (!iface)
		return;
	for (int i = 0; i < UNET_IFACE_LAYER_MAPS; i++)
		if (iface->layer_maps[i].fd >= 0)
			close(iface->layer_maps[i].fd);
	fds[0] = &iface->channels_fd;
	fds[1] = &iface->endpoints_fd;
	fds[2] = &iface->chan_stats_fd;
	fds[3] = &iface->if_stats_fd;
	fds[4] = &iface->xsks_fd;
	fds[5] = &iface->faults_fd;
	for (int i = 0; i < 6; i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	if (iface->dir_fd >= 0)
		close(iface->dir_fd);
	free(iface);
}

/* ---- Listing interfaces ------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int unet_iface__for_each(const struct unet_iface_opts *opts,
			 int (*fn)(const char *ifname, void *ctx), void *ctx)
{
	char **names = NULL, **tmp, suffix[24];
	uint64_t ns = 0;
	size_t n = 0, cap = 0;
	const char *root;
	struct dirent *de;
	int err, ret = 0;
	DIR *d;

	if (!fn)
		return -EINVAL;
	err = opts_pin_root(opts, &root);
	if (err)
		return err;
	root = unet_pin_root(root);
	err = unet_check_bpffs(root);
	if (err)
		return err;
	d = opendir(root);
	if (!d)
		return errno == ENOENT ? 0 : -errno; /* ENOENT: nothing attached */
	err = netns_ino(&ns);
	if (err) {
		closedir(d);
		return err;
	}
	snprintf(suffix, sizeof(suffix), "@%" PRIu64, ns);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), slen = strlen(suffix);
		char name[IF_NAMESIZE];

		/* <ifname>@<netns>: the devices of our namespace only. */
		if (de->d_name[0] == '.' || len <= slen || len - slen >= sizeof(name) ||
		    strcmp(de->d_name + len - slen, suffix))
			continue;
		memcpy(name, de->d_name, len - slen);
		name[len - slen] = '\0';
		if (check_ifname(name))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			tmp = realloc(names, cap * sizeof(*names));
			if (!tmp) {
				ret = -ENOMEM;
				goto out;
			}
			names = tmp;
		}
		names[n] = strdup(name);
		if (!names[n]) {
			ret = -ENOMEM;
			goto out;
		}
		n++;
	}
	/* In name order, so listings are stable. */
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && !ret; i++)
		ret = fn(names[i], ctx);
out:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/* ---- Endpoint slots: who is alive ------------------------------------ */

/*
 * An owner is alive while its alive map exists and still holds its token
 * (unet_abi.h).  Only an id that names no map (ENOENT) proves death: a
 * caller without the privilege to look (EPERM) cannot tell, and then an
 * entry is taken for alive, so nothing is ever reclaimed on a guess.
 */
static bool alive_map_holds(uint32_t id, uint64_t token)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info), key = 0;
	__u64 val = 0;
	bool ok;
	int fd;

	if (!id || !token)
		return false;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return errno != ENOENT;
	memset(&info, 0, sizeof(info));
	ok = !bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_MAP_TYPE_ARRAY &&
	     info.key_size == sizeof(key) && info.value_size == sizeof(val) &&
	     info.max_entries == 1 && !bpf_map_lookup_elem(fd, &key, &val) && val == token;
	close(fd);
	return ok;
}

bool unet_endpoint_val_alive(const struct unet_endpoint_val *ev)
{
	return alive_map_holds(ev->alive_map_id, ev->token);
}

uint64_t unet_iface_slot_token(struct unet_iface *iface, uint32_t slot)
{
	struct unet_endpoint_val ev;

	if (bpf_map_lookup_elem(iface->endpoints_fd, &slot, &ev) || !unet_endpoint_val_alive(&ev))
		return 0;
	return ev.token;
}

bool unet_iface_slot_alive(struct unet_iface *iface, uint32_t slot, uint64_t token)
{
	uint64_t t = unet_iface_slot_token(iface, slot);

	return t && (!token || t == token);
}

int unet_alive_map_create(uint64_t *token, uint32_t *id)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo);
	struct bpf_map_info info;
	__u32 len = sizeof(info), key = 0;
	int fd, err;

	do {
		if (getrandom(token, sizeof(*token), 0) != sizeof(*token))
			return -errno;
	} while (!*token);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unet_alive", sizeof(key), sizeof(*token), 1, &mo);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_map_update_elem(fd, &key, token, BPF_ANY) ||
	    bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	*id = info.id;
	return fd;
}

/* ---- The interface lock --------------------------------------------- */

int unet_iface_lock(struct unet_iface *iface)
{
	if (iface->lock_depth++)
		return 0;
	if (flock(iface->dir_fd, LOCK_EX)) {
		iface->lock_depth = 0;
		return -errno;
	}
	return 0;
}

void unet_iface_unlock(struct unet_iface *iface)
{
	if (iface->lock_depth && !--iface->lock_depth)
		flock(iface->dir_fd, LOCK_UN);
}

/* ---- Layers' shared tables ------------------------------------------- */

static struct unet_iface_layer *iface_layers;

void unet_iface_layer_register(struct unet_iface_layer *l)
{
	for (struct unet_iface_layer *o = iface_layers; o; o = o->next)
		if (o == l)
			return;
	l->next = iface_layers;
	iface_layers = l;
}

/* ---- Devices ----------------------------------------------------------- */

int unet_iface_nqueues(const char *ifname)
{
	int n = unet_iface_nqueues_raw(ifname);

	return n > UNET_MAX_QUEUES ? UNET_MAX_QUEUES : n;
}

/* The device's receive queues from rtnetlink (IFLA_NUM_RX_QUEUES), asked
 * in the calling thread's network namespace: /sys/class/net shows the
 * namespace of whoever mounted sysfs, not ours (unetd serves devices in
 * its clients' namespaces, where a device may share a name with one of
 * its own).  0 when it cannot say. */
static unsigned long nqueues_rtnl(const char *ifname)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} q = {
		.nh = { .nlmsg_len = sizeof(q), .nlmsg_type = RTM_GETLINK,
			.nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = 1 },
		.ifi = { .ifi_family = AF_UNSPEC },
	};
	char buf[16384] __attribute__((aligned(4)));
	unsigned long n = 0;
	ssize_t len;
	int fd;

	q.ifi.ifi_index = (int)if_nametoindex(ifname);
	if (!q.ifi.ifi_index)
		return 0;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return 0;
	if (send(fd, &q, sizeof(q), 0) == (ssize_t)sizeof(q) && (len = recv(fd, buf, sizeof(buf), 0)) > 0) {
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len);
		     h = NLMSG_NEXT(h, len)) {
			struct ifinfomsg *ifi = NLMSG_DATA(h);
			int alen;

			if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
				continue;
			alen = (int)IFLA_PAYLOAD(h);
			for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
				if (a->rta_type == IFLA_NUM_RX_QUEUES && RTA_PAYLOAD(a) >= sizeof(uint32_t))
					n = *(uint32_t *)RTA_DATA(a);
		}
	}
	close(fd);
	return n;
}

int unet_iface_nqueues_raw(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;
	unsigned long n = 0;
	int fd;

	if (!ifname || check_ifname(ifname))
		return 1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
		ifr.ifr_data = (char *)&ch;
		if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
			n = ch.rx_count > ch.combined_count ? ch.rx_count : ch.combined_count;
		close(fd);
	}
	if (!n)
		n = nqueues_rtnl(ifname); /* no ETHTOOL_GCHANNELS (dummy, some drivers) */
	if (n)
		return n > INT_MAX ? INT_MAX : (int)n;
	return 1;
}

/* ---- Status and counters ---------------------------------------------- */

static int count_keys(int fd, uint32_t *count)
{
	__u32 key, next;
	__u32 *prev = NULL;
	uint32_t n = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		/* Keys vanishing under us restart the walk: bound it. */
		if (++n > UNET_MAX_CHANNELS)
			break;
	}
	if (n <= UNET_MAX_CHANNELS && errno != ENOENT)
		return -errno;
	*count = n;
	return 0;
}

int unet_iface__status(struct unet_iface *iface, struct unet_iface_status *st)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	uint32_t prog_id = 0;
	int err, state;

	if (!iface || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	snprintf(st->ifname, sizeof(st->ifname), "%s", iface->ifname);
	/* The device may have been re-created since open. */
	st->ifindex = (int)if_nametoindex(iface->ifname);
	st->mode = UNET_XDP_MODE_AUTO;

	state = st->ifindex ? pinned_link_state(iface->pin_dir, st->ifindex, &prog_id) : 0;
	if (state < 0 && state != -ENOENT)
		return state;
	st->link_alive = state == 1;
	if (st->link_alive) {
		st->prog_id = prog_id;
		if (bpf_xdp_query(st->ifindex, 0, &q) == 0) {
			if (q.attach_mode == XDP_ATTACHED_DRV)
				st->mode = UNET_XDP_MODE_NATIVE;
			else if (q.attach_mode == XDP_ATTACHED_SKB)
				st->mode = UNET_XDP_MODE_SKB;
		}
	}
	if (st->ifindex) {
		st->device_queues = (uint32_t)unet_iface_nqueues_raw(iface->ifname);
		st->nqueues = st->device_queues > UNET_MAX_QUEUES ? UNET_MAX_QUEUES
								   : st->device_queues;
	}
	err = count_keys(iface->endpoints_fd, &st->n_endpoints);
	if (!err)
		err = count_keys(iface->channels_fd, &st->n_channels);
	return err;
}

const char *unet_stat_name(int idx)
{
	static const char *const names[UNET_STAT__COUNT] = {
		[UNET_STAT_RX] = "rx",
		[UNET_STAT_PASS] = "pass",
		[UNET_STAT_DELIVERED] = "delivered",
		[UNET_STAT_DROP_MALFORMED] = "drop_malformed",
		[UNET_STAT_DROP_VERSION] = "drop_version",
		[UNET_STAT_DROP_UNKNOWN_TAG] = "drop_unknown_tag",
		[UNET_STAT_DROP_WRONG_SRC] = "drop_wrong_src",
		[UNET_STAT_DROP_NO_SOCKET] = "drop_no_socket",
		[UNET_STAT_DROP_INJECTED] = "drop_injected",
		[UNET_STAT_UDP_DELIVERED] = "udp_delivered",
		[UNET_STAT_ARP_DELIVERED] = "arp_delivered",
		[UNET_STAT_DROP_UDP_FILTER] = "drop_udp_filter",
		[UNET_STAT_DROP_IP_FRAGMENT] = "drop_ip_fragment",
		[UNET_STAT_DROP_IP_MALFORMED] = "drop_ip_malformed",
		[UNET_STAT_DROP_QUEUE_RANGE] = "drop_queue_range",
		[UNET_STAT_TCP_DELIVERED] = "tcp_delivered",
		[UNET_STAT_DROP_TCP_MALFORMED] = "drop_tcp_malformed",
	};

	if (idx < 0 || idx >= UNET_STAT__COUNT)
		return NULL;
	return names[idx];
}

int unet_iface__stats(struct unet_iface *iface, uint64_t out[UNET_STAT__COUNT])
{
	__u64 *vals;

	if (!iface || !out)
		return -EINVAL;
	/* Per-CPU values come one per possible CPU, each 8-byte aligned. */
	vals = calloc((size_t)iface->ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 i = 0; i < UNET_STAT__COUNT; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(iface->if_stats_fd, &i, vals)) {
			int err = -errno;

			free(vals);
			return err;
		}
		for (int c = 0; c < iface->ncpus; c++)
			out[i] += vals[c];
	}
	free(vals);
	return 0;
}

int unet_iface__set_fault(struct unet_iface *iface, uint32_t drop_ppm)
{
	struct unet_fault_cfg cfg = { .drop_ppm = drop_ppm };
	__u32 key = 0;

	if (!iface || drop_ppm > 1000000)
		return -EINVAL;
	if (bpf_map_update_elem(iface->faults_fd, &key, &cfg, BPF_ANY))
		return -errno;
	unet_log(UNET_LOG_INFO, "%s: injected drop set to %u ppm", iface->ifname, drop_ppm);
	return 0;
}

/* ---- Channels and endpoints ----------------------------------------- */

/* Every key of a HASH map, taken before the caller looks at (and maybe
 * deletes) entries: get_next_key from a deleted key starts over.  At most
 * max keys (a map churning under us: enough).  Returns 0 with *keys (free
 * it) and *n, or -errno. */
int unet_map_keys(int fd, size_t key_size, size_t max, void **keys, size_t *n)
{
	uint8_t last[UNET_MAP_KEY_MAX], next[UNET_MAP_KEY_MAX];
	size_t cap = 64, cnt = 0;
	uint8_t *k, *tmp;
	const void *prev = NULL;

	if (key_size > UNET_MAP_KEY_MAX)
		return -EINVAL;
	k = malloc(cap * key_size);
	if (!k)
		return -ENOMEM;
	while (cnt < max && bpf_map_get_next_key(fd, prev, next) == 0) {
		if (cnt == cap) {
			cap *= 2;
			tmp = realloc(k, cap * key_size);
			if (!tmp) {
				free(k);
				return -ENOMEM;
			}
			k = tmp;
		}
		memcpy(k + cnt++ * key_size, next, key_size);
		memcpy(last, next, key_size);
		prev = last;
	}
	if (cnt < max && errno != ENOENT) {
		int err = -errno;

		free(k);
		return err;
	}
	*keys = k;
	*n = cnt;
	return 0;
}

/* unet_map_keys for our __u32-keyed maps. */
static int collect_keys(int fd, __u32 **keys, size_t *n)
{
	return unet_map_keys(fd, sizeof(**keys), 2 * UNET_MAX_CHANNELS, (void **)keys, n);
}

/* Whether the channel's owner (its slot, and the incarnation that opened
 * it) is alive; slot answers cached per walk (slots < UNET_MAX_ENDPOINTS). */
static bool channel_owner_alive(struct unet_iface *iface, const struct unet_channel_val *cv,
				uint64_t cache[UNET_MAX_ENDPOINTS], bool cached[UNET_MAX_ENDPOINTS])
{
	uint32_t id = cv->endpoint;
	uint64_t token;

	if (id >= UNET_MAX_ENDPOINTS)
		return false;
	if (!cached[id]) {
		cache[id] = unet_iface_slot_token(iface, id);
		cached[id] = true;
	}
	token = cache[id];
	return token && token == cv->owner_token;
}

static void channel_stats(struct unet_iface *iface, uint32_t tag, struct unet_channel_entry *e)
{
	struct unet_channel_stats *vals;

	vals = calloc((size_t)iface->ncpus, sizeof(*vals));
	if (!vals)
		return;
	if (bpf_map_lookup_elem(iface->chan_stats_fd, &tag, vals) == 0) {
		for (int c = 0; c < iface->ncpus; c++) {
			e->delivered += vals[c].delivered;
			e->delivered_bytes += vals[c].delivered_bytes;
			e->drop_wrong_src += vals[c].drop_wrong_src;
			e->drop_no_socket += vals[c].drop_no_socket;
		}
	}
	free(vals);
}

int unet_iface__for_each_channel(struct unet_iface *iface,
				 int (*fn)(const struct unet_channel_entry *, void *ctx), void *ctx)
{
	uint64_t cache[UNET_MAX_ENDPOINTS];
	bool cached[UNET_MAX_ENDPOINTS] = { false };
	struct unet_channel_entry e;
	struct unet_channel_val cv;
	__u32 *keys;
	size_t n;
	int ret;

	if (!iface || !fn)
		return -EINVAL;
	ret = collect_keys(iface->channels_fd, &keys, &n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		if (bpf_map_lookup_elem(iface->channels_fd, &keys[i], &cv))
			continue; /* deleted meanwhile */
		memset(&e, 0, sizeof(e));
		e.tag = (uint16_t)keys[i];
		e.peer_tag = cv.peer_tag;
		memcpy(e.peer_mac, cv.peer_mac, sizeof(e.peer_mac));
		e.endpoint = cv.endpoint;
		e.pid = cv.owner_pid;
		e.stale = !channel_owner_alive(iface, &cv, cache, cached);
		channel_stats(iface, keys[i], &e);
		ret = fn(&e, ctx);
	}
	free(keys);
	return ret;
}

int unet_iface__for_each_endpoint(struct unet_iface *iface,
				  int (*fn)(const struct unet_endpoint_entry *, void *ctx),
				  void *ctx)
{
	struct unet_endpoint_entry e;
	struct unet_endpoint_val ev;
	__u32 *keys;
	size_t n;
	int ret;

	if (!iface || !fn)
		return -EINVAL;
	ret = collect_keys(iface->endpoints_fd, &keys, &n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		if (bpf_map_lookup_elem(iface->endpoints_fd, &keys[i], &ev))
			continue;
		memset(&e, 0, sizeof(e));
		e.id = keys[i];
		e.pid = ev.pid;
		e.nqueues = ev.nqueues;
		memcpy(e.comm, ev.comm, sizeof(e.comm));
		e.comm[sizeof(e.comm) - 1] = '\0';
		e.stale = !unet_endpoint_val_alive(&ev);
		ret = fn(&e, ctx);
	}
	free(keys);
	return ret;
}

/* Test hook: widen a race window by sleeping $var microseconds (at most
 * a second), so that tests can show two processes cannot both get in. */
static void test_delay(const char *var)
{
	const char *v = getenv(var);
	long us = v ? strtol(v, NULL, 10) : 0;

	if (us > 0)
		usleep((useconds_t)(us > 1000000 ? 1000000 : us));
}

/*
 * With the interface lock held.  Channels first, then the layers' tables,
 * then the slots: an entry must never outlive the slot it names, or a
 * process claiming the slot again could see it.  (Entries also carry the
 * owner's token, so even then they would not be taken for the new
 * owner's.)
 */
int unet_iface_reclaim_locked(struct unet_iface *iface)
{
	uint64_t cache[UNET_MAX_ENDPOINTS];
	bool cached[UNET_MAX_ENDPOINTS] = { false };
	struct unet_endpoint_val ev;
	struct unet_channel_val cv;
	__u32 *keys;
	size_t n;
	int err, removed = 0;

	err = collect_keys(iface->channels_fd, &keys, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(iface->channels_fd, &keys[i], &cv))
			continue;
		if (channel_owner_alive(iface, &cv, cache, cached))
			continue;
		if (bpf_map_delete_elem(iface->channels_fd, &keys[i]) == 0) {
			unet_log(UNET_LOG_INFO, "%s: reclaimed channel %u (endpoint %u)",
				 iface->ifname, keys[i], cv.endpoint);
			removed++;
		}
	}
	free(keys);

	for (struct unet_iface_layer *l = iface_layers; l; l = l->next) {
		err = l->reclaim(iface);
		if (err < 0) {
			unet_log(UNET_LOG_WARN, "%s: reclaiming %s tables: %s", iface->ifname,
				 l->name, strerror(-err));
			return err;
		}
		removed += err;
	}

	err = collect_keys(iface->endpoints_fd, &keys, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(iface->endpoints_fd, &keys[i], &ev))
			continue;
		if (unet_endpoint_val_alive(&ev))
			continue;
		test_delay("UNET_TEST_RECLAIM_DELAY_US");
		if (bpf_map_delete_elem(iface->endpoints_fd, &keys[i]) == 0) {
			unet_log(UNET_LOG_INFO, "%s: reclaimed endpoint %u (pid %u gone)",
				 iface->ifname, keys[i], ev.pid);
			removed++;
		}
	}
	free(keys);
	return removed;
}

/*
 * Claim the first free endpoint slot for v (its token and alive map made
 * already).  Under the interface lock, dead owners' slots and everything
 * that names them are reclaimed first, so reclaim never races with
 * another process's claim; BPF_NOEXIST keeps the claim itself atomic even
 * against a writer that does not lock.  Returns the slot, -ENOSPC, -errno.
 */
int unet_iface_slot_claim(struct unet_iface *iface, const struct unet_endpoint_val *v)
{
	int err, slot = -ENOSPC;

	err = unet_iface_lock(iface);
	if (err)
		return err;
	unet_iface_reclaim_locked(iface);
	for (uint32_t s = 0; s < UNET_MAX_ENDPOINTS; s++) {
		if (!bpf_map_update_elem(iface->endpoints_fd, &s, v, BPF_NOEXIST)) {
			slot = (int)s;
			break;
		}
		if (errno != EEXIST) {
			slot = -errno;
			break;
		}
	}
	unet_iface_unlock(iface);
	return slot;
}

void unet_iface_slot_release(struct unet_iface *iface, uint32_t slot, uint64_t token)
{
	struct unet_endpoint_val v;

	if (unet_iface_lock(iface))
		return;
	if (!bpf_map_lookup_elem(iface->endpoints_fd, &slot, &v) && v.token == token)
		bpf_map_delete_elem(iface->endpoints_fd, &slot);
	unet_iface_unlock(iface);
}

int unet_iface_xsk_set(struct unet_iface *iface, uint32_t slot, uint32_t queue, int fd)
{
	uint32_t idx = UNET_XSK_INDEX(slot, queue);

	if (slot >= UNET_MAX_ENDPOINTS || queue >= UNET_MAX_QUEUES)
		return -EINVAL;
	if (fd < 0)
		return bpf_map_delete_elem(iface->xsks_fd, &idx) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(iface->xsks_fd, &idx, &fd, BPF_ANY) ? -errno : 0;
}

int unet_iface__reclaim(struct unet_iface *iface)
{
	int err;

	if (!iface)
		return -EINVAL;
	err = unet_iface_lock(iface);
	if (err)
		return err;
	err = unet_iface_reclaim_locked(iface);
	unet_iface_unlock(iface);
	return err;
}

static int channel_add_locked(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
			      const uint8_t peer_mac[6], uint16_t peer_tag)
{
	uint64_t cache[UNET_MAX_ENDPOINTS];
	bool cached[UNET_MAX_ENDPOINTS] = { false };
	struct unet_channel_stats *zero;
	struct unet_channel_val cv, old;
	struct unet_endpoint_val ev;
	__u32 key = tag;
	int err;

	if (endpoint >= UNET_MAX_ENDPOINTS ||
	    bpf_map_lookup_elem(iface->endpoints_fd, &endpoint, &ev) ||
	    !unet_endpoint_val_alive(&ev)) {
		unet_log(UNET_LOG_ERROR, "%s: no live endpoint %u", iface->ifname, endpoint);
		return -ESRCH;
	}
	if (bpf_map_lookup_elem(iface->channels_fd, &key, &old) == 0) {
		if (channel_owner_alive(iface, &old, cache, cached)) {
			unet_log(UNET_LOG_ERROR, "%s: tag %u in use by endpoint %u (pid %u)",
				 iface->ifname, tag, old.endpoint, old.owner_pid);
			return -EADDRINUSE;
		}
		unet_log(UNET_LOG_INFO, "%s: replacing stale channel %u", iface->ifname, tag);
		if (bpf_map_delete_elem(iface->channels_fd, &key) && errno != ENOENT)
			return -errno;
	}

	/* Fresh counters for the new channel, before frames can arrive. */
	zero = calloc((size_t)iface->ncpus, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	err = bpf_map_update_elem(iface->chan_stats_fd, &key, zero, BPF_ANY) ? -errno : 0;
	free(zero);
	if (err)
		return err;

	memset(&cv, 0, sizeof(cv));
	memcpy(cv.peer_mac, peer_mac, sizeof(cv.peer_mac));
	cv.peer_tag = peer_tag;
	cv.endpoint = endpoint;
	cv.owner_pid = ev.pid;
	cv.owner_token = ev.token;
	/* NOEXIST: a writer that does not take the lock (an older library)
	 * still cannot make us overwrite its channel. */
	if (bpf_map_update_elem(iface->channels_fd, &key, &cv, BPF_NOEXIST)) {
		err = -errno;
		if (err == -EEXIST) {
			unet_log(UNET_LOG_ERROR, "%s: tag %u in use", iface->ifname, tag);
			return -EADDRINUSE;
		}
		return err;
	}
	unet_log(UNET_LOG_INFO, "%s: channel %u -> endpoint %u added", iface->ifname, tag,
		 endpoint);
	return 0;
}

int unet_iface__channel_add(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
			    const uint8_t peer_mac[6], uint16_t peer_tag)
{
	int err;

	if (!iface || !peer_mac || tag == UNET_TAG_INVALID || peer_tag == UNET_TAG_INVALID)
		return -EINVAL;
	err = unet_iface_lock(iface);
	if (err)
		return err;
	err = channel_add_locked(iface, endpoint, tag, peer_mac, peer_tag);
	unet_iface_unlock(iface);
	return err;
}

int unet_iface_channel_remove(struct unet_iface *iface, uint16_t tag, uint32_t endpoint,
			      uint64_t token)
{
	struct unet_channel_val cv;
	__u32 key = tag;
	int err;

	if (!iface)
		return -EINVAL;
	if (tag == UNET_TAG_INVALID)
		return -ENOENT;
	err = unet_iface_lock(iface);
	if (err)
		return err;
	if (bpf_map_lookup_elem(iface->channels_fd, &key, &cv))
		err = -errno;
	else if (token && (cv.endpoint != endpoint || cv.owner_token != token))
		err = -ENOENT; /* not ours (any more): leave it */
	else if (bpf_map_delete_elem(iface->channels_fd, &key))
		err = -errno;
	unet_iface_unlock(iface);
	return err;
}

int unet_iface__channel_del(struct unet_iface *iface, uint16_t tag)
{
	return unet_iface_channel_remove(iface, tag, 0, 0);
}

/* ---- MAC addresses ------------------------------------------------------- */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int unet_parse_mac(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	if (!s || !mac || strlen(s) != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		int hi = hexval((unsigned char)s[3 * i]), lo = hexval((unsigned char)s[3 * i + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return -EINVAL;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(mac, m, sizeof(m));
	return 0;
}

char *unet_format_mac(const uint8_t mac[6], char *buf)
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		 mac[4], mac[5]);
	return buf;
}
