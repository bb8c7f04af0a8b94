/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * netlink.c - questions to the kernel's routing and neighbour tables over
 * rtnetlink (netlink.h): a route (RTM_GETROUTE), a neighbour's MAC
 * (RTM_GETNEIGH), a request to resolve one (RTM_NEWNEIGH with NTF_USE),
 * an interface's addresses (RTM_GETADDR, a bounded dump).
 *
 * Plain netlink, one short-lived socket per question, by raw system
 * calls: the library also runs inside unet-run, which interposes socket
 * calls and must not see its own.  The answers are the kernel's, but
 * parsed as carefully as anything from outside: every length is checked
 * against the buffer before it is read.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/netlink.h"

void unet_nl_add_attr(struct unet_nl_req *r, uint16_t type, const void *data, uint16_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* A new NETLINK_ROUTE socket with req (len bytes) sent on it; strict:
 * the kernel holds a dump to the filters in its header (without it, an
 * RTM_GETADDR dump ignores ifa_index and lists every interface).
 * Returns the socket, or -errno. */
static int nl_send(const void *req, size_t len, bool strict)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 1 };
	int fd, one = 1, err;

	fd = (int)syscall(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	/* the kernel answers at once; a bound wait all the same */
	syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if ((strict &&
	     syscall(SYS_setsockopt, fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one))) ||
	    syscall(SYS_sendto, fd, req, len, 0, &kernel, sizeof(kernel)) < 0) {
		err = -errno;
		syscall(SYS_close, fd);
		return err;
	}
	return fd;
}

int unet_nl_ask(struct unet_nl_req *r, char *buf, size_t size)
{
	int fd, n, err;

	r->nh.nlmsg_seq = 1;
	fd = nl_send(r, r->nh.nlmsg_len, false);
	if (fd < 0)
		return fd;
	for (;;) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		n = (int)syscall(SYS_recvfrom, fd, buf, size, 0, NULL, NULL);
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (!NLMSG_OK(h, (unsigned int)n))
			continue;
		if (h->nlmsg_seq != r->nh.nlmsg_seq)
			continue; /* not our answer (nothing else is subscribed) */
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			err = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) ? e->error : -EPROTO;
			goto out;
		}
		err = n;
		goto out;
	}
out:
	syscall(SYS_close, fd);
	return err;
}

int unet_nl_route_parse(const char *buf, int n, uint16_t alen, struct unet_nl_route *rt)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)(const void *)buf;
	const struct rtmsg *m;
	const struct rtattr *a;
	int len;

	memset(rt, 0, sizeof(*rt));
	if (alen != 4 && alen != 16)
		return -EPROTO;
	if (n <= 0 || !NLMSG_OK(h, (unsigned int)n) || h->nlmsg_type != RTM_NEWROUTE ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -EPROTO;
	m = NLMSG_DATA(h);
	rt->type = m->rtm_type;
	len = (int)RTM_PAYLOAD(h);
	for (a = RTM_RTA(m); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) >= 4) {
			memcpy(&rt->oif, RTA_DATA(a), 4);
		} else if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) >= alen) {
			memcpy(rt->via, RTA_DATA(a), alen);
			rt->gateway = true;
		} else if (a->rta_type == RTA_PREFSRC && RTA_PAYLOAD(a) >= alen) {
			memcpy(rt->src, RTA_DATA(a), alen);
			rt->have_src = true;
		} else if (a->rta_type == RTA_METRICS) {
			const struct rtattr *x = RTA_DATA(a);
			int xlen = (int)RTA_PAYLOAD(a);

			for (; RTA_OK(x, xlen); x = RTA_NEXT(x, xlen))
				if (x->rta_type == RTAX_MTU && RTA_PAYLOAD(x) >= 4)
					memcpy(&rt->route_mtu, RTA_DATA(x), 4);
		}
	}
	return 0;
}

int unet_nl_route_get(int family, const void *dst, const void *src, uint16_t alen, int oif,
		      struct unet_nl_route *rt)
{
	struct unet_nl_req r;
	char buf[NL_BUF];
	int n;

	memset(rt, 0, sizeof(*rt));
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	r.nh.nlmsg_type = RTM_GETROUTE;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.rt.rtm_family = (uint8_t)family;
	r.rt.rtm_dst_len = (uint8_t)(alen * 8);
	unet_nl_add_attr(&r, RTA_DST, dst, alen);
	if (src) {
		r.rt.rtm_src_len = (uint8_t)(alen * 8);
		unet_nl_add_attr(&r, RTA_SRC, src, alen);
	}
	if (oif)
		unet_nl_add_attr(&r, RTA_OIF, &oif, 4);
	n = unet_nl_ask(&r, buf, sizeof(buf));
	if (n == -ENETUNREACH)
		return -ENOENT; /* no route at all */
	if (n < 0)
		return n;
	return unet_nl_route_parse(buf, n, alen, rt);
}

