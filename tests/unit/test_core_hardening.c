/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Regressions for the core's defects against hostile peers and racing
 * processes (each failed before its fix):
 *   - two processes creating endpoints at once over a dead owner's slot
 *     get different slots, and neither inherits the dead owner's channel;
 *   - a frame whose U-Net payload is longer than max_payload, written
 *     straight onto a peer's TX ring, is never handed up;
 *   - a handler that closes its channel mid-batch;
 *   - the interface deleted under a running endpoint: send, flush and
 *     wait report -ENETDOWN instead of succeeding or hanging;
 *   - pin directories of another user, or writable by others, and pins
 *     swapped for a symlink or for another interface's map, are refused.
 *
 * Needs root and a veth pair: UNET_TEST_IFACE_A / UNET_TEST_IFACE_B,
 * UNET_PIN_ROOT (a bpffs), UNET_TEST_XDP_MODE.  The integration suite
 * runs it (test "core_hardening"); without the variables every test is
 * skipped, never passed.  Some tests make their own veth devices (names
 * derived from IFACE_A) and remove them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <unet-xdp/unet_udp.h>

#include "core/objects.h"

#define TAG_A 301
#define TAG_B 302

static const char *if_a, *if_b, *pin_root;
static enum unet_xdp_mode mode = UNET_XDP_MODE_SKB;

#define NEED_IFACES()                                                  \
	do {                                                           \
		if (!if_a || !if_b || !pin_root) {                     \
			print_message("UNET_TEST_IFACE_A/B not set\n"); \
			skip();                                        \
		}                                                      \
	} while (0)

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* A fresh veth pair dev <-> peer with nq queues each, both up (an old
 * one of that name is removed first). */
static void make_veth(const char *dev, const char *peer, int nq)
{
	sh("ip link del %s 2>/dev/null", dev);
	assert_int_equal(sh("ip link add %s numtxqueues %d numrxqueues %d type veth peer name %s "
			    "numtxqueues %d numrxqueues %d && ip link set %s up && ip link set %s up",
			    dev, nq, nq, peer, nq, nq, dev, peer),
			 0);
}

static struct unet_endpoint *ep_new(const char *ifname, uint32_t queue_mask)
{
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	struct unet_endpoint *ep;

	o.mode = mode;
	o.segment_size = 1 << 20;
	o.queue_mask = queue_mask;
	ep = unet_endpoint__create(ifname, &o);
	if (!ep)
		print_error("unet_endpoint__create(%s): %s\n", ifname, strerror(errno));
	return ep;
}

/* ---- Slots: two processes, one dead owner's slot ------------------------ */

/* A child that makes an endpoint on ifname (queues mask) with a channel
 * on tag, writes "slot adopted_old_channel" to fd, then waits for its
 * stdin pipe to close. */
static void child_endpoint(const char *ifname, uint32_t mask, uint16_t tag, uint16_t old_tag,
			   int go_fd, int out_fd, int hold_fd)
{
	static const uint8_t peer[6] = { 2, 0, 0, 0, 0, 9 };
	struct unet_endpoint_info info;
	struct unet_endpoint *ep;
	char c, line[64];
	int adopted;

	if (go_fd >= 0 && read(go_fd, &c, 1) != 1)
		_exit(3);
	ep = ep_new(ifname, mask);
	if (!ep || unet_endpoint__info(ep, &info))
		_exit(4);
	if (!unet_channel__open(ep, tag, peer, 7, NULL))
		_exit(5);
	adopted = old_tag && unet_channel__lookup(ep, old_tag) != NULL;
	snprintf(line, sizeof(line), "%u %d\n", info.id, adopted);
	if (write(out_fd, line, strlen(line)) < 0)
		_exit(6);
	while (read(hold_fd, &c, 1) > 0)
		;
	unet_endpoint__destroy(ep);
	_exit(0);
}

struct kid {
	pid_t pid;
	int out, hold;
};

