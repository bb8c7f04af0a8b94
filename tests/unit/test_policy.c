/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of unetd's policy module (daemon/policy.c) against
 * docs/unetd-policy.md: every keyword, the defaults, precedence, each
 * error with its line and column, the file checks, the built-in policy,
 * and a seeded fuzz of the parser. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "policy.h"

/* ---- a user database of our own, so results do not depend on the host ---- */

struct idname {
	const char *name;
	uint32_t id;
};

static const struct idname fake_users[] = {
	{ "root", 0 }, { "alice", 1000 }, { "bob", 1001 }, { "carol", 1002 }, { "nobody", 65534 },
};
static const struct idname fake_groups[] = {
	{ "root", 0 }, { "wheel", 10 }, { "staff", 50 }, { "unet", 900 }, { "lab", 901 },
};

static int fake_find(const struct idname *v, size_t n, const char *name, uint32_t *id)
{
	if (strcmp(name, "broken") == 0)
		return -EIO; /* the user database itself failing */
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0) {
			*id = v[i].id;
			return 0;
		}
	return -ENOENT;
}

static int fake_user(void *ctx, const char *name, uint32_t *id)
{
	(void)ctx;
	return fake_find(fake_users, sizeof(fake_users) / sizeof(fake_users[0]), name, id);
}

static int fake_group(void *ctx, const char *name, uint32_t *id)
{
	(void)ctx;
	return fake_find(fake_groups, sizeof(fake_groups) / sizeof(fake_groups[0]), name, id);
}

/* The same without a group "unet": a host where nobody created it. */
static int fake_group_no_unet(void *ctx, const char *name, uint32_t *id)
{
	if (strcmp(name, "unet") == 0)
		return -ENOENT;
	return fake_group(ctx, name, id);
}

static const struct unetd_policy_opts fake_opts = {
	.sz = sizeof(struct unetd_policy_opts),
	.user_id = fake_user,
	.group_id = fake_group,
};

static int parse_fake(const char *text, struct unetd_policy **p, char *err, size_t errlen)
{
	return unetd_policy_parse_opts(text, strlen(text), &fake_opts, p, err, errlen);
}

static struct unetd_policy *must_parse(const char *text)
{
	struct unetd_policy *p = NULL;
	char err[256];
	int rc = parse_fake(text, &p, err, sizeof(err));

	if (rc)
		print_error("parse failed (%d): %s\n", rc, err);
	assert_int_equal(rc, 0);
	assert_non_null(p);
	return p;
}

static struct unetd_grant look(const struct unetd_policy *p, uint32_t uid, const uint32_t *gids,
			       unsigned int n, const char *ifname)
{
	struct unetd_grant g;

	memset(&g, 0xa5, sizeof(g)); /* lookup must set every field */
	assert_int_equal(unetd_policy_lookup(p, uid, gids, n, ifname, &g), 0);
	return g;
}

static void assert_nothing(const struct unetd_grant *g)
{
	assert_false(g->allowed);
	assert_false(g->emulated);
	assert_false(g->direct);
	assert_int_equal(g->max_endpoints, 0);
	assert_int_equal(g->max_segment_bytes, 0);
	assert_int_equal(g->share, 0);
	assert_false(unetd_grant_tag(g, 1));
	assert_false(unetd_grant_tag(g, 65535));
	assert_false(unetd_grant_udp_port(g, 1));
	assert_false(unetd_grant_udp_port(g, 65535));
}

/* ---- keywords and defaults ---------------------------------------- */

static void test_every_keyword(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;

	(void)state;
	p = must_parse("user alice iface veth* kinds emulated,direct tags 1000-1999,3000 "
		       "udp 7000-7100 endpoints 4 segment 64M share 10\n");
	assert_int_equal(unetd_policy_rule_count(p), 1);
	g = look(p, 1000, NULL, 0, "veth0");
	assert_true(g.allowed);
	assert_true(g.emulated);
	assert_true(g.direct);
	assert_int_equal(g.max_endpoints, 4);
	assert_int_equal(g.max_segment_bytes, 64ull << 20);
	assert_int_equal(g.share, 10);
	assert_non_null(g.priv);
	assert_string_equal(g.rule, "policy:1 user alice iface veth*");
	assert_false(unetd_grant_tag(&g, 999));
	assert_true(unetd_grant_tag(&g, 1000));
	assert_true(unetd_grant_tag(&g, 1999));
	assert_false(unetd_grant_tag(&g, 2000));
	assert_false(unetd_grant_tag(&g, 2999));
	assert_true(unetd_grant_tag(&g, 3000));
	assert_false(unetd_grant_tag(&g, 3001));
	assert_false(unetd_grant_udp_port(&g, 6999));
	assert_true(unetd_grant_udp_port(&g, 7000));
	assert_true(unetd_grant_udp_port(&g, 7100));
	assert_false(unetd_grant_udp_port(&g, 7101));
	/* The pattern is the interface's: not veth, nothing. */
	g = look(p, 1000, NULL, 0, "eth0");
	assert_nothing(&g);
	assert_string_equal(g.rule, "policy: no rule matches");
	/* Another user: nothing. */
	g = look(p, 1001, NULL, 0, "veth0");
	assert_nothing(&g);
	unetd_policy_free(p);
}

static void test_defaults(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;

	(void)state;
	p = must_parse("user alice kinds emulated\n");
	g = look(p, 1000, NULL, 0, "anything0");
	assert_true(g.allowed);
	assert_true(g.emulated);
	assert_false(g.direct);
	assert_int_equal(g.max_endpoints, 8);
	assert_int_equal(g.max_segment_bytes, 64ull << 20);
	assert_int_equal(g.share, 100);
	assert_string_equal(g.rule, "policy:1 user alice");
	/* No tags and no ports unless granted. */
	for (unsigned int t = 0; t <= 65535; t += 97) {
		assert_false(unetd_grant_tag(&g, (uint16_t)t));
		assert_false(unetd_grant_udp_port(&g, (uint16_t)t));
	}
	unetd_policy_free(p);
}

static void test_all_unlimited_any_none(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;

	(void)state;
	p = must_parse("user root all endpoints unlimited segment unlimited share 1000\n"
		       "user bob kinds direct tags any udp none\n"
		       "user carol kinds emulated tags none udp any segment 1\n");
	g = look(p, 0, NULL, 0, "eth0");
	assert_true(g.allowed && g.emulated && g.direct);
	assert_int_equal(g.max_endpoints, UNETD_POLICY_UNLIMITED32);
	assert_true(g.max_segment_bytes == UNETD_POLICY_UNLIMITED64);
	assert_int_equal(g.share, 1000);
	assert_false(unetd_grant_tag(&g, 0)); /* reserved, whatever the grant */
	assert_true(unetd_grant_tag(&g, 1));
	assert_true(unetd_grant_tag(&g, 65535));
	assert_false(unetd_grant_udp_port(&g, 0));
	assert_true(unetd_grant_udp_port(&g, 1));
	assert_true(unetd_grant_udp_port(&g, 65535));

	g = look(p, 1001, NULL, 0, "eth0");
	assert_true(g.allowed && !g.emulated && g.direct);
	assert_true(unetd_grant_tag(&g, 1) && unetd_grant_tag(&g, 40000));
	assert_false(unetd_grant_udp_port(&g, 53));

	g = look(p, 1002, NULL, 0, "eth0");
	assert_int_equal(g.max_segment_bytes, 1);
	assert_false(unetd_grant_tag(&g, 5));
	assert_true(unetd_grant_udp_port(&g, 53));
	unetd_policy_free(p);
}

