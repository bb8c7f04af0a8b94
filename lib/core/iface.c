/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface.c - an opened interface: its pinned maps opened and checked
 * against the attached program, the interface lock, its devices' queues,
 * its status and counters, listing the attached interfaces, walking its
 * maps, and MAC addresses as text.  Above
 * iface_pin.c; the slot and channel tables kept in its maps are
 * iface_alive.c, iface_channel.c and iface_slot.c.
 */
#include <ctype.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <dirent.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/sockios.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/iface_impl.h"

_Static_assert((int)UNET_STAT__COUNT == (int)UNET_CTR__COUNT,
	       "unet.h UNET_STAT_* and unet_abi.h UNET_CTR_* must match");

/* ---- Open / close --------------------------------------------------- */

static int prog_map_ids(struct unet_iface *iface)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info), prog_id = 0;
	int fd, state, err = 0;

	state = unet_pinned_link_state(iface->pin_dir, iface->ifindex, &prog_id);
	if (state == UNET_LINK_ELSEWHERE)
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

	err = unet_pin_path(path, sizeof(path), iface->pin_dir, name);
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

	err = unet_iface_dir(opts, ifname, iface->pin_dir, sizeof(iface->pin_dir));
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
	err = unet_pin_path(path, sizeof(path), iface->pin_dir, UNET_PIN_LINK);
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
	err = unet_opts_pin_root(opts, &root);
	if (err)
		return err;
	root = unet_pin_root(root);
	err = unet_check_bpffs(root);
	if (err)
		return err;
	d = opendir(root);
	if (!d)
		return errno == ENOENT ? 0 : -errno; /* ENOENT: nothing attached */
	err = unet_netns_ino(&ns);
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
		if (unet_check_ifname(name))
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

int unet_iface__attached(const char *ifname, const struct unet_iface_opts *opts)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stat st;
	int err;

	err = unet_iface_dir(opts, ifname, dir, sizeof(dir));
	if (!err)
		err = unet_pin_path(path, sizeof(path), dir, UNET_PIN_LINK);
	if (err)
		return err == -ENOENT ? 0 : err; /* ENOENT: no pin root yet */
	if (stat(path, &st) == 0)
		return 1;
	return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
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

	if (!ifname || unet_check_ifname(ifname))
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

	state = st->ifindex ? unet_pinned_link_state(iface->pin_dir, st->ifindex, &prog_id) : 0;
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
		[UNET_STAT_DROP_CHAN_IP] = "drop_chan_ip",
		[UNET_STAT_DROP_CHAN_FRAG] = "drop_chan_frag",
		[UNET_STAT_DROP_CHAN_UDPLEN] = "drop_chan_udplen",
		[UNET_STAT_DROP_CHAN_CSUM] = "drop_chan_csum",
		[UNET_STAT_DROP_CHAN_KIND] = "drop_chan_kind",
		[UNET_STAT_CHAN_DELIVERED] = "chan_delivered",
		[UNET_STAT_DROP_IP6_EXTHDR] = "drop_ip6_exthdr",
		[UNET_STAT_ND_DELIVERED] = "nd_delivered",
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

/* ---- Map keys --------------------------------------------------------- */

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

/* Every entry of our __u32-keyed maps (iface_impl.h); at most twice the
 * channels' keys, as unet_map_keys allows for a map churning under us. */
int unet_map_walk_u32(int fd, void *val, int (*fn)(__u32 key, void *val, void *ctx), void *ctx)
{
	__u32 *keys;
	size_t n;
	int ret = unet_map_keys(fd, sizeof(*keys), 2 * UNET_MAX_CHANNELS, (void **)&keys, &n);

	if (ret)
		return ret;
	for (size_t i = 0; i < n && !ret; i++)
		if (!bpf_map_lookup_elem(fd, &keys[i], val)) /* else deleted meanwhile */
			ret = fn(keys[i], val, ctx);
	free(keys);
	return ret;
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