static struct kid spawn(const char *ifname, uint32_t mask, uint16_t tag, uint16_t old_tag,
			int go_fd)
{
	int out[2], hold[2];
	struct kid k;

	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(hold), 0);
	k.pid = fork();
	assert_true(k.pid >= 0);
	if (k.pid == 0) {
		/* Only our own pipe ends: a sibling's inherited write end
		 * would keep its hold pipe open forever. */
		for (int fd = 3; fd < 256; fd++)
			if (fd != out[1] && fd != hold[0] && fd != go_fd)
				close(fd);
		child_endpoint(ifname, mask, tag, old_tag, go_fd, out[1], hold[0]);
	}
	close(out[1]);
	close(hold[0]);
	k.out = out[0];
	k.hold = hold[1];
	return k;
}

/* The child's "slot adopted" line (-1 on failure). */
static int kid_slot(struct kid *k, int *adopted)
{
	char line[64] = { 0 };
	unsigned int slot;
	ssize_t n = read(k->out, line, sizeof(line) - 1);

	if (n <= 0 || sscanf(line, "%u %d", &slot, adopted) != 2)
		return -1;
	return (int)slot;
}

static int kid_end(struct kid *k, bool kill_it)
{
	int status;

	if (kill_it)
		kill(k->pid, SIGKILL);
	close(k->hold);
	close(k->out);
	waitpid(k->pid, &status, 0);
	return status;
}

/*
 * A slot owner dies (SIGKILL) holding slot s and a channel; then two
 * processes create endpoints at the same moment, with the reclaim of the
 * dead slot slowed down (test hook) to widen the race an attacker hit:
 * both got slot s and one read the other's messages.  Many rounds.
 */
static void test_concurrent_claim_over_stale_slot(void **state)
{
	char dev[IF_NAMESIZE], peer[IF_NAMESIZE];
	const int rounds = 12;

	(void)state;
	NEED_IFACES();
	snprintf(dev, sizeof(dev), "%.10sq", if_a);
	snprintf(peer, sizeof(peer), "%.10sr", if_a);
	make_veth(dev, peer, 2);
	setenv("UNET_TEST_RECLAIM_DELAY_US", "20000", 1);
	for (int r = 0; r < rounds; r++) {
		struct kid dead, k1, k2;
		int go[2], s_dead, s1, s2, a1 = 0, a2 = 0, adopted;

		/* The owner that dies: slot and channel 900 + r left behind. */
		dead = spawn(dev, 1, (uint16_t)(900 + r), 0, -1);
		s_dead = kid_slot(&dead, &adopted);
		assert_true(s_dead >= 0);
		kid_end(&dead, true);

		assert_int_equal(pipe(go), 0);
		k1 = spawn(dev, 1, (uint16_t)(1000 + r), (uint16_t)(900 + r), go[0]);
		k2 = spawn(dev, 2, (uint16_t)(1100 + r), (uint16_t)(900 + r), go[0]);
		close(go[0]);
		assert_int_equal(write(go[1], "xx", 2), 2); /* both at once */
		close(go[1]);
		s1 = kid_slot(&k1, &a1);
		s2 = kid_slot(&k2, &a2);
		kid_end(&k1, false);
		kid_end(&k2, false);
		if (s1 < 0 || s2 < 0 || s1 == s2 || a1 || a2)
			print_error("round %d: dead owner had slot %d; got slots %d and %d, "
				    "adopted its channel: %d %d\n",
				    r, s_dead, s1, s2, a1, a2);
		assert_true(s1 >= 0 && s2 >= 0);
		assert_int_not_equal(s1, s2);
		assert_false(a1);
		assert_false(a2);
	}
	unsetenv("UNET_TEST_RECLAIM_DELAY_US");
	sh("ip link del %s 2>/dev/null", dev);
}

/* ---- Pairs of endpoints on if_a / if_b ------------------------------------ */

struct pair {
	struct unet_endpoint *a, *b;
	struct unet_channel *ab, *ba;
	struct unet_endpoint_info ia, ib;
};

static void pair_open(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	p->a = ep_new(if_a, 0);
	p->b = ep_new(if_b, 0);
	assert_non_null(p->a);
	assert_non_null(p->b);
	assert_int_equal(unet_endpoint__info(p->a, &p->ia), 0);
	assert_int_equal(unet_endpoint__info(p->b, &p->ib), 0);
	p->ab = unet_channel__open(p->a, TAG_A, p->ib.mac, TAG_B, NULL);
	p->ba = unet_channel__open(p->b, TAG_B, p->ia.mac, TAG_A, NULL);
	assert_non_null(p->ab);
	assert_non_null(p->ba);
}