static void test_sizes(void **state)
{
	static const struct {
		const char *v;
		uint64_t bytes;
	} cases[] = {
		{ "1", 1 },
		{ "4096", 4096 },
		{ "1K", 1024 },
		{ "3M", 3ull << 20 },
		{ "2G", 2ull << 30 },
		{ "17179869183G", 17179869183ull << 30 }, /* the largest in G */
		{ "18446744073709551614", UINT64_MAX - 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[128];
		struct unetd_policy *p;
		struct unetd_grant g;

		snprintf(text, sizeof(text), "user alice kinds emulated segment %s", cases[i].v);
		p = must_parse(text);
		g = look(p, 1000, NULL, 0, "eth0");
		assert_true(g.max_segment_bytes == cases[i].bytes);
		unetd_policy_free(p);
	}
}

static void test_numeric_ids_and_layout(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;
	uint32_t gids[] = { 4242 };

	(void)state;
	/* Ids without a name in the database; tabs, comments, blank lines, no final newline. */
	p = must_parse("# a comment\n"
		       "\n"
		       "   \t  \n"
		       "user 123456 kinds emulated   # trailing comment\n"
		       "\tgroup\t4242\tkinds direct\ttags 5#comment right after a token\n"
		       "user 0 kinds direct");
	assert_int_equal(unetd_policy_rule_count(p), 3);
	g = look(p, 123456, NULL, 0, "eth0");
	assert_true(g.allowed && g.emulated && !g.direct);
	assert_string_equal(g.rule, "policy:4 user 123456");
	g = look(p, 77, gids, 1, "eth0");
	assert_true(g.allowed && g.direct);
	assert_true(unetd_grant_tag(&g, 5));
	assert_false(unetd_grant_tag(&g, 6));
	assert_string_equal(g.rule, "policy:5 group 4242");
	g = look(p, 0, NULL, 0, "eth0");
	assert_string_equal(g.rule, "policy:6 user 0");
	unetd_policy_free(p);
}

static void test_ranges_unsorted(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;

	(void)state;
	p = must_parse("user alice kinds emulated tags 60000-65535,3000-3999,1,2,1000-1999,2500\n");
	g = look(p, 1000, NULL, 0, "eth0");
	for (unsigned int t = 0; t <= 65535; t++) {
		bool want = (t >= 60000) || (t >= 3000 && t <= 3999) || t == 1 || t == 2 ||
			    (t >= 1000 && t <= 1999) || t == 2500;

		assert_int_equal(unetd_grant_tag(&g, (uint16_t)t), want);
	}
	unetd_policy_free(p);
}

/* ---- precedence ----------------------------------------------------- */

static void test_precedence(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;
	uint32_t unet_only[] = { 900 };
	uint32_t lab_unet[] = { 901, 900 };
	uint32_t none[] = { 12345 };

	(void)state;
	p = must_parse("default kinds emulated tags 9\n"		  /* 1 */
		       "group unet kinds emulated tags 100\n"		  /* 2 */
		       "group lab iface veth* kinds direct tags 200\n"	  /* 3 */
		       "user alice iface veth* kinds direct tags 300\n"	  /* 4 */
		       "user alice iface eth* deny\n"			  /* 5 */
		       "group lab kinds emulated tags 201\n"		  /* 6 */
		       "user bob iface veth1 kinds emulated tags 400\n"	  /* 7 */
		       "user bob iface veth? kinds direct tags 401\n"	  /* 8 */
		       "user bob iface v* kinds direct tags 402\n");	  /* 9 */

	/* A user rule beats group rules, even ones earlier in the file. */
	g = look(p, 1000, unet_only, 1, "veth0");
	assert_string_equal(g.rule, "policy:4 user alice iface veth*");
	assert_true(unetd_grant_tag(&g, 300));
	assert_false(unetd_grant_tag(&g, 100));
	/* A user's deny beats its groups' grants. */
	g = look(p, 1000, unet_only, 1, "eth0");
	assert_nothing(&g);
	assert_string_equal(g.rule, "policy:5 user alice iface eth*");
	assert_non_null(g.priv);
	/* No user rule for this interface: the group's. */
	g = look(p, 1000, unet_only, 1, "lo");
	assert_string_equal(g.rule, "policy:2 group unet");
	assert_true(g.emulated && !g.direct);
	/* Among groups, the first rule in the file, whatever the order of gids. */
	g = look(p, 1001 + 5, lab_unet, 2, "veth3");
	assert_string_equal(g.rule, "policy:2 group unet");
	g = look(p, 1001 + 5, (uint32_t[]){ 901 }, 1, "veth3");
	assert_string_equal(g.rule, "policy:3 group lab iface veth*");
	assert_true(g.direct && unetd_grant_tag(&g, 200) && !unetd_grant_tag(&g, 201));
	g = look(p, 1001 + 5, (uint32_t[]){ 901 }, 1, "eth3");
	assert_string_equal(g.rule, "policy:6 group lab");
	/* Group beats default; default catches the rest. */
	g = look(p, 5555, none, 1, "eth0");
	assert_string_equal(g.rule, "policy:1 default");
	assert_true(g.allowed && unetd_grant_tag(&g, 9));
	g = look(p, 5555, NULL, 0, "eth0");
	assert_string_equal(g.rule, "policy:1 default");
	/* Among a user's rules, the first whose pattern matches. */
	g = look(p, 1001, NULL, 0, "veth1");
	assert_string_equal(g.rule, "policy:7 user bob iface veth1");
	g = look(p, 1001, NULL, 0, "veth2");
	assert_string_equal(g.rule, "policy:8 user bob iface veth?");
	g = look(p, 1001, NULL, 0, "veth22");
	assert_string_equal(g.rule, "policy:9 user bob iface v*");
	/* bob has no rule on eth0 and no groups: the default. */
	g = look(p, 1001, NULL, 0, "eth0");
	assert_string_equal(g.rule, "policy:1 default");
	unetd_policy_free(p);
}

static void test_deny_carves_out(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;
	uint32_t gids[] = { 50, 900 };

	(void)state;
	p = must_parse("user bob deny\n"
		       "group unet kinds emulated tags 2000-2999\n"
		       "default deny\n");
	g = look(p, 1001, gids, 2, "eth0");
	assert_nothing(&g);
	assert_string_equal(g.rule, "policy:1 user bob");
	g = look(p, 1000, gids, 2, "eth0");
	assert_true(g.allowed);
	g = look(p, 1000, NULL, 0, "eth0");
	assert_nothing(&g);
	assert_string_equal(g.rule, "policy:3 default");
	unetd_policy_free(p);
}

static void test_empty_policy_denies_everyone(void **state)
{
	struct unetd_policy *p = NULL;
	struct unetd_grant g;
	char err[64];

	(void)state;
	assert_int_equal(unetd_policy_parse_opts(NULL, 0, &fake_opts, &p, err, sizeof(err)), 0);
	assert_int_equal(unetd_policy_rule_count(p), 0);
	g = look(p, 0, (uint32_t[]){ 0 }, 1, "eth0");
	assert_nothing(&g);
	assert_null(g.priv);
	unetd_policy_free(p);
	p = must_parse("# nothing but comments\n\n");
	g = look(p, 0, NULL, 0, "eth0");
	assert_nothing(&g);
	unetd_policy_free(p);
}

static void test_lookup_arguments(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;
	uint32_t gid = 900;

	(void)state;
	p = must_parse("group unet kinds emulated\n");
	assert_int_equal(unetd_policy_lookup(NULL, 0, NULL, 0, "eth0", &g), -EINVAL);
	assert_int_equal(unetd_policy_lookup(p, 0, NULL, 0, NULL, &g), -EINVAL);
	assert_int_equal(unetd_policy_lookup(p, 0, NULL, 0, "eth0", NULL), -EINVAL);
	assert_int_equal(unetd_policy_lookup(p, 0, NULL, 1, "eth0", &g), -EINVAL);
	assert_int_equal(unetd_policy_lookup(p, 0, &gid, 1, "", &g), -EINVAL);
	assert_int_equal(unetd_policy_lookup(p, 0, &gid, 1, "sixteen-chars-xx", &g), -EINVAL);
	assert_int_equal(unetd_policy_lookup(p, 0, &gid, 1, "fifteen-chars-x", &g), 0);
	assert_true(g.allowed);
	assert_false(unetd_grant_tag(NULL, 5));
	assert_false(unetd_grant_udp_port(NULL, 5));
	unetd_policy_free(p);
	unetd_policy_free(NULL);
	assert_int_equal(unetd_policy_rule_count(NULL), 0);
	/* Bad arguments and options. */
	assert_int_equal(unetd_policy_parse("x", 1, NULL, NULL, 0), -EINVAL);
	assert_int_equal(unetd_policy_parse(NULL, 1, &p, NULL, 0), -EINVAL);
	{
		struct {
			struct unetd_policy_opts o;
			uint64_t future;
		} big = { .o = fake_opts, .future = 1 };

		big.o.sz = sizeof(big);
		assert_int_equal(unetd_policy_parse_opts("", 0, &big.o, &p, NULL, 0), -EINVAL);
		big.future = 0;
		assert_int_equal(unetd_policy_parse_opts("", 0, &big.o, &p, NULL, 0), 0);
		unetd_policy_free(p);
	}
}

/* ---- errors: each with its line and column --------------------------- */

static const struct {
	const char *text;
	const char *where; /* "LINE:COL: " */
	const char *what;  /* a part of the message */
} bad[] = {
	/* line structure */
	{ "alice kinds emulated", "1:1: ", "unknown keyword 'alice'" },
	{ "# ok\nusers alice kinds emulated", "2:1: ", "unknown keyword 'users'" },
	{ "user alice kinds emulated\r\n", "1:26: ", "carriage return" },
	{ "user alice kinds emulated\x01", "1:26: ", "control character 0x01" },
	{ "user al\xc3\xa9 kinds emulated", "1:8: ", "non-ASCII" },
	{ "user alice kinds emulated # caf\xc3\xa9\n\nuser bob kinds emulated\x7f", "3:24: ",
	  "control character 0x7f" },
	{ "user alice kinds emulated user bob kinds direct", "1:27: ", "one rule per line" },
	/* subjects */
	{ "user", "1:5: ", "missing user name or id after 'user'" },
	{ "group kinds emulated", "1:6: ", "missing group name or id" },
	{ "user mallory kinds emulated", "1:6: ", "unknown user 'mallory'" },
	{ "\n\ngroup nosuch kinds emulated", "3:7: ", "unknown group 'nosuch'" },
	{ "user al/ice kinds emulated", "1:6: ", "bad user name 'al/ice'" },
	{ "user -alice kinds emulated", "1:6: ", "bad user name" },
	{ "user a$b kinds emulated", "1:6: ", "bad user name" },
	{ "user 4294967295 kinds emulated", "1:6: ", "out of range" },
	{ "group 99999999999999999999999 kinds emulated", "1:7: ", "out of range" },
	{ "user 0100 kinds emulated", "1:6: ", "leading zero" },
	{ "user abcdefghijabcdefghijabcdefghijabc kinds emulated", "1:6: ", "name too long" },
	/* keys */
	{ "user alice kinds emulated speed 10", "1:27: ", "unknown keyword 'speed'" },
	{ "user alice kinds emulated tags 1 tags 2", "1:34: ", "duplicate 'tags' (first at column 27)" },
	{ "user alice iface a* kinds emulated iface b*", "1:36: ", "duplicate 'iface'" },
	{ "user alice kinds emulated tags", "1:31: ", "missing value after 'tags'" },
	{ "user alice tags kinds emulated", "1:16: ", "missing value after 'tags'" },
	{ "user alice kinds", "1:17: ", "missing value after 'kinds'" },
	{ "user alice kinds emulated deny", "1:12: ", "'kinds' in a deny rule" },
	{ "user alice deny share 5", "1:17: ", "'share' in a deny rule" },
	{ "user alice deny all", "1:17: ", "'all' in a deny rule" },
	{ "user alice all kinds direct", "1:16: ", "'kinds' with 'all'" },
	{ "user alice all udp 1", "1:16: ", "'udp' with 'all'" },
	{ "user alice tags 5", "1:1: ", "grants no kind" },
	{ "user alice deny deny", "1:17: ", "duplicate 'deny'" },
	/* kinds */
	{ "user alice kinds emulated,kernel", "1:27: ", "unknown kind 'kernel'" },
	{ "user alice kinds emulated,emulated", "1:27: ", "given twice" },
	{ "user alice kinds emulated,", "1:27: ", "empty item" },
	{ "user alice kinds ,direct", "1:18: ", "empty item" },
	{ "user alice kinds emulated,,direct", "1:27: ", "empty item" },
	/* ranges */
	{ "user alice kinds emulated tags 2000-1000", "1:32: ", "range '2000-1000' reversed" },
	{ "user alice kinds emulated tags 0-10", "1:32: ", "tag 0 is reserved" },
	{ "user alice kinds emulated udp 0", "1:31: ", "UDP port 0 is reserved" },
	{ "user alice kinds emulated tags 65536", "1:32: ", "tag '65536' out of range" },
	{ "user alice kinds emulated tags 1-65536", "1:34: ", "tag '65536' out of range" },
	{ "user alice kinds emulated udp 1-99999999999999999999999", "1:33: ", "out of range" },
	{ "user alice kinds emulated tags 1-", "1:32: ", "has no end" },
	{ "user alice kinds emulated tags -5", "1:32: ", "has no start" },
	{ "user alice kinds emulated tags 1-2-3", "1:34: ", "bad tag '2-3'" },
	{ "user alice kinds emulated tags 0x10", "1:32: ", "bad tag '0x10'" },
	{ "user alice kinds emulated tags 010", "1:32: ", "bad tag '010'" },
	{ "user alice kinds emulated tags +5", "1:32: ", "bad tag" },
	{ "user alice kinds emulated tags 1000-1999,1500", "1:42: ", "overlaps 1000-1999" },
	{ "user alice kinds emulated udp 5,5", "1:33: ", "overlaps 5-5" },
	{ "user alice kinds emulated tags 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,"
	  "23,24,25,26,27,28,29,30,31,32,33",
	  "1:119: ", "too many ranges (limit 32)" },
	/* quotas */
	{ "user alice kinds emulated endpoints 0", "1:37: ", "endpoints '0' out of range" },
	{ "user alice kinds emulated endpoints 4294967295", "1:37: ", "out of range" },
	{ "user alice kinds emulated endpoints many", "1:37: ", "bad endpoints 'many'" },
	{ "user alice kinds emulated endpoints -1", "1:37: ", "bad endpoints" },
	{ "user alice kinds emulated share 0", "1:33: ", "share '0' out of range (1-1000)" },
	{ "user alice kinds emulated share 1001", "1:33: ", "out of range (1-1000)" },
	{ "user alice kinds emulated share unlimited", "1:33: ", "bad share" },
	{ "user alice kinds emulated segment 0", "1:35: ", "at least 1 byte" },
	{ "user alice kinds emulated segment 0K", "1:35: ", "at least 1 byte" },
	{ "user alice kinds emulated segment 64m", "1:37: ", "unknown size suffix 'm'" },
	{ "user alice kinds emulated segment 64MB", "1:38: ", "unknown size suffix 'B'" },
	{ "user alice kinds emulated segment M", "1:35: ", "bad size" },
	{ "user alice kinds emulated segment 1.5G", "1:35: ", "bad size" },
	{ "user alice kinds emulated segment 17179869184G", "1:35: ", "overflows" },
	{ "user alice kinds emulated segment 18446744073709551615", "1:35: ", "overflows" },
	{ "user alice kinds emulated segment 18446744073709551616", "1:35: ", "overflows" },
	/* interfaces */
	{ "user alice iface eth/0 kinds emulated", "1:21: ", "'/'" },
	{ "user alice iface abcdefghijklmnop kinds emulated", "1:18: ", "longer than 15" },
	{ "user alice iface "
	  "a*aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa kinds emulated",
	  "1:18: ", "pattern too long" },
	/* rules that can never match */
	{ "user alice kinds emulated\nuser alice kinds direct", "2:1: ", "line 1 has the same subject and interface" },
	{ "user root kinds emulated\nuser 0 iface eth0 kinds direct", "2:1: ", "line 1 has the same subject on every interface" },
	{ "group unet iface veth* kinds emulated\ngroup 900 iface veth* deny", "2:1: ", "line 1" },
	{ "default deny\n#\ndefault kinds emulated", "3:1: ", "line 1" },
	{ "user bob iface veth? deny\nuser bob iface veth1 kinds direct", "2:1: ",
	  "line 1 has the same subject on 'veth1' (pattern 'veth?')" },
};

static void test_errors(void **state)
{
	unsigned int failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct unetd_policy *p = (struct unetd_policy *)&p; /* must become NULL */
		char err[256];
		int rc = parse_fake(bad[i].text, &p, err, sizeof(err));

		if (rc != -EINVAL || strncmp(err, bad[i].where, strlen(bad[i].where)) != 0 ||
		    !strstr(err, bad[i].what)) {
			print_error("case %zu \"%s\": rc %d, err \"%s\"; wanted \"%s...%s...\"\n", i,
				    bad[i].text, rc, rc ? err : "", bad[i].where, bad[i].what);
			failed++;
		}
		if (rc == 0)
			unetd_policy_free(p);
		else
			assert_null(p);
	}
	assert_int_equal(failed, 0);
}