int unet_nl_kneigh_parse(const char *buf, int n, uint8_t mac[6])
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)(const void *)buf;
	const struct ndmsg *nd;
	const struct rtattr *a;
	bool have_mac = false;
	int len;

	if (n <= 0 || !NLMSG_OK(h, (unsigned int)n) || h->nlmsg_type != RTM_NEWNEIGH ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*nd)))
		return -EPROTO;
	nd = NLMSG_DATA(h);
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	for (a = (const struct rtattr *)((const char *)nd + NLMSG_ALIGN(sizeof(*nd)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			have_mac = true;
		}
	if (nd->ndm_state & NUD_FAILED)
		return -EHOSTUNREACH;
	if (!(nd->ndm_state & KNEIGH_VALID) || !have_mac)
		return -EAGAIN; /* INCOMPLETE, NONE */
	/* STALE: still the best the kernel knows; the caller asks it to
	 * confirm (unet_nl_kneigh_use), as its own use of it would. */
	return (nd->ndm_state & NUD_STALE) ? 1 : 0;
}

/* A request about the kernel's neighbour entry for ip on ifindex: the
 * asking and the "use" differ only in type and flags. */
static void kneigh_req(struct unet_nl_req *r, uint16_t type, uint16_t flags, uint8_t ndm_flags,
		       int family, int ifindex, const void *ip, uint16_t alen)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	r->nh.nlmsg_type = type;
	r->nh.nlmsg_flags = flags;
	r->nd.ndm_family = (uint8_t)family;
	r->nd.ndm_ifindex = ifindex;
	r->nd.ndm_flags = ndm_flags;
	unet_nl_add_attr(r, NDA_DST, ip, alen);
}

int unet_nl_kneigh_get(int family, int ifindex, const void *ip, uint16_t alen, uint8_t mac[6])
{
	struct unet_nl_req r;
	char buf[NL_BUF];
	int n;

	kneigh_req(&r, RTM_GETNEIGH, NLM_F_REQUEST, 0, family, ifindex, ip, alen);
	n = unet_nl_ask(&r, buf, sizeof(buf));
	if (n < 0)
		return n;
	return unet_nl_kneigh_parse(buf, n, mac);
}

int unet_nl_kneigh_use(int family, int ifindex, const void *ip, uint16_t alen)
{
	struct unet_nl_req r;
	char buf[NL_BUF];
	int n;

	/* NTF_USE: "use" the entry (created if missing), which starts or
	 * confirms resolution exactly as a packet of the kernel's would;
	 * it changes no state we name.  Needs CAP_NET_ADMIN. */
	kneigh_req(&r, RTM_NEWNEIGH, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE,
		   NTF_USE, family, ifindex, ip, alen);
	n = unet_nl_ask(&r, buf, sizeof(buf));
	return n < 0 ? n : 0;
}

int unet_nl_addr_parse(const char *buf, int n, int family, uint8_t addr[16])
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)(const void *)buf;
	const struct ifaddrmsg *ifa = NLMSG_DATA(h);
	unsigned int alen = family == AF_INET ? 4 : 16, len;
	const struct rtattr *a;
	bool have = false;

	if (n <= 0 || !NLMSG_OK(h, (unsigned int)n) || h->nlmsg_type != RTM_NEWADDR ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)) || ifa->ifa_family != family)
		return -EPROTO;
	len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));
	for (a = (const struct rtattr *)((const char *)ifa + NLMSG_ALIGN(sizeof(*ifa)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		/* IFA_LOCAL is the address itself where the two differ (a
		 * point-to-point link's IFA_ADDRESS is the peer's); IPv6
		 * sends IFA_ADDRESS alone, or IFA_LOCAL beside a peer */
		if ((a->rta_type == IFA_LOCAL || (a->rta_type == IFA_ADDRESS && !have)) &&
		    RTA_PAYLOAD(a) == alen) {
			memcpy(addr, RTA_DATA(a), alen);
			have = true;
			if (a->rta_type == IFA_LOCAL)
				break;
		}
	}
	return have ? 0 : -EPROTO;
}

int unet_nl_addrs(int family, int ifindex, unsigned int max,
		  int (*fn)(const uint8_t *addr, const struct ifaddrmsg *ifa, void *ctx), void *ctx)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETADDR,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		.ifa = { .ifa_family = (uint8_t)family, .ifa_index = (uint32_t)ifindex },
	};
	unsigned int seen = 0;
	/* the kernel fills a dump's batches to the largest buffer a read
	 * has offered (at least about a page), so 8 KiB always holds one */
	char buf[8192] __attribute__((aligned(8)));
	int fd, err;

	if ((family != AF_INET && family != AF_INET6) || ifindex <= 0 || !fn)
		return -EINVAL;
	fd = nl_send(&req, sizeof(req), true);
	if (fd < 0)
		return fd;
	for (;;) {
		int n = (int)syscall(SYS_recvfrom, fd, buf, sizeof(buf), 0, NULL, NULL);
		unsigned int left;

		if (n < 0) {
			err = -errno;
			goto out;
		}
		left = (unsigned int)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			const struct ifaddrmsg *ifa = NLMSG_DATA(h);
			uint8_t addr[16];

			if (h->nlmsg_seq != req.nh.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE) {
				err = 0;
				goto out;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				err = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? e->error
											     : -EPROTO;
				goto out;
			}
			/* the kernel's filter, checked: a kernel that ignored it
			 * costs us the bound, never a wrong answer */
			if (unet_nl_addr_parse((const char *)h, (int)h->nlmsg_len, family, addr) ||
			    (int)ifa->ifa_index != ifindex)
				continue;
			if (++seen > max) {
				err = -E2BIG;
				goto out;
			}
			err = fn(addr, ifa, ctx);
			if (err)
				goto out;
		}
	}
out:
	/* closing the socket ends a dump not read to its end */
	syscall(SYS_close, fd);
	return err;
}