static void pair_close(struct pair *p)
{
	unet_endpoint__destroy(p->a);
	unet_endpoint__destroy(p->b);
}

/* Where raw_send's frames start in their buffer: past the room for TX
 * metadata, which the kernel keeps free in front of every sent frame on
 * an endpoint that has it (lib/core/txmd.c). */
#define RAW_OFF 16

/* Put a frame of flen bytes built by the caller RAW_OFF bytes into buf on
 * a's first TX ring, as a hostile peer's own endpoint could. */

static void raw_send(struct unet_endpoint *ep, uint64_t buf, uint32_t flen)
{
	struct unet_queue *q = &ep->q[0];
	struct xdp_desc *xd;
	uint32_t idx = 0;

	assert_int_equal(xsk_ring_prod__reserve(&q->tx, 1, &idx), 1);
	xd = xsk_ring_prod__tx_desc(&q->tx, idx);
	xd->addr = buf + RAW_OFF;
	xd->len = flen;
	xd->options = 0;
	unet_pool_move(&ep->pool, buf, UNET_FRAME_APP, UNET_FRAME_TX);
	xsk_ring_prod__submit(&q->tx, 1);
	q->tx_pending++;
	assert_int_equal(unet_endpoint__flush(ep, 1000), 0);
}

/* Every message that arrives within ms, checked against max_payload,
 * released; returns how many. */
static int drain_checked(struct unet_endpoint *ep, uint32_t max_payload, int ms)
{
	struct unet_recv_desc d[16];
	int total = 0, n;

	while (unet_endpoint__wait(ep, ms) > 0 && (n = unet_endpoint__recv(ep, d, 16)) > 0) {
		for (int i = 0; i < n; i++)
			assert_true(d[i].len <= max_payload);
		assert_int_equal(unet_endpoint__release(ep, d, (unsigned int)n), 0);
		total += n;
	}
	return total;
}

/*
 * veth takes frames of MTU + 18 bytes: a peer can send a U-Net payload of
 * max_payload + 4 whose header says so truthfully.  It must not reach
 * the application (a layer above sizes its buffers by max_payload), and
 * a normal message after it must.
 */
static void test_oversize_payload_refused(void **state)
{
	struct unet_endpoint_stats st;
	struct pair p;
	uint32_t len, flen;
	uint64_t buf;
	uint8_t *f;

	(void)state;
	NEED_IFACES();
	pair_open(&p);
	len = p.ib.max_payload + 4;
	buf = unet_endpoint__buf_alloc(p.a);
	assert_int_not_equal(buf, UNET_NO_BUF);
	f = (uint8_t *)p.a->segment + buf + RAW_OFF;
	flen = unet_wire_build(f, p.ib.mac, p.ia.mac, TAG_B, TAG_A, len);
	assert_int_equal(flen, UNET_PAYLOAD_OFF + len);
	memset(f + UNET_PAYLOAD_OFF, 0xAB, len);
	raw_send(p.a, buf, flen);
	assert_int_equal(unet_channel__send_copy(p.ab, "after", 5), 0);
	assert_int_equal(drain_checked(p.b, p.ib.max_payload, 200), 1);
	assert_int_equal(unet_endpoint__stats(p.b, &st), 0);
	assert_int_equal(st.rx_malformed, 1);
	pair_close(&p);
}

/*
 * Hostile frames through the whole receive path: a seeded stream of
 * frames written straight onto a's TX ring, aimed at b (right MACs and
 * tags, so the XDP program lets the plausible ones through), with the
 * U-Net header's length and version, the IPv4/UDP headers for b's UDP
 * port, ARP, and the frame length mutated.  Whatever b hands up must lie
 * inside its frame and within the payload limits; under ASan any
 * out-of-bounds read or write in a parser fails the test.
 */
#define FUZZ_FRAMES 3000

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 16);
}