static void test_error_buffer(void **state)
{
	struct unetd_policy *p;
	char err[8];

	(void)state;
	/* Truncated, but terminated; NULL err is fine. */
	memset(err, 'x', sizeof(err));
	assert_int_equal(parse_fake("bogus", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "1:1: un");
	assert_int_equal(parse_fake("bogus", &p, NULL, 0), -EINVAL);
	assert_int_equal(parse_fake("bogus", &p, err, 1), -EINVAL);
	assert_string_equal(err, "");
	/* Cleared on success. */
	assert_int_equal(parse_fake("user alice kinds direct", &p, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	unetd_policy_free(p);
}

static void test_resolver_failure(void **state)
{
	struct unetd_policy *p;
	char err[128];

	(void)state;
	assert_int_equal(parse_fake("\nuser broken kinds direct", &p, err, sizeof(err)), -EIO);
	assert_null(p);
	assert_non_null(strstr(err, "2:6: looking up user 'broken'"));
}

static void test_nul_in_text(void **state)
{
	static const char text[] = "user alice kinds emulated # ok\nuser bob\0 kinds direct\n";
	static const char text2[] = "user alice kinds emulated # a\0b\n";
	struct unetd_policy *p;
	char err[128];

	(void)state;
	assert_int_equal(unetd_policy_parse_opts(text, sizeof(text) - 1, &fake_opts, &p, err,
						 sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "2:9: NUL byte");
	assert_int_equal(unetd_policy_parse_opts(text2, sizeof(text2) - 1, &fake_opts, &p, err,
						 sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "1:30: NUL byte");
	/* len bounds the text: no NUL needed at its end. */
	assert_int_equal(unetd_policy_parse_opts("user alice kinds directXYZ", 23, &fake_opts, &p, err,
						 sizeof(err)),
			 0);
	unetd_policy_free(p);
}

/* ---- limits --------------------------------------------------------- */

static void test_line_length(void **state)
{
	char *text = malloc(UNETD_POLICY_MAX_LINE + 64);
	const char *rule = "user alice kinds emulated #";
	struct unetd_policy *p;
	char err[128];
	size_t n;

	(void)state;
	assert_non_null(text);
	/* Exactly the limit: fine.  One byte more: refused. */
	strcpy(text, rule);
	n = strlen(rule);
	memset(text + n, 'c', UNETD_POLICY_MAX_LINE - n);
	text[UNETD_POLICY_MAX_LINE] = '\n';
	assert_int_equal(unetd_policy_parse_opts(text, UNETD_POLICY_MAX_LINE + 1, &fake_opts, &p, err,
						 sizeof(err)),
			 0);
	unetd_policy_free(p);
	text[UNETD_POLICY_MAX_LINE] = 'c';
	assert_int_equal(unetd_policy_parse_opts(text, UNETD_POLICY_MAX_LINE + 1, &fake_opts, &p, err,
						 sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "1:1025: line too long (limit 1024 bytes)");
	free(text);
}

static void test_rule_count(void **state)
{
	size_t cap = (UNETD_POLICY_MAX_RULES + 1) * 40;
	char *text = malloc(cap);
	struct unetd_policy *p;
	char err[128];
	size_t n = 0;

	(void)state;
	assert_non_null(text);
	for (int i = 0; i < UNETD_POLICY_MAX_RULES; i++)
		n += (size_t)snprintf(text + n, cap - n, "user %d kinds emulated\n", 10000 + i);
	assert_int_equal(unetd_policy_parse_opts(text, n, &fake_opts, &p, err, sizeof(err)), 0);
	assert_int_equal(unetd_policy_rule_count(p), UNETD_POLICY_MAX_RULES);
	unetd_policy_free(p);
	n += (size_t)snprintf(text + n, cap - n, "user 1 kinds emulated\n");
	assert_int_equal(unetd_policy_parse_opts(text, n, &fake_opts, &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "4097:1: too many rules (limit 4096)");
	free(text);
}

static void test_range_count(void **state)
{
	char text[512];
	struct unetd_policy *p;
	struct unetd_grant g;
	size_t n;

	(void)state;
	n = (size_t)snprintf(text, sizeof(text), "user alice kinds emulated udp 1");
	for (int i = 2; i <= UNETD_POLICY_MAX_RANGES; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, ",%d", i * 10);
	p = must_parse(text);
	g = look(p, 1000, NULL, 0, "eth0");
	assert_true(unetd_grant_udp_port(&g, 1));
	assert_true(unetd_grant_udp_port(&g, UNETD_POLICY_MAX_RANGES * 10));
	assert_false(unetd_grant_udp_port(&g, 2));
	unetd_policy_free(p);
}

/* ---- the built-in policy -------------------------------------------- */

static void check_default(const struct unetd_policy *p, bool have_unet, const char *origin)
{
	uint32_t unet[] = { 1000, 900 }, other[] = { 1000, 50 };
	struct unetd_grant g;
	char want[64];

	/* root: everything, everywhere. */
	g = look(p, 0, (uint32_t[]){ 0 }, 1, "veth0");
	assert_true(g.allowed && g.emulated && g.direct);
	assert_int_equal(g.max_endpoints, UNETD_POLICY_UNLIMITED32);
	assert_true(g.max_segment_bytes == UNETD_POLICY_UNLIMITED64);
	assert_true(unetd_grant_tag(&g, 1) && unetd_grant_tag(&g, 65535));
	assert_true(unetd_grant_udp_port(&g, 53) && unetd_grant_udp_port(&g, 65535));
	snprintf(want, sizeof(want), "%s:2 user root", origin);
	assert_string_equal(g.rule, want);

	/* A member of unet: emulated endpoints, tags from 1024, no UDP ports. */
	g = look(p, 1000, unet, 2, "enp3s0");
	if (have_unet) {
		assert_true(g.allowed && g.emulated && !g.direct);
		assert_int_equal(g.max_endpoints, 8);
		assert_true(g.max_segment_bytes == 64ull << 20);
		assert_int_equal(g.share, 100);
		assert_false(unetd_grant_tag(&g, 1));
		assert_false(unetd_grant_tag(&g, 1023));
		assert_true(unetd_grant_tag(&g, 1024));
		assert_true(unetd_grant_tag(&g, 65535));
		assert_false(unetd_grant_udp_port(&g, 1024));
		assert_false(unetd_grant_udp_port(&g, 40000));
		snprintf(want, sizeof(want), "%s:3 group unet", origin);
		assert_string_equal(g.rule, want);
	} else {
		assert_nothing(&g);
	}

	/* Anyone else: nothing. */
	g = look(p, 1000, other, 2, "enp3s0");
	assert_nothing(&g);
	g = look(p, 65534, NULL, 0, "lo");
	assert_nothing(&g);
}

static void test_default_policy(void **state)
{
	struct unetd_policy_opts o = fake_opts;
	struct unetd_policy *p;
	struct unetd_grant g;

	(void)state;
	assert_int_equal(unetd_policy_default_opts(&fake_opts, &p), 0);
	check_default(p, true, "built-in");
	unetd_policy_free(p);

	/* A host without a group unet: the rule matches no one, root keeps everything. */
	o.group_id = fake_group_no_unet;
	assert_int_equal(unetd_policy_default_opts(&o, &p), 0);
	check_default(p, false, "built-in");
	g = look(p, 1000, (uint32_t[]){ 900 }, 1, "eth0");
	assert_string_equal(g.rule, "built-in:4 default");
	unetd_policy_free(p);

	/* With the host's own database: root is root everywhere. */
	assert_int_equal(unetd_policy_default(&p), 0);
	g = look(p, 0, NULL, 0, "eth0");
	assert_true(g.allowed && g.direct && g.emulated);
	g = look(p, 4000000000u, NULL, 0, "eth0");
	assert_nothing(&g);
	unetd_policy_free(p);
}

/* The tree's root, from this file's path as the Makefile compiles it. */
static const char *tree_path(const char *rel, char *buf, size_t len)
{
	const char *me = __FILE__, *cut = strstr(me, "tests/unit/test_policy.c");

	snprintf(buf, len, "%.*s%s", cut ? (int)(cut - me) : 0, me, rel);
	return buf;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(UNETD_POLICY_MAX_FILE);
	assert_non_null(buf);
	*len = fread(buf, 1, UNETD_POLICY_MAX_FILE, f);
	fclose(f);
	return buf;
}

static void test_etc_file_is_the_default(void **state)
{
	struct unetd_policy_opts o = fake_opts;
	struct unetd_policy *p;
	char path[PATH_MAX], err[256];
	size_t len = 0;
	char *text;

	(void)state;
	text = read_all(tree_path("etc/unetd.policy", path, sizeof(path)), &len);
	if (!text) {
		print_message("%s not found from here: skipped\n", path);
		skip();
	}
	o.origin = "etc";
	assert_int_equal(unetd_policy_parse_opts(text, len, &o, &p, err, sizeof(err)), 0);
	/* Same grants; the line numbers are the file's own. */
	{
		struct unetd_policy *b;
		uint32_t cases[][3] = { { 0, 0, 0 }, { 1000, 900, 1 }, { 1000, 50, 1 }, { 7, 0, 0 } };

		assert_int_equal(unetd_policy_default_opts(&fake_opts, &b), 0);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct unetd_grant x = look(p, cases[i][0], &cases[i][1], cases[i][2], "eth0");
			struct unetd_grant y = look(b, cases[i][0], &cases[i][1], cases[i][2], "eth0");

			assert_int_equal(x.allowed, y.allowed);
			assert_int_equal(x.emulated, y.emulated);
			assert_int_equal(x.direct, y.direct);
			assert_int_equal(x.max_endpoints, y.max_endpoints);
			assert_true(x.max_segment_bytes == y.max_segment_bytes);
			assert_int_equal(x.share, y.share);
			for (unsigned int t = 0; t <= 65535; t += 1)
				assert_int_equal(unetd_grant_tag(&x, (uint16_t)t),
						 unetd_grant_tag(&y, (uint16_t)t));
			for (unsigned int t = 0; t <= 65535; t += 7)
				assert_int_equal(unetd_grant_udp_port(&x, (uint16_t)t),
						 unetd_grant_udp_port(&y, (uint16_t)t));
		}
		unetd_policy_free(b);
	}
	unetd_policy_free(p);
	free(text);
}

static void test_host_database(void **state)
{
	struct unetd_policy *p;
	char err[128];
	struct unetd_grant g;

	(void)state;
	/* root exists on every host, as user and as group. */
	assert_int_equal(unetd_policy_parse("user root kinds direct\ngroup root kinds emulated", 48,
					    &p, err, sizeof(err)),
			 0);
	g = look(p, 0, NULL, 0, "eth0");
	assert_true(g.direct);
	g = look(p, 5, (uint32_t[]){ 0 }, 1, "eth0");
	assert_true(g.emulated && !g.direct);
	unetd_policy_free(p);
	assert_int_equal(unetd_policy_parse("user no-such-user-unetd kinds direct", 36, &p, err,
					    sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "1:6: unknown user 'no-such-user-unetd'");
}

/* ---- files ---------------------------------------------------------- */

struct tmpdir {
	char dir[64];
	char file[128];
};

static int setup_dir(void **state)
{
	struct tmpdir *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	strcpy(t->dir, "/tmp/unetd-policy-test.XXXXXX");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	snprintf(t->file, sizeof(t->file), "%s/unetd.policy", t->dir);
	*state = t;
	return 0;
}

static int teardown_dir(void **state)
{
	struct tmpdir *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (system(cmd) != 0)
		return -1;
	free(t);
	return 0;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void need_root(void)
{
	if (geteuid() != 0) {
		print_message("needs root (files must be root's): skipped\n");
		skip();
	}
}

static void test_load_good_and_syntax(void **state)
{
	struct tmpdir *t = *state;
	struct unetd_policy *p;
	struct unetd_grant g;
	char err[256], want[256];

	need_root();
	write_file(t->file, "# test\nuser root all\n", 0644);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), 0);
	g = look(p, 0, NULL, 0, "eth0");
	assert_true(g.allowed);
	assert_string_equal(g.rule, "policy:2 user root");
	unetd_policy_free(p);

	write_file(t->file, "user root all\nuser root kinds banana\n", 0600);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);
	snprintf(want, sizeof(want), "%s:2:17: unknown kind 'banana' (expected emulated or direct)",
		 t->file);
	assert_string_equal(err, want);
}

static void test_load_owner_and_mode(void **state)
{
	struct tmpdir *t = *state;
	struct unetd_policy *p;
	char err[256];

	need_root();
	write_file(t->file, "user root all\n", 0644);
	assert_int_equal(chown(t->file, 65534, 65534), 0);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), -EPERM);
	assert_null(p);
	assert_non_null(strstr(err, "file owned by uid 65534, not root"));
	assert_non_null(strstr(err, t->file));

	/* Root's file, but the group may write it (even if the group is root's). */
	assert_int_equal(chown(t->file, 0, 0), 0);
	assert_int_equal(chmod(t->file, 0664), 0);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by group (mode 0664)"));
	assert_int_equal(chmod(t->file, 0646), 0);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by others"));
	/* Owner root, group nogroup, not writable by it: fine. */
	assert_int_equal(chown(t->file, 0, 65534), 0);
	assert_int_equal(chmod(t->file, 0640), 0);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), 0);
	unetd_policy_free(p);
	/* Read-only for root alone: fine. */
	assert_int_equal(chmod(t->file, 0400), 0);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), 0);
	unetd_policy_free(p);
}

