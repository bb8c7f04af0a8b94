/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chan.c - unetd-fuzz's routable channel opens: CH_OPEN_IPV4 and
 * CH_OPEN_IPV6 requests whose header and length are right and whose
 * fields are hostile, on a connection of their own that never sends a
 * malformed request (so it keeps its endpoints and channels), each one
 * judged from outside.
 *
 * The fuzz knows what its connection holds (its endpoints, the channels
 * it opened, a source port it holds itself), what the test's policy
 * grants and which peers on the link answer; from that alone it knows
 * when a request names something the caller may not use, and then the
 * daemon must refuse it:
 *   endpoint   not one of this connection's live endpoints (another
 *              client's, one destroyed, one of a connection gone, none)
 *   tag0       tag or peer tag 0
 *   ungranted  a tag outside the policy's grant
 *   open       a tag this connection has open already (either family,
 *              either endpoint)
 *   port       a tag whose source port is held: by a channel open here
 *              (tags 16384 apart share a port) or by our own socket
 *   peer       a peer that is not one of the answering peers: none,
 *              loopback, multicast, broadcast, the daemon host's own
 *              addresses, IPv4-mapped and -compatible, link-local and
 *              on-link addresses nobody answers for, anything else
 *   quota      this connection alone holds the user's channel quota
 *   routable   this connection alone holds 256 routable channels
 *   pad        the request's pad is not zero (a field reserved for a
 *              later version of the protocol)
 * A channel the daemon opens must carry what the daemon decides: the
 * source port derived from the tag (and held: we cannot bind it), one of
 * the interface's addresses, the peer asked for, the peer's port asked
 * for or derived, the endpoint's MAC.  Every request must be answered.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "unet_abi.h"

#define MAX_EPS 2
#define MAX_OPEN 512
#define MAX_NOT_OURS 32
#define MAX_OWN 8
#define MAX_ROUTABLE 256 /* the daemon's bound per user (docs/unetd.md) */
/* A liveness bound, not a speed: the daemon answers in microseconds. */
#define REPLY_MS 5000

enum reason {
	R_EP, R_TAG0, R_UNGRANTED, R_OPEN, R_PORT, R_PEER, R_QUOTA, R_ROUTABLE, R_PAD, R__COUNT
};

static const char *const reason_name[R__COUNT] = {
	"endpoint", "tag0", "ungranted", "open", "port", "peer", "quota", "routable", "pad",
};

struct open_chan {
	uint32_t ep;
	uint16_t tag;
};

struct chan_fuzz {
	struct chan_fuzz_opts o;
	int fd;
	uint32_t seq;
	uint32_t ep[MAX_EPS];
	bool live[MAX_EPS];
	uint8_t mac[MAX_EPS][6];
	uint32_t not_ours[MAX_NOT_OURS]; /* a ring of handles that are not ours */
	uint32_t nnot_ours, max_handle;
	struct open_chan open[MAX_OPEN];
	uint32_t nopen;
	int held_fd; /* our own socket on held_tag's source port */
	uint16_t held_tag;
	uint32_t own4[MAX_OWN], mask4[MAX_OWN], nown4;
	uint8_t own6[MAX_OWN][16];
	uint32_t nown6;
	/* counts */
	long opens, opened, opened6, refused, must_refuse, refused_by[R__COUNT], closes, recycles;
	long wrong, unanswered, bad;
};

static uint16_t sport_of(uint16_t tag)
{
	return unet_chan_sport(tag);
}

static void remember_not_ours(struct chan_fuzz *f, uint32_t ep)
{
	f->not_ours[f->nnot_ours++ % MAX_NOT_OURS] = ep;
	if (ep > f->max_handle && ep != UINT32_MAX)
		f->max_handle = ep;
}

void chan_fuzz_foreign(struct chan_fuzz *f, uint32_t ep)
{
	if (f)
		remember_not_ours(f, ep);
}

static int ep_slot(const struct chan_fuzz *f, uint32_t ep)
{
	for (int i = 0; i < MAX_EPS; i++)
		if (f->live[i] && f->ep[i] == ep)
			return i;
	return -1;
}