static void fuzz_frame(uint8_t *f, uint32_t *flen, const struct pair *p, uint32_t ip_b,
		       uint64_t *seed)
{
	static const uint16_t protos[] = { UNET_ETH_P, 0x0800, 0x0806 };
	uint16_t proto = protos[rnd(seed) % 3];
	uint32_t max = p->ib.max_payload + UNET_PAYLOAD_OFF + 4;
	uint32_t len = 14 + rnd(seed) % (max - 13);

	for (uint32_t i = 0; i < len; i++)
		f[i] = (uint8_t)rnd(seed);
	memcpy(f, p->ib.mac, 6);
	memcpy(f + 6, p->ia.mac, 6);
	f[12] = (uint8_t)(proto >> 8);
	f[13] = (uint8_t)proto;
	if (proto == UNET_ETH_P && len >= UNET_PAYLOAD_OFF) {
		struct unet_hdr h = { .version = rnd(seed) % 8 ? UNET_WIRE_VERSION : 2,
				      .dst_tag = htons(TAG_B),
				      .src_tag = htons(TAG_A),
				      .len = htons((uint16_t)(rnd(seed) % 4 ? len - UNET_PAYLOAD_OFF
									 : rnd(seed))) };

		memcpy(f + 14, &h, sizeof(h));
	} else if (proto == 0x0800 && len >= 14 + 28) {
		uint16_t port = htons(7001), ulen = htons((uint16_t)(rnd(seed) % 2000));

		f[14] = (uint8_t)(0x40 | (5 + rnd(seed) % 11)); /* IPv4, options or not */
		f[14 + 9] = 17;
		memcpy(f + 14 + 16, &ip_b, 4);
		if (rnd(seed) % 2)
			f[14 + 6] = f[14 + 7] = 0; /* not a fragment */
		memcpy(f + 14 + 20 + 2, &port, 2);
		memcpy(f + 14 + 20 + 4, &ulen, 2);
	} else if (proto == 0x0806 && len >= 14 + 28) {
		static const uint8_t arp_hdr[8] = { 0, 1, 8, 0, 6, 4, 0, 1 };

		memcpy(f + 14, arp_hdr, 8);
		memcpy(f + 14 + 24, &ip_b, 4);
	}
	*flen = len;
}

static void test_hostile_frames_fuzz(void **state)
{
	UNET_OPTS_INIT(unet_udp_opts, uo);
	uint32_t ip_b = htonl(0x0a63000b); /* 10.99.0.11: the kernel does not have it */
	struct unet_recv_desc d[64];
	struct unet_udp_sock *s;
	uint64_t seed = 0x5eed1234abcdULL;
	int delivered = 0, n;
	struct pair p;

	(void)state;
	NEED_IFACES();
	pair_open(&p);
	s = unet_udp__open(p.b, ip_b, 7001, &uo);
	assert_non_null(s);
	for (int i = 0; i < FUZZ_FRAMES; i++) {
		uint64_t buf = unet_endpoint__buf_alloc(p.a);
		uint32_t flen;

		assert_int_not_equal(buf, UNET_NO_BUF);
		fuzz_frame((uint8_t *)p.a->segment + buf + RAW_OFF, &flen, &p, ip_b, &seed);
		raw_send(p.a, buf, flen);
		while ((n = unet_endpoint__recv(p.b, d, 64)) > 0) {
			for (int k = 0; k < n; k++) {
				uint8_t *base = (uint8_t *)p.b->segment + d[k].buf;

				assert_true((uint8_t *)d[k].data >= base);
				assert_true((uint8_t *)d[k].data + d[k].len <=
					    base + p.ib.frame_size);
				assert_true(d[k].len <= p.ib.max_payload);
				/* Touch every byte: ASan checks the bounds. */
				volatile uint8_t sum = 0;
				for (uint32_t j = 0; j < d[k].len; j++)
					sum ^= ((uint8_t *)d[k].data)[j];
				(void)sum;
			}
			assert_int_equal(unet_endpoint__release(p.b, d, (unsigned int)n), 0);
			delivered += n;
		}
	}
	print_message("fuzz: %d hostile frames sent, %d handed up\n", FUZZ_FRAMES, delivered);
	unet_udp__close(s);
	pair_close(&p);
}

/* ---- A handler that closes its channel ------------------------------------- */

static int handled;