static void test_load_directory(void **state)
{
	struct tmpdir *t = *state;
	struct unetd_policy *p;
	char err[256];

	need_root();
	write_file(t->file, "user root all\n", 0644);
	/* Others could swap the file for another: refused. */
	assert_int_equal(chmod(t->dir, 0777), 0);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "directory writable by others"));
	assert_int_equal(chmod(t->dir, 0775), 0);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "directory writable by group"));
	/* Sticky, as /tmp: others cannot replace root's file. */
	assert_int_equal(chmod(t->dir, 01777), 0);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), 0);
	unetd_policy_free(p);
	assert_int_equal(chmod(t->dir, 0755), 0);
	assert_int_equal(chown(t->dir, 65534, 65534), 0);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "directory owned by uid 65534"));
	assert_int_equal(chown(t->dir, 0, 0), 0);
	assert_int_equal(chmod(t->dir, 0700), 0);
}

static void test_load_not_a_plain_file(void **state)
{
	struct tmpdir *t = *state;
	struct unetd_policy *p;
	char err[256], link[160], fifo[160], missing[160], sub[160];

	need_root();
	write_file(t->file, "user root all\n", 0644);
	snprintf(link, sizeof(link), "%s/link.policy", t->dir);
	assert_int_equal(symlink(t->file, link), 0);
	assert_int_equal(unetd_policy_load(link, &p, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));

	/* A FIFO must be refused at once, not block the daemon in open(). */
	snprintf(fifo, sizeof(fifo), "%s/fifo.policy", t->dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(unetd_policy_load(fifo, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));

	assert_int_equal(unetd_policy_load(t->dir, &p, err, sizeof(err)), -EINVAL);
	snprintf(sub, sizeof(sub), "%s/", t->dir);
	assert_int_equal(unetd_policy_load(sub, &p, err, sizeof(err)), -EINVAL);

	snprintf(missing, sizeof(missing), "%s/missing.policy", t->dir);
	assert_int_equal(unetd_policy_load(missing, &p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, missing));
	snprintf(missing, sizeof(missing), "%s/nodir/x.policy", t->dir);
	assert_int_equal(unetd_policy_load(missing, &p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, missing));
	assert_int_equal(unetd_policy_load("", &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(unetd_policy_load(NULL, &p, err, sizeof(err)), -EINVAL);
}

static void test_load_too_big(void **state)
{
	struct tmpdir *t = *state;
	struct unetd_policy *p;
	char err[256];
	int fd;

	need_root();
	write_file(t->file, "user root all\n", 0644);
	fd = open(t->file, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, UNETD_POLICY_MAX_FILE + 1), 0);
	close(fd);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "larger than"));
	/* The largest allowed (a comment padded with spaces) loads. */
	fd = open(t->file, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	{
		char line[1001];

		memset(line, ' ', sizeof(line) - 1);
		line[sizeof(line) - 1] = '\n';
		for (int i = 0; i < UNETD_POLICY_MAX_FILE / 1001; i++)
			assert_int_equal(write(fd, line, sizeof(line)), (ssize_t)sizeof(line));
		assert_int_equal(ftruncate(fd, UNETD_POLICY_MAX_FILE), 0);
	}
	close(fd);
	assert_int_equal(unetd_policy_load(t->file, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL byte")); /* ftruncate's zeros: read to the end */
}

/* ---- fuzz ----------------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64*: seeded, so a failure replays. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static const char *const vocab[] = {
	"user", "group", "default", "alice", "bob", "root", "unet", "lab", "nosuch", "broken", "0",
	"1000", "900", "4294967294", "4294967295", "iface", "veth*", "eth0", "*", "[a-", "v?th",
	"kinds", "emulated", "direct", "emulated,direct", "emulated,", ",", "tags", "udp", "1-65535",
	"0", "65535", "65536", "1000-1999", "2000-1000", "1,2,3", "1-", "-1", "any", "none",
	"endpoints", "segment", "share", "1000", "1001", "64M", "17179869184G", "unlimited", "1K",
	"deny", "all", "#", "# comment", "\t", " ", "\r", "\xff", "99999999999999999999",
};

static size_t gen_random(char *buf, size_t cap)
{
	size_t n = 0;
	unsigned int lines = 1 + rnd() % 8;

	for (unsigned int l = 0; l < lines; l++) {
		unsigned int toks = rnd() % 14;

		for (unsigned int i = 0; i < toks; i++) {
			const char *w;
			char num[24];

			if (rnd() % 6 == 0) {
				snprintf(num, sizeof(num), "%u", rnd() % 70000);
				w = num;
			} else {
				w = vocab[rnd() % (sizeof(vocab) / sizeof(vocab[0]))];
			}
			if (n + strlen(w) + 2 >= cap)
				return n;
			memcpy(buf + n, w, strlen(w));
			n += strlen(w);
			buf[n++] = rnd() % 9 ? ' ' : (rnd() % 2 ? ',' : '-');
		}
		if (n + 1 >= cap)
			return n;
		buf[n++] = '\n';
	}
	return n;
}

static void app(char *buf, size_t *n, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void app(char *buf, size_t *n, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n >= cap)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *n, cap - *n, fmt, ap);
	va_end(ap);
	if (r > 0)
		*n += (size_t)r < cap - *n ? (size_t)r : cap - *n - 1;
}

static void app_ranges(char *buf, size_t *n, size_t cap)
{
	unsigned int k = 1 + rnd() % 5, lo = rnd() % 3 ? 1 + rnd() % 2000 : rnd() % 70000;

	for (unsigned int i = 0; i < k; i++) {
		unsigned int hi = lo + (rnd() % 4 ? rnd() % 500 : 0);

		app(buf, n, cap, i ? "," : "");
		if (hi == lo || rnd() % 9 == 0)
			app(buf, n, cap, "%u", lo);
		else
			app(buf, n, cap, "%u-%u", lo, hi);
		lo = hi + 1 + (rnd() % 8 ? rnd() % 3000 : 0); /* sometimes adjacent */
		if (rnd() % 20 == 0)
			lo -= lo > 50 ? 50 : 0; /* sometimes overlapping */
	}
}

/* Rules from the grammar with random values, most of them valid. */
static size_t gen_grammar(char *buf, size_t cap)
{
	static const char *const users[] = { "alice", "bob", "root", "carol", "nosuch" };
	static const char *const groups[] = { "unet", "lab", "staff", "wheel", "root" };
	static const char *const ifaces[] = { "*", "veth*", "eth0", "v?th[0-3]", "lo", "en*" };
	static const char *const kinds[] = { "emulated", "direct", "emulated,direct",
					     "direct,emulated" };
	static const char *const suffix[] = { "", "K", "M", "G" };
	unsigned int lines = 1 + rnd() % 6;
	size_t n = 0;

	for (unsigned int l = 0; l < lines; l++) {
		switch (rnd() % 5) {
		case 0: app(buf, &n, cap, "user %s", users[rnd() % 5]); break;
		case 1: app(buf, &n, cap, "user %u", rnd() % 3 ? 1000 + rnd() % 40 : rnd()); break;
		case 2: app(buf, &n, cap, "group %s", groups[rnd() % 5]); break;
		case 3: app(buf, &n, cap, "group %u", 890 + rnd() % 20); break;
		default: app(buf, &n, cap, "default"); break;
		}
		if (rnd() % 2)
			app(buf, &n, cap, " iface %s", ifaces[rnd() % 6]);
		switch (rnd() % 8) {
		case 0:
			app(buf, &n, cap, " deny");
			break;
		case 1:
			app(buf, &n, cap, " all");
			break;
		default:
			app(buf, &n, cap, " kinds %s", kinds[rnd() % 4]);
			if (rnd() % 3) {
				app(buf, &n, cap, " tags ");
				app_ranges(buf, &n, cap);
			}
			if (rnd() % 3 == 0) {
				app(buf, &n, cap, " udp ");
				app_ranges(buf, &n, cap);
			}
		}
		if (rnd() % 3 == 0)
			app(buf, &n, cap, " endpoints %u", rnd() % 30);
		if (rnd() % 3 == 0)
			app(buf, &n, cap, " segment %u%s", rnd() % 5000, suffix[rnd() % 4]);
		if (rnd() % 3 == 0)
			app(buf, &n, cap, " share %u", rnd() % 1100);
		if (rnd() % 4 == 0)
			app(buf, &n, cap, "\t# note %u", rnd());
		app(buf, &n, cap, "\n");
	}
	return n;
}

static const char *const seeds[] = {
	"user alice iface veth* kinds emulated,direct tags 1000-1999 udp 7000-7100 endpoints 4 "
	"segment 64M share 10\ngroup unet kinds emulated tags 1024-65535\ndefault deny\n",
	"user root all endpoints unlimited segment unlimited\n# c\n\tgroup lab iface e* deny\n",
	"user 1000 kinds direct tags 1,3,5-9 udp any\nuser bob iface v? kinds emulated share 1000\n",
};

static size_t gen_mutated(char *buf, size_t cap)
{
	const char *s = seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))];
	size_t n = strlen(s);
	unsigned int edits = 1 + rnd() % 3;

	memcpy(buf, s, n);
	for (unsigned int e = 0; e < edits && n > 0; e++) {
		size_t at = rnd() % n;

		switch (rnd() % 5) {
		case 0: /* replace a byte with anything */
			buf[at] = (char)(rnd() & 0xff);
			break;
		case 1: /* replace with a byte the grammar cares about */
			buf[at] = "0123456789,-# \t\nKMG*"[rnd() % 20];
			break;
		case 2: /* delete */
			memmove(buf + at, buf + at + 1, n - at - 1);
			n--;
			break;
		case 3: /* insert */
			if (n + 1 < cap) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = "09,-#\n x"[rnd() % 8];
				n++;
			}
			break;
		default: /* duplicate a chunk (repeated keys, repeated lines) */
		{
			size_t len = 1 + rnd() % 24;

			if (at + len > n)
				len = n - at;
			if (n + len < cap) {
				memmove(buf + at + len, buf + at, n - at);
				n += len;
			}
			break;
		}
		}
	}
	return n;
}

