/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface_attach.c - attaching the XDP program to an interface and detaching
 * it: loading it, pinning its maps and its link under the interface's pin
 * directory (iface_pin.c).
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
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/iface_impl.h"
#include "unet_xdp.skel.h"

/* The core's own maps; the object may have more (the layers'), and every
 * map it has is pinned by name. */
static const char *const pinned_maps[] = {
	UNET_MAP_CHANNELS, UNET_MAP_ENDPOINTS, UNET_MAP_CHAN_STATS,
	UNET_MAP_IF_STATS, UNET_MAP_XSKS, UNET_MAP_FAULTS,
};
#define N_PINNED_MAPS (sizeof(pinned_maps) / sizeof(pinned_maps[0]))

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

static bool all_maps_pinned(const char *dir)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < N_PINNED_MAPS; i++) {
		if (unet_pin_path(path, sizeof(path), dir, pinned_maps[i]) || access(path, F_OK))
			return false;
	}
	return true;
}

/* Detach the link pinned in dir, if any, whatever its state. */
static void detach_pinned_link(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	if (unet_pin_path(path, sizeof(path), dir, UNET_PIN_LINK))
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
		err = unet_pin_path(path, sizeof(path), dir, name);
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
	err = unet_pin_path(path, sizeof(path), dir, UNET_PIN_LINK);
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
	err = unet_iface_dir(opts, ifname, dir, sizeof(dir));
	if (err)
		return err;
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex) {
		unet_log(UNET_LOG_ERROR, "no such interface: %s", ifname);
		return -ENODEV;
	}
	lock_fd = unet_lock_dir(dir);
	if (lock_fd < 0) {
		unet_log(UNET_LOG_ERROR, "cannot create %s: %s", dir, strerror(-lock_fd));
		return lock_fd;
	}

	state = unet_pinned_link_state(dir, ifindex, NULL);
	if (state == UNET_LINK_ELSEWHERE) {
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
	err = unet_clean_dir(dir);
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
	unet_clean_dir(dir);
	rmdir(dir);
out:
	unet_unlock_dir(lock_fd);
	return err;
}

int unet_iface__detach(const char *ifname, const struct unet_iface_opts *opts)
{
	char dir[PATH_MAX];
	struct stat st;
	int lock_fd, err;

	err = unet_iface_dir(opts, ifname, dir, sizeof(dir));
	if (err)
		return err;
	if (stat(dir, &st))
		return errno != ENOENT ? -errno
		       : if_nametoindex(ifname) ? -ENOENT
						: -ENODEV;
	lock_fd = unet_lock_dir(dir);
	if (lock_fd < 0)
		return lock_fd;
	/* Whether the link is alive, dead, or missing (half-made pins), the
	 * interface's pins go: detach is also how stale pins are cleared. */
	detach_pinned_link(dir);
	err = unet_clean_dir(dir);
	if (!err && rmdir(dir) && errno != ENOENT) {
		err = -errno;
		unet_log(UNET_LOG_WARN, "cannot remove %s: %s", dir, strerror(errno));
	}
	unet_unlock_dir(lock_fd);
	if (!err)
		unet_log(UNET_LOG_INFO, "%s: detached, pins removed from %s", ifname, dir);
	return err;
}