static void close_on_first(struct unet_endpoint *ep, const struct unet_recv_desc *d, void *ctx)
{
	(void)ep;
	(void)ctx;
	handled++;
	/* Read the channel as a handler would, then close it: the later
	 * descriptors of this batch name it too. */
	assert_int_equal(unet_channel__tag(d->channel), TAG_B);
	unet_channel__close(d->channel);
}

static void test_handler_closes_channel(void **state)
{
	struct pair p;
	int n = 0;

	(void)state;
	NEED_IFACES();
	pair_open(&p);
	unet_channel__set_handler(p.ba, close_on_first, NULL);
	for (int i = 0; i < 8; i++)
		assert_int_equal(unet_channel__send_copy(p.ab, "x", 1), 0);
	assert_int_equal(unet_endpoint__flush(p.a, 1000), 0);
	/* All eight in one batch: wait until they are all on the ring. */
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { 0, 2000000 };

		nanosleep(&ts, NULL);
	}
	handled = 0;
	n = unet_endpoint__dispatch(p.b, 500, 64);
	assert_true(n >= 1);
	assert_int_equal(handled, 1);
	/* The channel is gone: its tag can be opened again. */
	assert_null(unet_channel__lookup(p.b, TAG_B));
	p.ba = unet_channel__open(p.b, TAG_B, p.ia.mac, TAG_A, NULL);
	assert_non_null(p.ba);
	pair_close(&p);
}

/* ---- The interface deleted under a running endpoint ----------------------- */

static int64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_interface_deleted(void **state)
{
	static const uint8_t peer[6] = { 2, 0, 0, 0, 0, 9 };
	char dev[IF_NAMESIZE], other[IF_NAMESIZE];
	struct unet_endpoint *ep;
	struct unet_channel *ch;
	int64_t t0;
	int err = 0, r;

	(void)state;
	NEED_IFACES();
	snprintf(dev, sizeof(dev), "%.10sd", if_a);
	snprintf(other, sizeof(other), "%.10se", if_a);
	make_veth(dev, other, 1);
	ep = ep_new(dev, 0);
	assert_non_null(ep);
	ch = unet_channel__open(ep, 77, peer, 78, NULL);
	assert_non_null(ch);
	assert_int_equal(unet_channel__send_copy(ch, "alive", 5), 0);
	assert_int_equal(sh("ip link del %s", dev), 0);

	/* Sends stop succeeding within a bounded number of tries. */
	for (int i = 0; i < 1000 && !err; i++)
		err = unet_channel__send_copy(ch, "gone?", 5);
	assert_int_equal(err, -ENETDOWN);
	assert_int_equal(unet_channel__send_copy(ch, "gone?", 5), -ENETDOWN);
	assert_int_equal(unet_endpoint__flush(ep, 2000), -ENETDOWN);
	t0 = ms_now();
	r = unet_endpoint__wait(ep, -1);
	assert_int_equal(r, -ENETDOWN);
	assert_true(ms_now() - t0 < 2000);
	unet_endpoint__destroy(ep);
}

/* A wait that was already blocked when the device went away returns. */
static void test_wait_blocked_when_deleted(void **state)
{
	char dev[IF_NAMESIZE], other[IF_NAMESIZE];
	struct unet_endpoint *ep;
	pid_t pid;
	int r;

	(void)state;
	NEED_IFACES();
	snprintf(dev, sizeof(dev), "%.10sf", if_a);
	snprintf(other, sizeof(other), "%.10sg", if_a);
	make_veth(dev, other, 1);
	ep = ep_new(dev, 0);
	assert_non_null(ep);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		usleep(300000);
		_exit(sh("ip link del %s", dev) == 0 ? 0 : 1);
	}
	r = unet_endpoint__wait(ep, 5000);
	waitpid(pid, NULL, 0);
	assert_int_equal(r, -ENETDOWN);
	unet_endpoint__destroy(ep);
}

/* <root>/<name>@<our network namespace>: where the library pins name. */
static void dev_dir(char *buf, size_t size, const char *root, const char *name)
{
	struct stat st;

	assert_int_equal(stat("/proc/thread-self/ns/net", &st), 0);
	snprintf(buf, size, "%s/%s@%llu", root, name, (unsigned long long)st.st_ino);
}