static void fuzz_one(const char *text, size_t len, unsigned int *ok, unsigned int *bad_count)
{
	struct unetd_policy *p = NULL;
	char err[256];
	unsigned int lines = 1, line, col;
	int rc;

	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	rc = unetd_policy_parse_opts(text, len, &fake_opts, &p, err, sizeof(err));
	if (rc) {
		/* Refused: with a line that exists and a message. */
		if (rc == -EIO) { /* "broken" makes the fake database fail */
			assert_non_null(strstr(err, "looking up"));
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_int_equal(sscanf(err, "%u:%u: ", &line, &col), 2);
			assert_true(line >= 1 && line <= lines);
			assert_true(col >= 1 && col <= UNETD_POLICY_MAX_LINE + 1);
			assert_true(strlen(strstr(err, ": ")) > 2);
		}
		assert_null(p);
		(*bad_count)++;
		return;
	}
	assert_string_equal(err, "");
	/* Accepted: every lookup answers, and answers something consistent. */
	for (int i = 0; i < 8; i++) {
		static const char *const ifs[] = { "eth0", "veth1", "lo", "vth", "abcdefghijklmno" };
		uint32_t gids[3] = { rnd() % 2 ? 900 : 901, rnd() % 1200, 50 };
		uint32_t uid = rnd() % 3 ? (uint32_t[]){ 0, 1000, 1001, 4242 }[rnd() % 4] : rnd();
		struct unetd_grant g = look(p, uid, gids, rnd() % 4, ifs[rnd() % 5]);
		uint16_t x = (uint16_t)rnd();

		if (g.allowed) {
			assert_true(g.emulated || g.direct);
			assert_true(g.share >= 1 && g.share <= 1000);
			assert_true(g.max_endpoints >= 1 && g.max_segment_bytes >= 1);
			assert_non_null(g.priv);
		} else {
			assert_false(unetd_grant_tag(&g, x));
			assert_false(unetd_grant_udp_port(&g, x));
		}
		assert_false(unetd_grant_tag(&g, 0));
		assert_true(memchr(g.rule, '\0', sizeof(g.rule)) != NULL);
		(void)unetd_grant_tag(&g, x);
		(void)unetd_grant_udp_port(&g, x);
	}
	unetd_policy_free(p);
	(*ok)++;
}

