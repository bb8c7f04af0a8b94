/* SPDX-License-Identifier: BSD-2-Clause */
/* doctor.c - unetctl doctor: for the user who runs it, whether an
 * endpoint would be direct or emulated, copy or zero-copy, native or skb,
 * what is missing and how to fix it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <bpf/libbpf.h>

#include "unetctl.h"

/* ---- doctor: why an endpoint would be direct or emulated ----------------- */

#define CAP_NET_RAW_BIT 13  /* AF_XDP sockets */
#define CAP_IPC_LOCK_BIT 14 /* the UMEM's locked memory beyond RLIMIT_MEMLOCK */
#define DIRECT_SEGMENT (8u << 20) /* the library's default segment */

/* Drivers with AF_XDP zero-copy (the kernel's xsk_pool users). */
static const char *const zc_drivers[] = { "i40e", "ice", "ixgbe", "igc", "igb", "mlx5_core",
					  "stmmac", "ena", "idpf", "virtio_net", NULL };

enum chk { CHK_OK, CHK_WARN, CHK_FAIL };

struct doctor {
	const char *ifname; /* NULL: no interface named */
	uid_t euid;
	char first_fail[512];
};

/* One check: "ok|warn|fail  NAME  MESSAGE  fix: FIX" (fix NULL: none). */
static void check(struct doctor *dr, enum chk st, const char *name, const char *fix,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void check(struct doctor *dr, enum chk st, const char *name, const char *fix,
		  const char *fmt, ...)
{
	static const char *const words[] = { "ok", "warn", "fail" };
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (st == CHK_FAIL && !dr->first_fail[0])
		snprintf(dr->first_fail, sizeof(dr->first_fail), "%s", msg);
	em_open(NULL, EM_LINE);
	em_bare("status", "", words[st]);
	em_bare("check", "", name);
	em_bare("message", "", msg);
	if (fix)
		em_bare("fix", "fix: ", fix);
	em_close();
}

/* The bpffs under the pin root, as this user sees it: ok (direct may pin
 * there), or not, with the reason in the check line. */
static bool doctor_bpffs(struct doctor *dr)
{
	const char *root = pin_root();
	enum chk bad = dr->euid == 0 ? CHK_FAIL : CHK_WARN;
	char path[PATH_MAX], *slash;
	struct statfs sf;
	struct stat st;

	/* The pin root, or its nearest ancestor that exists (the library
	 * makes the rest) and that this user can look at. */
	snprintf(path, sizeof(path), "%s", root);
	while (stat(path, &st) || statfs(path, &sf)) {
		slash = strrchr(path, '/');
		if (!slash || slash == path) {
			check(dr, bad, "bpffs", NULL, "cannot look at the pin root %s: %s", root,
			      strerror(errno));
			return false;
		}
		*slash = '\0';
	}
	if ((unsigned long)sf.f_type != BPF_FS_MAGIC) {
		check(dr, bad, "bpffs",
		      "mount -t bpf -o mode=0700 bpf /sys/fs/bpf, or point --pin-root or $UNET_PIN_ROOT "
		      "at a bpffs",
		      "no bpffs at the pin root %s (%s is not one)%s", root, path,
		      dr->euid ? ": only direct endpoints need it" : ": direct endpoints cannot pin");
		return false;
	}
	if (st.st_uid != 0 && st.st_uid != dr->euid) {
		check(dr, bad, "bpffs", "chown root and chmod 0700 it (or mount bpffs with mode=0700)",
		      "%s is owned by uid %u: the library refuses it", path, (unsigned)st.st_uid);
		return false;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		bool refused = !strcmp(path, root) || !(st.st_mode & S_ISVTX);

		check(dr, refused ? bad : CHK_WARN, "bpffs",
		      "mount -t bpf -o mode=0700 bpf ... (or chmod 0700 it)",
		      "%s (bpffs) is writable by group or others (mode %04o): %s", path,
		      (unsigned)(st.st_mode & 07777),
		      refused ? "the library refuses it"
			      : "sticky, so the library accepts it below, but mode=0700 is safer");
		return !refused;
	}
	check(dr, CHK_OK, "bpffs", NULL, "bpffs at %s, mode %04o, owner uid %u%s%s", path,
	      (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
	      strcmp(path, root) ? "; the pin root " : "", strcmp(path, root) ? root : "");
	return true;
}

/* The XDP program on the interface.  *native: attached in driver mode (or
 * not attached: auto tries native first); *mode says which.  Returns false
 * when a direct endpoint cannot have its program there. */
static bool doctor_xdp(struct doctor *dr, int ifindex, bool *native, const char **mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char fix[128];
	int err;

	*native = true;
	*mode = "unknown";
	snprintf(fix, sizeof(fix), "unetctl attach %s [--mode native|skb] (as root)", dr->ifname);
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err) {
		check(dr, CHK_WARN, "xdp", NULL, "cannot ask the kernel about %s's XDP program: %s",
		      dr->ifname, strerror(-err));
		return true;
	}
	*native = q.attach_mode != XDP_ATTACHED_SKB;
	*mode = !q.prog_id ? "auto (not attached yet: native, else skb)"
		: *native  ? "native"
			   : "skb";
	if (dr->euid == 0) {
		struct unet_iface_opts opts = iface_opts();
		struct unet_iface_status st;
		struct unet_iface *iface = unet_iface__open(dr->ifname, &opts);

		if (iface) {
			err = unet_iface__status(iface, &st);
			unet_iface__close(iface);
			if (!err) {
				*native = st.mode != UNET_XDP_MODE_SKB;
				*mode = *native ? "native" : "skb";
				check(dr, CHK_OK, "xdp", NULL,
				      "unet program attached to %s, %s mode (prog %u)%s", dr->ifname,
				      mode_name(st.mode, st.link_alive), st.prog_id,
				      *native ? "" : ": skb (generic) XDP has no zero-copy");
				return true;
			}
		} else {
			err = -errno;
		}
		if (err != -ENOENT) {
			check(dr, CHK_FAIL, "xdp", NULL, "%s: %s%s%s", dr->ifname, strerror(-err),
			      last_lib_err[0] ? ": " : "", last_lib_err);
			return false;
		}
		if (q.prog_id) {
			check(dr, CHK_FAIL, "xdp", "detach it (ip link set dev IFACE xdp off) or use another interface",
			      "another XDP program (id %u) is attached to %s", q.prog_id, dr->ifname);
			return false;
		}
		check(dr, CHK_WARN, "xdp", fix,
		      "no XDP program on %s: the first direct endpoint attaches unet's (native, else "
		      "skb)", dr->ifname);
		return true;
	}
	if (q.prog_id)
		check(dr, CHK_OK, "xdp", NULL,
		      "an XDP program (id %u) is attached to %s in %s mode (whether it is unet's only "
		      "root can tell)",
		      q.prog_id, dr->ifname,
		      q.attach_mode == XDP_ATTACHED_SKB ? "skb (generic)"
		      : q.attach_mode == XDP_ATTACHED_HW ? "hardware"
							: "native (driver)");
	else
		check(dr, CHK_WARN, "xdp", fix,
		      "no XDP program on %s: unetd attaches unet's when it serves the first "
		      "endpoint there", dr->ifname);
	return true;
}

/* The driver, and whether AF_XDP zero-copy is to be had (returned). */
static bool doctor_zerocopy(struct doctor *dr, bool native, bool direct)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	bool zc = false;
	int fd;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dr->ifname);
	ifr.ifr_data = (void *)&di;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCETHTOOL, &ifr)) {
		check(dr, CHK_WARN, "zerocopy", NULL, "cannot ask %s's driver (ethtool -i): %s",
		      dr->ifname, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	di.driver[sizeof(di.driver) - 1] = '\0';
	for (const char *const *d = zc_drivers; *d; d++)
		zc = zc || !strcmp(di.driver, *d);
	if (!direct)
		check(dr, CHK_WARN, "zerocopy", "a direct endpoint (root) on a NIC with zero-copy",
		      "copy: unetd copies every frame of an emulated endpoint (driver %s)", di.driver);
	else if (!zc)
		check(dr, CHK_WARN, "zerocopy",
		      "a NIC whose driver has AF_XDP zero-copy (ice, i40e, ixgbe, igc, mlx5_core, ...)",
		      "copy mode: driver %s has no AF_XDP zero-copy%s", di.driver,
		      strcmp(di.driver, "veth") ? " that unetctl knows of (the library tries it first)"
						 : "");
	else if (!native)
		check(dr, CHK_WARN, "zerocopy",
		      "unetctl detach, then unetctl attach IFACE --mode native",
		      "copy mode: driver %s has zero-copy, but the program runs in skb mode",
		      di.driver);
	else
		check(dr, CHK_OK, "zerocopy", NULL,
		      "driver %s has AF_XDP zero-copy: the library asks for it first", di.driver);
	return direct && zc && native;
}

#define GRANT_SEGMENT_DEFAULT (4u << 20) /* unetd's default for a direct grant */

/* RLIMIT_MEMLOCK: what a direct endpoint's UMEM is charged to (for a
 * grant, unetd reads the caller's limit).  granted: unetd would grant the
 * caller a direct endpoint. */
static bool doctor_memlock(struct doctor *dr, bool granted)
{
	struct rlimit rl;
	char lim[32];

	if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
		check(dr, CHK_WARN, "memlock", NULL, "getrlimit: %s", strerror(errno));
		return true;
	}
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(lim, sizeof(lim), "unlimited");
	else
		snprintf(lim, sizeof(lim), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
	if (dr->euid != 0 && !granted) {
		check(dr, CHK_OK, "memlock", NULL,
		      "RLIMIT_MEMLOCK %s: emulated endpoints lock none of your memory (unetd's region)",
		      lim);
		return true;
	}
	if (dr->euid != 0) {
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < GRANT_SEGMENT_DEFAULT) {
			check(dr, CHK_FAIL, "memlock", "ulimit -l 8192 or more (or a smaller segment)",
			      "RLIMIT_MEMLOCK %s: unetd charges a granted segment (4 MiB by default) to "
			      "it and refuses the grant",
			      lim);
			return false;
		}
		check(dr, CHK_OK, "memlock", NULL,
		      "RLIMIT_MEMLOCK %s: room for a granted segment (4 MiB by default, charged "
		      "to you by unetd)",
		      lim);
		return true;
	}
	if (have_cap(CAP_IPC_LOCK_BIT)) {
		check(dr, CHK_OK, "memlock", NULL,
		      "RLIMIT_MEMLOCK %s, and CAP_IPC_LOCK: the UMEM is not limited by it", lim);
		return true;
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < DIRECT_SEGMENT + (1u << 20)) {
		check(dr, CHK_FAIL, "memlock", "ulimit -l unlimited (LimitMEMLOCK=infinity in a unit)",
		      "RLIMIT_MEMLOCK %s without CAP_IPC_LOCK: too little for the default 8 MiB "
		      "segment (ENOBUFS)",
		      lim);
		return false;
	}
	check(dr, CHK_OK, "memlock", NULL, "RLIMIT_MEMLOCK %s: room for the default 8 MiB segment",
	      lim);
	return true;
}