/* ---- Pins: directories and maps ----------------------------------------- */

static void test_unsafe_pin_dirs_refused(void **state)
{
	UNET_OPTS_INIT(unet_iface_opts, io);
	char root[512], dir[600];

	(void)state;
	NEED_IFACES();
	/* A pin root another user made. */
	snprintf(root, sizeof(root), "%s/foreign", pin_root);
	mkdir(root, 0700);
	assert_int_equal(chown(root, 65534, 65534), 0);
	io.pin_root = root;
	assert_int_equal(unet_iface__attach(if_a, mode, &io), -EPERM);
	/* Ours, but writable by others. */
	assert_int_equal(chown(root, 0, 0), 0);
	assert_int_equal(chmod(root, 01777), 0);
	assert_int_equal(unet_iface__attach(if_a, mode, &io), -EPERM);
	/* Ours, but the interface directory was made by someone else
	 * before the attach (how the attack was reproduced). */
	assert_int_equal(chmod(root, 0700), 0);
	dev_dir(dir, sizeof(dir), root, if_a);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	assert_int_equal(unet_iface__attach(if_a, mode, &io), -EPERM);
	errno = 0;
	assert_null(unet_iface__open(if_a, &io));
	assert_int_equal(errno, EPERM);
	/* A symlink where the interface directory should be. */
	rmdir(dir);
	assert_int_equal(symlink("/tmp", dir), 0);
	assert_int_equal(unet_iface__attach(if_a, mode, &io), -EPERM);
	unlink(dir);
	rmdir(root);
}

/* A fresh veth pair x <-> y (IF_A's name cut to 10, then sx and sy) and a
 * pin root of its own, <pin root>/sub, in io; x attached under it. */
static void fresh_pair(char x[IF_NAMESIZE], char y[IF_NAMESIZE], char sx, char sy, char *root,
		       size_t rsize, const char *sub, struct unet_iface_opts *io)
{
	snprintf(x, IF_NAMESIZE, "%.10s%c", if_a, sx);
	snprintf(y, IF_NAMESIZE, "%.10s%c", if_a, sy);
	make_veth(x, y, 1);
	snprintf(root, rsize, "%s/%s", pin_root, sub);
	mkdir(root, 0700);
	io->pin_root = root;
	assert_int_equal(unet_iface__attach(x, mode, io), 0);
}

/*
 * Pins are global, device names per namespace: a process in a network
 * namespace of its own with a device of the same name as ours (the
 * review's attack, through unetd, or two containers with eth0) attaches
 * there under the same pin root.  Our program must stay attached, our
 * pins ours, and its attach must get a program of its own.
 */
static void test_pins_per_namespace(void **state)
{
	UNET_OPTS_INIT(unet_iface_opts, io);
	struct unet_iface_status before, after;
	char root[512], x[IF_NAMESIZE], y[IF_NAMESIZE];
	struct unet_iface *ifa;
	pid_t pid;
	int st;

	(void)state;
	NEED_IFACES();
	fresh_pair(x, y, 'n', 'm', root, sizeof(root), "perns", &io);
	ifa = unet_iface__open(x, &io);
	assert_non_null(ifa);
	assert_int_equal(unet_iface__status(ifa, &before), 0);
	unet_iface__close(ifa);
	assert_true(before.link_alive);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		UNET_OPTS_INIT(unet_iface_opts, cio);
		struct unet_iface_status cs;
		struct unet_iface *c;
		int rc = 1;

		/* A namespace of its own, a device named like ours (a
		 * different ifindex, or the same: both variants collided). */
		cio.pin_root = root;
		if (unshare(CLONE_NEWNET) == 0 &&
		    sh("ip link add %s type veth peer name %s && ip link set %s up && "
		       "ip link set %s up", x, y, x, y) == 0 &&
		    unet_iface__attach(x, UNET_XDP_MODE_SKB, &cio) == 0 &&
		    (c = unet_iface__open(x, &cio)) != NULL) {
			rc = unet_iface__status(c, &cs) == 0 && cs.link_alive &&
					     cs.prog_id != before.prog_id
				     ? 0
				     : 2;
			unet_iface__close(c);
			unet_iface__detach(x, &cio);
		}
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);

	/* Ours: still attached, the same program, our pins. */
	ifa = unet_iface__open(x, &io);
	assert_non_null(ifa);
	assert_int_equal(unet_iface__status(ifa, &after), 0);
	unet_iface__close(ifa);
	assert_true(after.link_alive);
	assert_int_equal(after.prog_id, before.prog_id);
	assert_int_equal(unet_iface__detach(x, &io), 0);
	sh("ip link del %s 2>/dev/null", x);
	rmdir(root);
}