#define FUZZ_RANDOM 2000
#define FUZZ_GRAMMAR 3000
#define FUZZ_MUTATED 3000

static void test_fuzz(void **state)
{
	unsigned int ok = 0, refused = 0;
	char *buf = malloc(4096);

	(void)state;
	assert_non_null(buf);
	rng_state = 0x756e65742d706f6cull; /* "unet-pol" */
	for (int i = 0; i < FUZZ_RANDOM; i++) {
		size_t n = gen_random(buf, 4096);

		fuzz_one(buf, n, &ok, &refused);
	}
	for (int i = 0; i < FUZZ_GRAMMAR; i++) {
		size_t n = gen_grammar(buf, 4096);

		fuzz_one(buf, n, &ok, &refused);
	}
	for (int i = 0; i < FUZZ_MUTATED; i++) {
		size_t n = gen_mutated(buf, 4096);

		fuzz_one(buf, n, &ok, &refused);
	}
	print_message("fuzz: %d texts (%d random, %d from the grammar, %d mutated): "
		      "%u accepted, %u refused\n",
		      FUZZ_RANDOM + FUZZ_GRAMMAR + FUZZ_MUTATED, FUZZ_RANDOM, FUZZ_GRAMMAR,
		      FUZZ_MUTATED, ok, refused);
	/* Both paths exercised, or the generators are useless. */
	assert_true(ok > 1000 && refused > 1000);
	free(buf);
}