static void own_addrs(struct chan_fuzz *f)
{
	struct ifaddrs *ifa;

	if (getifaddrs(&ifa))
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, f->o.iface))
			continue;
		if (i->ifa_addr->sa_family == AF_INET && f->nown4 < MAX_OWN) {
			f->own4[f->nown4] = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
			f->mask4[f->nown4++] =
				i->ifa_netmask ? ((struct sockaddr_in *)(void *)i->ifa_netmask)->sin_addr.s_addr
					       : htonl(0xffffff00u);
		} else if (i->ifa_addr->sa_family == AF_INET6 && f->nown6 < MAX_OWN) {
			memcpy(f->own6[f->nown6++],
			       ((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr.s6_addr, 16);
		}
	}
	freeifaddrs(ifa);
}

/* A dual-stack UDP socket on port, as the daemon holds a channel's:
 * its fd, or -errno. */
static int bind_port(uint16_t port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), zero = 0, err;

	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static bool ep_create(struct chan_fuzz *f, int slot)
{
	struct unetd_ep_create c = { .kind = UNETD_KIND_EMULATED, .frame_size = 2048 };
	struct unetd_ep_created ok;
	struct fuzz_reply r;

	snprintf(c.ifname, sizeof(c.ifname), "%s", f->o.iface);
	/* EBUSY while the device's last interface is torn down (another
	 * connection's endpoints gone): ask again, as the library does. */
	for (int tries = 0;; tries++) {
		if (call(f->fd, ++f->seq, UNETD_REQ_EP_CREATE, &c, sizeof(c), REPLY_MS, &r) != 1) {
			f->unanswered++;
			return false;
		}
		if (r.h.err != -EBUSY || tries == 150)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
	if (r.h.err || r.body_len < offsetof(struct unetd_ep_created, reason))
		return false; /* the quota, when another connection of ours holds it */
	memcpy(&ok, r.body, sizeof(ok));
	f->ep[slot] = ok.ep;
	memcpy(f->mac[slot], ok.mac, 6);
	f->live[slot] = true;
	if (ok.ep > f->max_handle)
		f->max_handle = ok.ep;
	return true;
}

struct chan_fuzz *chan_fuzz_new(const struct chan_fuzz_opts *o)
{
	struct chan_fuzz *f = calloc(1, sizeof(*f));
	struct unetd_hello hello = { .version = UNETD_PROTO_VERSION };
	struct fuzz_reply r;

	if (!f)
		return NULL;
	f->o = *o;
	f->held_fd = -1;
	f->fd = connect_to(o->path);
	if (f->fd < 0 || call(f->fd, ++f->seq, UNETD_REQ_HELLO, &hello, sizeof(hello), REPLY_MS, &r) != 1 ||
	    r.h.err) {
		fprintf(stderr, "unetd-fuzz: the channel fuzz's connection: %s\n",
			f->fd < 0 ? strerror(errno) : "HELLO not answered");
		goto fail;
	}
	for (int i = 0; i < MAX_EPS; i++)
		if (!ep_create(f, i)) {
			fprintf(stderr, "unetd-fuzz: the channel fuzz's endpoint %d on %s: %s\n", i,
				o->iface, r.h.msg);
			goto fail;
		}
	own_addrs(f);
	/* A granted tag whose source port we hold ourselves: the daemon
	 * must not open a channel it cannot hold the port of. */
	for (int tries = 0; tries < 16 && f->held_fd < 0; tries++) {
		f->held_tag = (uint16_t)(o->tag_hi ? o->tag_lo + rnd() % (o->tag_hi - o->tag_lo + 1u)
						   : 1 + rnd() % 65535);
		if (f->held_tag)
			f->held_fd = bind_port(sport_of(f->held_tag));
	}
	if (f->held_fd < 0) {
		fprintf(stderr, "unetd-fuzz: no source port to hold\n");
		goto fail;
	}
	return f;
fail:
	if (f->fd >= 0)
		close(f->fd);
	free(f);
	return NULL;
}

/* ---- what an open asks for ------------------------------------------------- */

static uint32_t pick_ep(struct chan_fuzz *f)
{
	uint32_t r = rnd() % 20;
	int i = (int)(rnd() % MAX_EPS);

	if (r < 14 && f->live[i])
		return f->ep[i];
	if (r < 14 && f->live[!i])
		return f->ep[!i];
	if (r < 17 && f->nnot_ours)
		return f->not_ours[rnd() % (f->nnot_ours < MAX_NOT_OURS ? f->nnot_ours : MAX_NOT_OURS)];
	if (r < 19)
		return rnd() % (f->max_handle + 3);
	return rnd() % 2 ? 0 : UINT32_MAX;
}

static uint16_t pick_tag(struct chan_fuzz *f)
{
	uint32_t r = rnd() % 20;
	uint16_t lo = f->o.tag_lo, hi = f->o.tag_hi;

	if (r < 2 && f->nopen)
		return f->open[rnd() % f->nopen].tag;
	if (r < 4) /* shares a held port: tags 16384 apart */
		return (uint16_t)((f->nopen && rnd() % 2 ? f->open[rnd() % f->nopen].tag : f->held_tag) +
				  16384u * (1 + rnd() % 3));
	if (r < 5)
		return f->held_tag;
	if (r < 6)
		return 0;
	if (r < 8 && hi)
		return rnd() % 2 ? (uint16_t)(lo - 1) : (uint16_t)(hi + 1);
	if (r < 10)
		return rnd() % 2 ? 65535 : (uint16_t)rnd();
	return hi ? (uint16_t)(lo + rnd() % (hi - lo + 1u)) : (uint16_t)(1 + rnd() % 65535);
}

static uint16_t pick_peer_tag(uint16_t tag)
{
	switch (rnd() % 16) {
	case 0:
		return 0;
	case 1:
		return 65535;
	case 2:
		return tag;
	default:
		return (uint16_t)(1 + rnd() % 65535);
	}
}

static uint16_t pick_port(uint16_t tag)
{
	static const uint16_t ports[] = { 1, 22, 53, 1023, 1024, UNET_CHAN_PORT_DEFAULT, 65535 };
	uint32_t r = rnd() % 8;

	if (r < 3)
		return 0;
	if (r < 5)
		return ports[rnd() % (sizeof(ports) / sizeof(ports[0]))];
	if (r < 6)
		return sport_of(tag);
	return (uint16_t)rnd();
}

static uint32_t pick_peer4(struct chan_fuzz *f)
{
	static const uint32_t never[] = { 0, 0xffffffffu, 0xe0000001u, 0xefff0102u, 0x7f000001u,
					  0x7f010203u, 0xa9fe0101u, 0xf0000001u, 0x00010203u };
	uint32_t r = rnd() % 16, own, mask;

	if (r < 6 && f->o.npeers4)
		return f->o.peers4[rnd() % f->o.npeers4];
	if (r < 9)
		return htonl(never[rnd() % (sizeof(never) / sizeof(never[0]))]);
	if (r < 14 && f->nown4) {
		int i = (int)(rnd() % f->nown4);

		own = f->own4[i];
		mask = f->mask4[i];
		switch (r) {
		case 9:
			return own;			  /* the daemon host's */
		case 10:
			return own | ~mask;		  /* the link's broadcast */
		default:
			return (own & mask) | (rnd() & ~mask); /* on the link, silent */
		}
	}
	return rnd();
}

static void pick_peer6(struct chan_fuzz *f, uint8_t a[16])
{
	uint32_t r = rnd() % 16, v4 = f->o.npeers4 ? f->o.peers4[0] : htonl(0x0ac90001u);

	memset(a, 0, 16);
	if (r < 6 && f->o.npeers6) {
		memcpy(a, f->o.peers6[rnd() % f->o.npeers6], 16);
		return;
	}
	switch (r) {
	case 6: /* :: or ::1 */
		a[15] = (uint8_t)(rnd() % 2);
		return;
	case 7: /* multicast, link or global scope */
		a[0] = 0xff;
		a[1] = rnd() % 2 ? 0x02 : 0x0e;
		a[15] = (uint8_t)(1 + rnd() % 255);
		return;
	case 8: /* an IPv4 peer that answers, mapped or compatible */
		if (rnd() % 2)
			a[10] = a[11] = 0xff;
		memcpy(a + 12, &v4, 4);
		return;
	case 9: /* the daemon host's own */
		if (f->nown6) {
			memcpy(a, f->own6[rnd() % f->nown6], 16);
			return;
		}
		break;
	case 10: /* link-local, silent */
		a[0] = 0xfe;
		a[1] = 0x80;
		for (int i = 8; i < 16; i++)
			a[i] = (uint8_t)rnd();
		return;
	case 11:
	case 12: /* on the link (an own address's /64), silent */
		if (f->nown6) {
			memcpy(a, f->own6[rnd() % f->nown6], 16);
			for (int i = 8; i < 16; i++)
				a[i] = (uint8_t)rnd();
			return;
		}
		break;
	}
	for (int i = 0; i < 16; i++)
		a[i] = (uint8_t)rnd();
}

/* ---- the judgement ------------------------------------------------------------ */

static bool is_peer(const struct chan_fuzz *f, bool v6, uint32_t a4, const uint8_t *a6)
{
	for (uint32_t i = 0; !v6 && i < f->o.npeers4; i++)
		if (f->o.peers4[i] == a4)
			return true;
	for (uint32_t i = 0; v6 && i < f->o.npeers6; i++)
		if (!memcmp(f->o.peers6[i], a6, 16))
			return true;
	return false;
}

static bool is_own(const struct chan_fuzz *f, bool v6, uint32_t a4, const uint8_t *a6)
{
	for (uint32_t i = 0; !v6 && i < f->nown4; i++)
		if (f->own4[i] == a4)
			return true;
	for (uint32_t i = 0; v6 && i < f->nown6; i++)
		if (!memcmp(f->own6[i], a6, 16))
			return true;
	return false;
}

/* Why the daemon must refuse an open of tag (peer_tag, to the peer) on
 * ep: a mask of enum reason, 0 when it may open it. */
static unsigned must_refuse(const struct chan_fuzz *f, uint32_t ep, uint16_t tag,
			    uint16_t peer_tag, bool v6, uint32_t a4, const uint8_t *a6)
{
	unsigned m = 0;

	if (ep_slot(f, ep) < 0)
		m |= 1u << R_EP;
	if (!tag || !peer_tag)
		m |= 1u << R_TAG0;
	if (f->o.tag_hi && (tag < f->o.tag_lo || tag > f->o.tag_hi))
		m |= 1u << R_UNGRANTED;
	if (sport_of(tag) == sport_of(f->held_tag))
		m |= 1u << R_PORT;
	for (uint32_t i = 0; i < f->nopen; i++) {
		if (f->open[i].tag == tag)
			m |= 1u << R_OPEN;
		else if (sport_of(f->open[i].tag) == sport_of(tag))
			m |= 1u << R_PORT;
	}
	if (!is_peer(f, v6, a4, a6))
		m |= 1u << R_PEER;
	if (f->o.quota && f->nopen >= f->o.quota)
		m |= 1u << R_QUOTA;
	if (f->nopen >= MAX_ROUTABLE)
		m |= 1u << R_ROUTABLE;
	return m;
}

static void describe(char *out, size_t len, bool v6, uint32_t ep, uint16_t tag, uint16_t peer_tag,
		     uint32_t a4, const uint8_t *a6, unsigned mask)
{
	char a[INET6_ADDRSTRLEN] = "?";
	size_t n;

	inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (const void *)a6 : (const void *)&a4, a, sizeof(a));
	n = (size_t)snprintf(out, len, "IPv%c ep %u tag %u peer %s tag %u", v6 ? '6' : '4', ep, tag,
			     a, peer_tag);
	for (int i = 0; i < R__COUNT && n < len; i++)
		if (mask & (1u << i))
			n += (size_t)snprintf(out + n, len - n, " [%s]", reason_name[i]);
}