/* The queue count of a device without ETHTOOL_GCHANNELS (a bridge), in a
 * network namespace of its own whose name no device of ours has: it must
 * come from that namespace (rtnetlink), not from /sys, which shows the
 * namespace sysfs was mounted for (unetd serves its clients' namespaces). */
static void test_nqueues_own_namespace(void **state)
{
	char d[IF_NAMESIZE];
	pid_t pid;
	int st;

	(void)state;
	NEED_IFACES();
	snprintf(d, sizeof(d), "%.10sd", if_a);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int n;

		if (unshare(CLONE_NEWNET) ||
		    sh("ip link add %s numtxqueues 3 numrxqueues 3 type bridge", d))
			_exit(1);
		n = unet_iface_nqueues_raw(d);
		_exit(n == 3 ? 0 : 10 + n);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Attach two fresh devices x and y under their own root; swap x's
 * channel map pin for (1) a symlink to y's and (2) a pin of y's map
 * itself: opening x must refuse both, so no channel can land on y. */
static void test_swapped_pins_refused(void **state)
{
	UNET_OPTS_INIT(unet_iface_opts, io);
	char root[512], a_chan[700], b_chan[700], x[IF_NAMESIZE], y[IF_NAMESIZE];
	struct unet_iface *ifa;
	int fd;

	(void)state;
	NEED_IFACES();
	fresh_pair(x, y, 'x', 'y', root, sizeof(root), "swap", &io);
	assert_int_equal(unet_iface__attach(y, mode, &io), 0);
	dev_dir(a_chan, sizeof(a_chan) - 16, root, x);
	strcat(a_chan, "/unet_channels");
	dev_dir(b_chan, sizeof(b_chan) - 16, root, y);
	strcat(b_chan, "/unet_channels");
	ifa = unet_iface__open(x, &io);
	assert_non_null(ifa);
	unet_iface__close(ifa);

	assert_int_equal(unlink(a_chan), 0);
	assert_int_equal(symlink(b_chan, a_chan), 0);
	errno = 0;
	assert_null(unet_iface__open(x, &io));
	assert_int_equal(errno, EPROTO);

	assert_int_equal(unlink(a_chan), 0);
	fd = bpf_obj_get(b_chan);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_pin(fd, a_chan), 0);
	close(fd);
	errno = 0;
	assert_null(unet_iface__open(x, &io));
	assert_int_equal(errno, EPROTO);

	assert_int_equal(unet_iface__detach(x, &io), 0);
	assert_int_equal(unet_iface__detach(y, &io), 0);
	sh("ip link del %s 2>/dev/null", x);
	rmdir(root);
}

int main(void)
{
	const char *m = getenv("UNET_TEST_XDP_MODE");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_claim_over_stale_slot),
		cmocka_unit_test(test_oversize_payload_refused),
		cmocka_unit_test(test_hostile_frames_fuzz),
		cmocka_unit_test(test_handler_closes_channel),
		cmocka_unit_test(test_interface_deleted),
		cmocka_unit_test(test_wait_blocked_when_deleted),
		cmocka_unit_test(test_unsafe_pin_dirs_refused),
		cmocka_unit_test(test_swapped_pins_refused),
		cmocka_unit_test(test_pins_per_namespace),
		cmocka_unit_test(test_nqueues_own_namespace),
	};

	if_a = getenv("UNET_TEST_IFACE_A");
	if_b = getenv("UNET_TEST_IFACE_B");
	pin_root = getenv("UNET_PIN_ROOT");
	if (m && !strcmp(m, "native"))
		mode = UNET_XDP_MODE_NATIVE;
	return cmocka_run_group_tests_name("core_hardening", tests, NULL, NULL);
}