/* ---- channels, and the ranges as WHOAMI reports them ------------------ */

static void test_channels(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;

	(void)state;
	p = must_parse("user alice kinds emulated channels 3\n"
		       "user bob kinds emulated channels unlimited\n"
		       "user carol kinds emulated\n"
		       "user 1003 deny\n");
	g = look(p, 1000, NULL, 0, "veth0");
	assert_int_equal(g.max_channels, 3);
	g = look(p, 1001, NULL, 0, "veth0");
	assert_int_equal(g.max_channels, UNETD_POLICY_UNLIMITED32);
	g = look(p, 1002, NULL, 0, "veth0");
	assert_int_equal(g.max_channels, 256); /* the default */
	g = look(p, 1003, NULL, 0, "veth0");
	assert_int_equal(g.max_channels, 0);
	unetd_policy_free(p);
}

static void test_addrs(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;
	char err[256];

	(void)state;
	p = must_parse("user alice kinds emulated addrs 10.77.0.3,192.168.5.0/24\n"
		       "user bob kinds emulated\n"
		       "user carol all\n");
	g = look(p, 1000, NULL, 0, "veth0");
	assert_true(unetd_grant_addr(&g, 0x0a4d0003));
	assert_false(unetd_grant_addr(&g, 0x0a4d0004));
	assert_true(unetd_grant_addr(&g, 0xc0a805c8));
	assert_false(unetd_grant_addr(&g, 0xc0a806c8));
	assert_false(unetd_grant_addr(&g, 0));
	g = look(p, 1001, NULL, 0, "veth0"); /* none unless granted */
	assert_false(unetd_grant_addr(&g, 0x0a4d0003));
	g = look(p, 1002, NULL, 0, "veth0"); /* all: any */
	assert_true(unetd_grant_addr(&g, 0x01020304));
	unetd_policy_free(p);
	for (unsigned int i = 0; i < 6; i++) {
		static const char *const bad[] = {
			"user alice kinds emulated addrs 10.1.2\n",
			"user alice kinds emulated addrs 1.2.3.4/33\n",
			"user alice kinds emulated addrs 1.2.3.256\n",
			"user alice kinds emulated addrs 1.2.3.4x\n",
			"user alice kinds emulated addrs 1.2.3.4/\n",
			"user alice all addrs 1.2.3.4\n",
		};

		p = NULL;
		assert_int_equal(parse_fake(bad[i], &p, err, sizeof(err)), -EINVAL);
		assert_null(p);
	}
}