/* What an opened channel's reply says, against what the daemon must
 * have decided: NULL, or what is wrong. */
static const char *check_opened(const struct chan_fuzz *f, const struct fuzz_reply *r, int slot,
				bool v6, uint16_t tag, uint16_t peer_tag, uint16_t peer_port,
				uint32_t a4, const uint8_t *a6)
{
	uint16_t sport, dport, pp, max_payload;
	uint8_t src_mac[6];
	int fd;

	if (v6) {
		struct unetd_ch_opened_ipv6 o;

		if (r->body_len != sizeof(o))
			return "a reply of the wrong size";
		memcpy(&o, r->body, sizeof(o));
		if (memcmp(o.daddr, a6, 16))
			return "another peer address";
		if (!is_own(f, true, 0, o.saddr))
			return "a source address not the interface's";
		sport = o.sport, dport = o.dport, pp = o.peer_port, max_payload = o.max_payload;
		memcpy(src_mac, o.src_mac, 6);
	} else {
		struct unetd_ch_opened_ipv4 o;

		if (r->body_len != sizeof(o))
			return "a reply of the wrong size";
		memcpy(&o, r->body, sizeof(o));
		if (o.daddr != a4)
			return "another peer address";
		if (!is_own(f, false, o.saddr, NULL))
			return "a source address not the interface's";
		sport = o.sport, dport = o.dport, pp = o.peer_port, max_payload = o.max_payload;
		memcpy(src_mac, o.src_mac, 6);
	}
	if (sport != sport_of(tag))
		return "a source port not the tag's";
	if (pp != (peer_port ? peer_port : sport_of(peer_tag)))
		return "a peer port neither the one asked for nor the peer tag's";
	if (!dport || !max_payload || memcmp(src_mac, f->mac[slot], 6))
		return "no channel port, no max_payload, or another source MAC";
	/* The daemon holds the channel's source port. */
	fd = bind_port(sport);
	if (fd >= 0) {
		close(fd);
		return "its source port not held";
	}
	return fd == -EADDRINUSE ? NULL : "its source port not probed";
}