/* What unetd would give the caller on the interface. */
struct daemon_offer {
	bool emulated;	   /* an emulated endpoint (a queue not set aside for grants) */
	bool direct;	   /* a direct grant (the policy's kind and a queue set aside) */
	bool policy_direct; /* the policy grants direct: auto asks for it */
	char rule[64];
};

/* The device's receive queues, as a mask (1 when /sys does not say). */
static uint32_t device_queue_mask(const char *ifname)
{
	char path[128];
	unsigned int n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%u", ifname, n);
		if (access(path, F_OK) || n == 32)
			break;
	}
	return n ? (n >= 32 ? UINT32_MAX : (1u << n) - 1) : 1;
}

/* unetd: reachable, its protocol, and what its policy grants us (*o). */
/* Whether spinning can pay here: a spinning client, its peer and (for an
 * emulated endpoint) unetd each want a CPU while a message is in flight;
 * with fewer CPUs than that they take turns in time slices and a
 * spinning round trip is slower than a blocking one. */
static void doctor_spin(struct doctor *dr)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n >= 3)
		check(dr, CHK_OK, "spin", NULL,
		      "%ld CPUs: a spinning wait (a poll loop, or unet_endpoint__set_spin_us) has a CPU to itself", n);
	else
		check(dr, CHK_WARN, "spin", "block in unet_endpoint__wait with a small spin budget instead of polling in a loop",
		      "%ld CPUs: a spinning process, its peer and unetd compete for them; "
		      "spinning waits are slower than blocking ones here (unetd does not spin)",
		      n);
}