static void test_format_ranges(void **state)
{
	struct unetd_policy *p;
	struct unetd_grant g;
	char buf[96], small[16];
	char text[512];
	size_t off;

	(void)state;
	/* Unsorted, adjacent and overlapping ranges come out joined. */
	p = must_parse("user alice kinds emulated tags 300-65535,101-150,1-100,200 udp 7000\n"
		       "user bob kinds emulated\n"
		       "user carol all\n");
	g = look(p, 1000, NULL, 0, "veth0");
	unetd_grant_format_tags(&g, buf, sizeof(buf));
	assert_string_equal(buf, "1-150,200,300-65535");
	unetd_grant_format_udp(&g, buf, sizeof(buf));
	assert_string_equal(buf, "7000");
	unetd_grant_format_tags(&g, small, sizeof(small));
	assert_string_equal(small, "1-150,200...");
	g = look(p, 1001, NULL, 0, "veth0");
	unetd_grant_format_tags(&g, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	g = look(p, 1002, NULL, 0, "veth0");
	unetd_grant_format_udp(&g, buf, sizeof(buf));
	assert_string_equal(buf, "1-65535");
	g = look(p, 4242, NULL, 0, "veth0"); /* no rule */
	unetd_grant_format_tags(&g, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	unetd_policy_free(p);

	/* The most ranges a rule may have (32), single tags: cut with "...". */
	off = (size_t)snprintf(text, sizeof(text), "user alice kinds emulated tags ");
	for (unsigned int t = 10000; t < 10064; t += 2)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%u", t > 10000 ? "," : "", t);
	snprintf(text + off, sizeof(text) - off, "\n");
	p = must_parse(text);
	g = look(p, 1000, NULL, 0, "veth0");
	unetd_grant_format_tags(&g, buf, sizeof(buf));
	assert_true(strlen(buf) < sizeof(buf));
	assert_string_equal(buf + strlen(buf) - 3, "...");
	assert_memory_equal(buf, "10000,10002,10004,", 18);
	unetd_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_keyword),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_all_unlimited_any_none),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_numeric_ids_and_layout),
		cmocka_unit_test(test_ranges_unsorted),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_deny_carves_out),
		cmocka_unit_test(test_empty_policy_denies_everyone),
		cmocka_unit_test(test_lookup_arguments),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_error_buffer),
		cmocka_unit_test(test_resolver_failure),
		cmocka_unit_test(test_nul_in_text),
		cmocka_unit_test(test_line_length),
		cmocka_unit_test(test_rule_count),
		cmocka_unit_test(test_range_count),
		cmocka_unit_test(test_default_policy),
		cmocka_unit_test(test_etc_file_is_the_default),
		cmocka_unit_test(test_host_database),
		cmocka_unit_test_setup_teardown(test_load_good_and_syntax, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_load_owner_and_mode, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_load_directory, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_load_not_a_plain_file, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_load_too_big, setup_dir, teardown_dir),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_channels),
		cmocka_unit_test(test_addrs),
		cmocka_unit_test(test_format_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