static void open_one(struct chan_fuzz *f)
{
	union {
		struct unetd_ch_open_ipv4 v4;
		struct unetd_ch_open_ipv6 v6;
	} req;
	bool v6 = rnd() % 2;
	uint32_t ep = pick_ep(f), a4 = 0;
	uint16_t tag = pick_tag(f), peer_tag = pick_peer_tag(tag), port = pick_port(tag);
	uint16_t pad = rnd() % 8 ? 0 : (uint16_t)rnd();
	uint8_t a6[16] = { 0 };
	struct fuzz_reply r;
	unsigned mask;
	char what[160];
	const char *bad;
	int slot;

	memset(&req, 0, sizeof(req));
	if (v6) {
		pick_peer6(f, a6);
		req.v6 = (struct unetd_ch_open_ipv6){ .ep = ep, .tag = tag, .peer_tag = peer_tag,
						      .peer_port = port, .pad = pad };
		memcpy(req.v6.peer_addr, a6, 16);
	} else {
		a4 = pick_peer4(f);
		req.v4 = (struct unetd_ch_open_ipv4){ .ep = ep, .peer_addr = a4, .tag = tag,
						      .peer_tag = peer_tag, .peer_port = port,
						      .pad = pad };
	}
	mask = must_refuse(f, ep, tag, peer_tag, v6, a4, a6) | (pad ? 1u << R_PAD : 0);
	f->opens++;
	if (call(f->fd, ++f->seq, v6 ? UNETD_REQ_CH_OPEN_IPV6 : UNETD_REQ_CH_OPEN_IPV4, &req,
		 v6 ? sizeof(req.v6) : sizeof(req.v4), REPLY_MS, &r) != 1) {
		describe(what, sizeof(what), v6, ep, tag, peer_tag, a4, a6, mask);
		fprintf(stderr, "unetd-fuzz: not answered: %s\n", what);
		f->unanswered++;
		return;
	}
	if (mask)
		f->must_refuse++;
	if (r.h.err) {
		f->refused++;
		for (int i = 0; i < R__COUNT; i++)
			f->refused_by[i] += (mask >> i) & 1;
		/* A reserved field is refused first, as invalid. */
		if ((mask & 1u << R_PAD) && r.h.err != -EINVAL) {
			describe(what, sizeof(what), v6, ep, tag, peer_tag, a4, a6, mask);
			fprintf(stderr, "unetd-fuzz: refused with %d, not EINVAL: %s\n", r.h.err, what);
			f->wrong++;
		}
		return;
	}
	describe(what, sizeof(what), v6, ep, tag, peer_tag, a4, a6, mask);
	if (mask) {
		fprintf(stderr, "unetd-fuzz: opened what it must refuse: %s\n", what);
		f->wrong++;
	}
	slot = ep_slot(f, ep);
	bad = slot < 0 ? NULL : check_opened(f, &r, slot, v6, tag, peer_tag, port, a4, a6);
	if (bad) {
		fprintf(stderr, "unetd-fuzz: opened with %s: %s\n", bad, what);
		f->bad++;
	}
	f->opened++;
	f->opened6 += v6;
	if (slot >= 0 && f->nopen < MAX_OPEN)
		f->open[f->nopen++] = (struct open_chan){ .ep = ep, .tag = tag };
}

