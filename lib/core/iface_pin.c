/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface_pin.c - where an interface's pins live and the checks on what is
 * found there.  Layout (docs/control-plane.md):
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
 * where <dev> is <ifname>@<inode of the network namespace> (unet_iface_dir):
 * a device is its namespace and its name, never its name alone.  The
 * lowest floor of the interface files: it calls none of them.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <net/if.h>

#include <linux/magic.h>

#include <bpf/bpf.h>

#include "core/iface_impl.h"

/* opts->pin_root if the caller's struct is big enough to hold it. */
int unet_opts_pin_root(const struct unet_iface_opts *opts, const char **root)
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
int unet_check_ifname(const char *ifname)
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
int unet_netns_ino(uint64_t *ino)
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
int unet_iface_dir(const struct unet_iface_opts *opts, const char *ifname, char *dir,
		   size_t size)
{
	uint64_t ns;
	const char *root;
	int err;

	err = unet_opts_pin_root(opts, &root);
	if (err)
		return err;
	err = unet_check_ifname(ifname);
	if (err)
		return err;
	root = unet_pin_root(root);
	err = unet_check_bpffs(root);
	if (err)
		return err;
	err = unet_netns_ino(&ns);
	if (err)
		return err;
	if ((size_t)snprintf(dir, size, "%s/%s@%" PRIu64, root, ifname, ns) >= size)
		return -ENAMETOOLONG;
	return check_path_safe(root, dir);
}

int unet_pin_path(char *buf, size_t size, const char *dir, const char *name)
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
int unet_clean_dir(const char *dir)
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
int unet_lock_dir(const char *dir)
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

void unet_unlock_dir(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}

/*
 * State of the link pinned in dir:
 *   1        pinned and attached to ifindex (*prog_id set if non-NULL);
 *   0        pinned but dead: detached, or its device is gone;
 *   UNET_LINK_ELSEWHERE
 *            pinned and attached to another device of this namespace (the name went to another device: the old one
 *            was renamed, its program still serves it);
 *   -ENOENT  no link pin;
 *   -errno   otherwise.
 */
int unet_pinned_link_state(const char *dir, int ifindex, uint32_t *prog_id)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, err;

	err = unet_pin_path(path, sizeof(path), dir, UNET_PIN_LINK);
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
		return if_indextoname(info.xdp.ifindex, name) ? UNET_LINK_ELSEWHERE : 0;
	}
	if (prog_id)
		*prog_id = info.prog_id;
	return 1;
}