static void doctor_daemon(struct doctor *dr, bool direct, struct daemon_offer *o)
{
	uint32_t all = dr->ifname ? device_queue_mask(dr->ifname) : UINT32_MAX, gq;
	char *rule = o->rule;
	size_t rlen = sizeof(o->rule);
	enum chk bad = direct ? CHK_WARN : CHK_FAIL;
	struct unetd_whoami req = { { 0 } };
	struct unetd_whoami_rep w = { 0 };
	struct daemon_conn dc;
	char gids[160] = "", fix[200], quota[96], seg[32];
	uint32_t len = 0;
	size_t off = 0;
	bool ok;
	int err;

	if (daemon_open(&dc)) {
		check(dr, bad, "daemon",
		      "start unetd (it serves emulated endpoints), or point --socket or "
		      "$" UNETD_SOCKET_ENV " at its socket",
		      "%s", dc.err);
		check(dr, bad, "policy", NULL, "cannot ask unetd's policy: unetd not reachable");
		return;
	}
	check(dr, CHK_OK, "daemon", NULL, "unetd at %s (pid %u), protocol version %u",
	      daemon_socket(), dc.pid, dc.version);
	if (dr->ifname)
		snprintf(req.ifname, sizeof(req.ifname), "%s", dr->ifname);
	err = daemon_call(&dc, UNETD_REQ_WHOAMI, &req, sizeof(req), &w, sizeof(w), &len);
	daemon_close(&dc);
	if (!err && len < sizeof(w))
		err = -EPROTO;
	if (err) {
		check(dr, bad, "policy", "update unetd to the version of this unetctl",
		      "unetd at %s cannot say what its policy grants (%s): an older unetd without "
		      "WHOAMI?",
		      daemon_socket(), err == -ECONNRESET ? "it dropped the question" : strerror(-err));
		return;
	}
	w.tags[sizeof(w.tags) - 1] = w.udp[sizeof(w.udp) - 1] = w.rule[sizeof(w.rule) - 1] = '\0';
	snprintf(rule, rlen, "%s", w.rule[0] ? w.rule : "no rule");
	for (uint32_t i = 0; i < w.ngids && i < UNETD_WHOAMI_MAX_GIDS && off < sizeof(gids) - 12; i++)
		off += (size_t)snprintf(gids + off, sizeof(gids) - off, "%s%u", i ? "," : "", w.gids[i]);
	if (!dr->ifname) {
		check(dr, CHK_WARN, "policy", "unetctl doctor IFACE",
		      "unetd takes you for uid %u gid %u groups %s; name an interface to ask for its "
		      "grant",
		      w.uid, w.gid, w.ngids ? gids : "none");
		o->emulated = true; /* if the policy grants it */
		return;
	}
	snprintf(fix, sizeof(fix),
		 "add a rule to unetd's policy, e.g. \"user %u iface %s kinds emulated tags "
		 "1024-65535\" (docs/unetd-policy.md), and restart unetd",
		 w.uid, dr->ifname);
	if (!w.allowed) {
		check(dr, bad, "policy", fix,
		      "unetd's policy refuses uid %u (gid %u, groups %s) on %s: %s", w.uid, w.gid,
		      w.ngids ? gids : "none", dr->ifname, w.rule[0] ? w.rule : "no rule matches");
		return;
	}
	if (w.max_segment_bytes == UINT64_MAX)
		snprintf(seg, sizeof(seg), "unlimited");
	else if (!(w.max_segment_bytes % (1u << 20)))
		snprintf(seg, sizeof(seg), "%lluM", (unsigned long long)(w.max_segment_bytes >> 20));
	else
		snprintf(seg, sizeof(seg), "%llu bytes", (unsigned long long)w.max_segment_bytes);
	if (w.max_endpoints == UINT32_MAX)
		snprintf(quota, sizeof(quota), "endpoints unlimited");
	else
		snprintf(quota, sizeof(quota), "endpoints %u", w.max_endpoints);
	if (w.max_endpoints != UINT32_MAX && w.endpoints_held >= w.max_endpoints) {
		check(dr, bad, "policy", "close one of them, or raise \"endpoints\" in the rule",
		      "uid %u holds %u of its %u endpoints (%s): a new one gets EDQUOT", w.uid,
		      w.endpoints_held, w.max_endpoints, w.rule);
		return;
	}
	/* Direct grants go on the queues set aside (--grant-queues), emulated
	 * endpoints on the others (the daemon's real endpoint). */
	gq = w.grant_queues & all;
	o->policy_direct = (w.kinds & (1u << UNETD_KIND_DIRECT)) != 0;
	o->direct = o->policy_direct && gq;
	o->emulated = (w.kinds & (1u << UNETD_KIND_EMULATED)) && (all & ~gq);
	ok = o->direct || o->emulated;
	check(dr, ok ? CHK_OK : bad, "policy",
	      ok ? NULL : "unetd --grant-queues MASK (direct), or a queue left for emulated endpoints",
	      "unetd grants uid %u (gid %u, groups %s) on %s: kinds %s%s%s, tags %s, udp %s, %s "
	      "(holds %u), segment %s, share %u (%s); queues set aside for direct grants: %#x%s",
	      w.uid, w.gid, w.ngids ? gids : "none", dr->ifname,
	      (w.kinds & (1u << UNETD_KIND_EMULATED)) ? "emulated" : "",
	      (w.kinds & (1u << UNETD_KIND_EMULATED)) && o->policy_direct ? "," : "",
	      o->policy_direct ? "direct" : "", w.tags, w.udp, quota, w.endpoints_held, seg,
	      w.share, w.rule, gq,
	      o->policy_direct && !gq ? " (none: unetd cannot grant a direct endpoint)"
	      : !(all & ~gq)	      ? " (all: no emulated endpoints here)"
				      : "");
}