/* Close one of our channels: ours, so the daemon must do it. */
static void close_one(struct chan_fuzz *f)
{
	uint32_t i = rnd() % f->nopen;
	struct unetd_ch_ref ref = { .ep = f->open[i].ep, .tag = f->open[i].tag };
	struct fuzz_reply r;

	f->closes++;
	if (call(f->fd, ++f->seq, UNETD_REQ_CH_CLOSE, &ref, sizeof(ref), REPLY_MS, &r) != 1) {
		f->unanswered++;
		return;
	}
	if (r.h.err) {
		fprintf(stderr, "unetd-fuzz: our channel %u on endpoint %u not closed: %s\n", ref.tag,
			ref.ep, r.h.msg);
		f->bad++;
	}
	f->open[i] = f->open[--f->nopen];
}

/* Give one endpoint back (its channels with it) and ask for it again:
 * its handle is then one the daemon must not take from us. */
static void recycle(struct chan_fuzz *f)
{
	int slot = (int)(rnd() % MAX_EPS);
	struct unetd_ep_ref ref = { .ep = f->ep[slot] };
	struct fuzz_reply r;

	f->recycles++;
	if (f->live[slot]) {
		if (call(f->fd, ++f->seq, UNETD_REQ_EP_DESTROY, &ref, sizeof(ref), REPLY_MS, &r) != 1) {
			f->unanswered++;
			return;
		}
		if (r.h.err) {
			fprintf(stderr, "unetd-fuzz: our endpoint %u not destroyed: %s\n", ref.ep,
				r.h.msg);
			f->bad++;
			return;
		}
		f->live[slot] = false;
		remember_not_ours(f, ref.ep);
		for (uint32_t i = 0; i < f->nopen;)
			if (f->open[i].ep == ref.ep)
				f->open[i] = f->open[--f->nopen];
			else
				i++;
	}
	ep_create(f, slot);
}

void chan_fuzz_step(struct chan_fuzz *f)
{
	uint32_t r = rnd() % 64;

	if (r == 0)
		recycle(f);
	else if (r < 6 && f->nopen)
		close_one(f);
	else
		open_one(f);
}

bool chan_fuzz_end(struct chan_fuzz *f)
{
	bool ok;

	if (!f)
		return false;
	printf("chan opens=%ld opened=%ld (IPv6 %ld) refused=%ld must_refuse=%ld wrong=%ld bad=%ld "
	       "unanswered=%ld closes=%ld recycles=%ld\n",
	       f->opens, f->opened, f->opened6, f->refused, f->must_refuse, f->wrong, f->bad,
	       f->unanswered, f->closes, f->recycles);
	printf("chan refused");
	for (int i = 0; i < R__COUNT; i++)
		printf(" %s=%ld", reason_name[i], f->refused_by[i]);
	printf("\n");
	/* Opened some of each family it has peers of: the fuzz reached the
	 * daemon's paths past its checks. */
	ok = !f->wrong && !f->bad && !f->unanswered && f->must_refuse > 0 &&
	     (!f->o.npeers4 || f->opened > f->opened6) && (!f->o.npeers6 || f->opened6 > 0);
	if (f->held_fd >= 0)
		close(f->held_fd);
	close(f->fd);
	free(f);
	return ok;
}