int do_doctor(const struct cmd *c, int argc, char **argv)
{
	struct doctor dr = { .euid = geteuid() };
	bool iface_ok = true, direct = true, emulated, native = true, zc = false, granted = false;
	struct daemon_offer o = { 0 };
	const char *mode = "unknown";
	char *pos[1], why[800];
	int n, r, ifindex = 0;

	r = parse_args(c, argc, argv, NULL, pos, 0, 1, &n);
	if (r)
		return r < 0;
	dr.ifname = n ? pos[0] : NULL;
	if (dr.ifname && strlen(dr.ifname) >= IF_NAMESIZE)
		return fail("invalid interface name: %s", dr.ifname);

	em_open(NULL, EM_ROWS);
	if (dr.ifname)
		em_str("ifname", dr.ifname);
	em_u64("euid", dr.euid);
	em_open_array("checks");
	if (dr.ifname) {
		ifindex = (int)if_nametoindex(dr.ifname);
		iface_ok = ifindex > 0;
		if (iface_ok)
			check(&dr, CHK_OK, "interface", NULL, "%s (ifindex %d)", dr.ifname, ifindex);
		else
			check(&dr, CHK_FAIL, "interface", "name one of ip link's interfaces",
			      "no interface %s in this network namespace", dr.ifname);
	}
	if (dr.euid == 0 && have_cap(CAP_SYS_ADMIN_BIT) && have_cap(CAP_NET_RAW_BIT)) {
		check(&dr, CHK_OK, "euid", NULL,
		      "euid 0: the library makes a direct endpoint (its own AF_XDP sockets)");
	} else if (dr.euid == 0) {
		direct = false;
		check(&dr, CHK_FAIL, "euid", "run with root's full capabilities",
		      "euid 0 without CAP_SYS_ADMIN and CAP_NET_RAW: no direct endpoint");
	} else {
		direct = false;
		check(&dr, CHK_WARN, "euid", "run as root, or have unetd's policy grant you direct",
		      "euid %u is not root: only root makes its own direct endpoints (the pins and "
		      "AF_XDP sockets are root's), so the library asks unetd, which grants a direct "
		      "one or serves an emulated one as its policy says",
		      (unsigned)dr.euid);
	}
	direct = doctor_bpffs(&dr) && direct;
	if (dr.ifname && iface_ok)
		direct = doctor_xdp(&dr, ifindex, &native, &mode) && direct;
	doctor_daemon(&dr, direct && dr.euid == 0, &o);
	if (dr.euid == 0) {
		direct = doctor_memlock(&dr, false) && direct;
	} else {
		/* Anyone else asks unetd: a direct grant when the policy has
		 * one for them (auto asks for it), else emulated. */
		granted = o.direct && doctor_memlock(&dr, true);
		direct = granted;
	}
	emulated = o.emulated;
	if (dr.ifname && iface_ok)
		zc = doctor_zerocopy(&dr, native, direct);
	doctor_spin(&dr);
	direct = direct && iface_ok;
	emulated = emulated && iface_ok;
	em_close_array();

	if (direct && granted)
		snprintf(why, sizeof(why),
			 "euid %u is not root: unetd grants a direct endpoint on a queue set aside "
			 "(%s)",
			 (unsigned)dr.euid, o.rule);
	else if (direct)
		snprintf(why, sizeof(why), "euid 0: direct, own AF_XDP sockets%s",
			 dr.ifname ? (native ? ", native XDP" : ", skb XDP") : "");
	else if (emulated && dr.euid == 0)
		snprintf(why, sizeof(why),
			 "not direct (%s); emulated by unetd if asked for (kind "
			 "UNET_ENDPOINT_EMULATED: auto tries direct as root) (%s)",
			 dr.first_fail, o.rule);
	else if (emulated)
		snprintf(why, sizeof(why), "not direct (euid %u is not root, and %s); emulated by unetd (%s)%s",
			 (unsigned)dr.euid,
			 !o.policy_direct ? "the policy grants no direct endpoint"
			 : o.direct	  ? "the grant's locked memory does not fit"
					  : "unetd sets no queue aside for direct grants",
			 dr.ifname ? o.rule : "if the policy grants it",
			 o.policy_direct ? ": ask for UNET_ENDPOINT_EMULATED, auto asks unetd for direct"
					 : "");
	else
		snprintf(why, sizeof(why), "%s", dr.first_fail);
	em_str("endpoint", direct ? "direct" : emulated ? "emulated" : "none");
	if (direct || emulated) {
		em_str("copy", zc ? "zero-copy" : "copy");
		em_str("xdp_mode", mode);
	}
	em_str("reason", why);
	em_close();
	if (!direct && !emulated)
		return fail("uid %u can get no endpoint%s%s: %s", (unsigned)dr.euid,
			    dr.ifname ? " on " : "", dr.ifname ? dr.ifname : "", dr.first_fail);
	return 0;
}
