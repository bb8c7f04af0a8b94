// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_subid - unetd's subordinate uid ranges (daemon/subid.c): lines
 * that parse and each kind that does not (with its reason); the first
 * range wins an overlap; uid 0 is never subordinate; a range of root's
 * is an accounting identity of its own; the bound on ranges; loading a
 * file ("none", missing, too large, not a regular file); and a seeded
 * fuzz (ASan sees any read past the text, which is not NUL-terminated)
 * whose ranges and skipped lines must agree with a model written apart
 * from the parser.
 */
#include <inttypes.h>
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

#include "fuzz.h"
#include "unetd.h"

/* The daemon's log, as subid.c's loader speaks it: counted. */
int unetd_log_level = UNET_LOG_DEBUG;
static unsigned int log_warnings;

void unetd_log(int level, const char *fmt, ...)
{
	if (level == UNET_LOG_WARN)
		log_warnings++;
	(void)fmt;
}

/* Two users: alice (1000) and root. */
static int name_uid(const char *name, uint32_t *uid)
{
	if (!strcmp(name, "alice"))
		*uid = 1000;
	else if (!strcmp(name, "root"))
		*uid = 0;
	else
		return -1;
	return 0;
}

struct warns {
	unsigned int n;
	unsigned int line[16];
	char why[16][64];
};

static void warn(void *ctx, unsigned int lineno, const char *why)
{
	struct warns *w = ctx;

	if (w->n < 16) {
		w->line[w->n] = lineno;
		snprintf(w->why[w->n], sizeof(w->why[0]), "%s", why);
	}
	w->n++;
}

/* Parse text (copied to a buffer of its exact length). */
static unsigned int parse(const char *text, struct unetd_subids *s, struct warns *w)
{
	size_t len = strlen(text);
	char *buf = malloc(len ? len : 1);
	unsigned int skipped;

	assert_non_null(buf);
	memcpy(buf, text, len);
	memset(w, 0, sizeof(*w));
	skipped = unetd_subid_parse(buf, len, s, name_uid, warn, w);
	free(buf);
	return skipped;
}

static void test_good_lines(void **state)
{
	struct unetd_subids s;
	struct warns w;

	(void)state;
	assert_int_equal(parse("alice:100000:65536\n"
			       "# a comment: 1:2:3\n"
			       "\n"
			       "2000:165536:10\n"
			       "root:60000:200\n"
			       "3000:4294967294:1", /* the last uid, no newline */
			       &s, &w),
			 0);
	assert_int_equal(w.n, 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.r[0].owner, 1000);
	assert_int_equal(s.r[0].start, 100000);
	assert_int_equal(s.r[0].count, 65536);
	assert_int_equal(s.r[1].owner, 2000);
	assert_int_equal(s.r[2].owner, 0);
	assert_int_equal(s.r[3].start, 4294967294u);
	unetd_subid_free(&s);
	assert_null(s.r);
	assert_int_equal(s.n, 0);
}

static void test_bad_lines(void **state)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "alice", "not owner:start:count" },
		{ "alice:1", "not owner:start:count" },
		{ "alice::1", "start is not a number" },
		{ "alice:+1:1", "start is not a number" },
		{ "alice: 1:1", "start is not a number" },
		{ "alice:12345678901:1", "start is not a number" },
		{ "alice:4294967296:1", "start is not a number" },
		{ "alice:1:", "count is not a number (or a field too many)" },
		{ "alice:1:1:1", "count is not a number (or a field too many)" },
		{ "alice:1:1 ", "count is not a number (or a field too many)" },
		{ "alice:1:1\r", "count is not a number (or a field too many)" },
		{ "alice:1:0", "count 0" },
		{ "alice:4294967295:1", "range past the last uid" },
		{ "alice:1:4294967295", "range past the last uid" },
		{ "4294967295:1:1", "owner (uid_t)-1" },
		{ ":1:1", "owner is neither a uid nor a user name" },
		{ "-alice:1:1", "owner is neither a uid nor a user name" },
		{ "al ice:1:1", "owner is neither a uid nor a user name" },
		{ "a$b:1:1", "owner is neither a uid nor a user name" },
		{ "12345678901:1:1", "owner is neither a uid nor a user name" },
		{ "bob:1:1", "no such user" },
		{ "bob$:1:1", "no such user" },
	};
	char line[300];
	struct unetd_subids s;
	struct warns w;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "alice:1:1\n%s\n2000:5:5\n", bad[i].line);
		assert_int_equal(parse(line, &s, &w), 1);
		assert_int_equal(w.n, 1);
		assert_int_equal(w.line[0], 2);
		if (strcmp(w.why[0], bad[i].why))
			fail_msg("'%s': '%s', not '%s'", bad[i].line, w.why[0], bad[i].why);
		assert_int_equal(s.n, 2); /* the lines around it stand */
		unetd_subid_free(&s);
	}
	/* A line too long, even if it would parse. */
	memset(line, '0', sizeof(line));
	memcpy(line, "alice:1:", 8);
	line[UNETD_SUBID_LINE_MAX + 1] = '\0';
	line[UNETD_SUBID_LINE_MAX] = '1';
	assert_int_equal(parse(line, &s, &w), 1);
	assert_string_equal(w.why[0], "line too long");
	assert_int_equal(s.n, 0);
	unetd_subid_free(&s);
}

static void test_find_and_acct(void **state)
{
	struct unetd_subids s;
	struct warns w;

	(void)state;
	assert_int_equal(parse("alice:100:10\n"
			       "2000:105:10\n" /* overlaps alice's: hers win */
			       "root:60000:200\n"
			       "3000:0:10\n" /* holds uid 0 */
			       "0:1000000:200000\n", /* root's, sliced by containers */
			       &s, &w),
			 0);
	assert_null(unetd_subid_find(&s, 99));
	assert_int_equal(unetd_subid_find(&s, 100)->owner, 1000);
	assert_int_equal(unetd_subid_find(&s, 109)->owner, 1000);
	assert_int_equal(unetd_subid_find(&s, 110)->owner, 2000);
	assert_int_equal(unetd_subid_find(&s, 114)->owner, 2000);
	assert_null(unetd_subid_find(&s, 115));
	assert_null(unetd_subid_find(&s, 0)); /* root is root */
	assert_int_equal(unetd_subid_find(&s, 1)->owner, 3000);
	assert_int_equal(unetd_acct_of(&s, 105), 1000);
	assert_int_equal(unetd_acct_of(&s, 1000), 1000);
	assert_int_equal(unetd_acct_of(&s, 115), 115);
	assert_int_equal(unetd_acct_of(&s, 0), 0);
	/* Root's range: not 0 (no exemptions), not any uid, one per range. */
	assert_int_equal(unetd_acct_of(&s, 60005), UNETD_ACCT_ROOT_RANGE | 60000);
	assert_int_equal(unetd_acct_of(&s, 60199), UNETD_ACCT_ROOT_RANGE | 60000);
	assert_int_equal(unetd_acct_of(&s, 60200), 60200);
	/* A container's slice of 65536 uids is one identity; the next
	 * container's another. */
	assert_int_equal(unetd_acct_of(&s, 1000000), UNETD_ACCT_ROOT_RANGE | 1000000);
	assert_int_equal(unetd_acct_of(&s, 1065535), UNETD_ACCT_ROOT_RANGE | 1000000);
	assert_int_equal(unetd_acct_of(&s, 1065536), UNETD_ACCT_ROOT_RANGE | 1065536);
	assert_int_equal(unetd_acct_of(&s, 1199999), UNETD_ACCT_ROOT_RANGE | 1196608);
	assert_null(unetd_subid_find(&s, 1200000));

	char name[64];

	unetd_acct_name(1000, name, sizeof(name));
	assert_string_equal(name, "uid 1000");
	unetd_acct_name(unetd_acct_of(&s, 60005), name, sizeof(name));
	assert_string_equal(name, "root's subordinate uids from 60000");
	unetd_subid_free(&s);
	/* No ranges: every uid its own. */
	assert_int_equal(unetd_acct_of(&s, 105), 105);
}

static void test_max_ranges(void **state)
{
	size_t cap = (UNETD_SUBID_MAX + 100) * 24, len = 0;
	char *text = malloc(cap);
	struct unetd_subids s;
	struct warns w = { 0 };

	(void)state;
	assert_non_null(text);
	for (unsigned int i = 0; i < UNETD_SUBID_MAX + 100; i++)
		len += (size_t)snprintf(text + len, cap - len, "%u:%u:1\n", 5000 + i, 100000 + i);
	assert_int_equal(unetd_subid_parse(text, len, &s, name_uid, warn, &w), 1);
	assert_int_equal(s.n, UNETD_SUBID_MAX);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.why[0], "too many ranges (the rest are not read)");
	assert_int_equal(w.line[0], UNETD_SUBID_MAX + 1);
	assert_int_equal(unetd_subid_find(&s, 100000 + UNETD_SUBID_MAX - 1)->owner,
			 5000 + UNETD_SUBID_MAX - 1);
	assert_null(unetd_subid_find(&s, 100000 + UNETD_SUBID_MAX));
	unetd_subid_free(&s);
	free(text);
}

static void test_load(void **state)
{
	char dir[] = "/tmp/test_subid.XXXXXX", path[64];
	struct unetd_subids s;
	FILE *f;

	(void)state;
	assert_int_equal(unetd_subid_load("none", &s), 0);
	assert_int_equal(s.n, 0);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/subuid", dir);
	assert_int_equal(unetd_subid_load(path, &s), 0); /* missing: none */
	assert_int_equal(s.n, 0);
	assert_int_equal(unetd_subid_load(dir, &s), -1); /* a directory */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "1000:100000:65536\n");
	for (int i = 0; i < 15; i++)
		fprintf(f, "bad line %d\n", i);
	fprintf(f, "root:60000:200\n");
	fclose(f);
	log_warnings = 0;
	assert_int_equal(unetd_subid_load(path, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.r[1].owner, 0); /* root through the passwd database */
	/* 10 lines said, then one for the rest. */
	assert_int_equal(log_warnings, 11);
	unetd_subid_free(&s);
	/* Larger than it reads: refused, not cut. */
	assert_int_equal(truncate(path, UNETD_SUBID_FILE_MAX + 1), 0);
	assert_int_equal(unetd_subid_load(path, &s), -1);
	assert_int_equal(s.n, 0);
	unlink(path);
	rmdir(dir);
}

/* ---- The fuzz: the parser against a model -------------------------------- */

/* A decimal field as the format takes it: 1 to 10 digits, <= UINT32_MAX. */
static bool model_num(const char *s, size_t n, uint64_t *v)
{
	char buf[16];
	char *end;

	if (n < 1 || n > 10 || strspn(s, "0123456789") < n)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*v = strtoull(buf, &end, 10);
	return *v <= UINT32_MAX;
}

/* One line (no newline, n > 0, not a comment): a range, or false. */
static bool model_line(const char *s, size_t n, struct unetd_subid *r)
{
	const char *f[3];
	size_t fl[3];
	unsigned int k = 0;
	size_t at = 0;
	uint64_t start, count, owner;

	if (n > UNETD_SUBID_LINE_MAX)
		return false;
	for (size_t i = 0; i <= n; i++)
		if (i == n || s[i] == ':') {
			if (k == 3)
				return false;
			f[k] = s + at;
			fl[k++] = i - at;
			at = i + 1;
		}
	if (k != 3 || !model_num(f[1], fl[1], &start) || !model_num(f[2], fl[2], &count) ||
	    count == 0 || start + count > UINT32_MAX)
		return false;
	if (model_num(f[0], fl[0], &owner)) {
		if (owner == UINT32_MAX)
			return false;
	} else {
		/* Only the stub's two names resolve. */
		if (fl[0] == 5 && !memcmp(f[0], "alice", 5))
			owner = 1000;
		else if (fl[0] == 4 && !memcmp(f[0], "root", 4))
			owner = 0;
		else
			return false;
	}
	r->owner = (uint32_t)owner;
	r->start = (uint32_t)start;
	r->count = (uint32_t)count;
	return true;
}

/* The fields lines are made of: names, uids and counts at and around
 * every bound, and what is none of them. */
static const char *const fields[] = {
	"alice", "root", "bob", "-alice", "a$", "bob$", "1000", "0", "1", "2", "65536", "00001",
	"4294967295", "4294967294", "4294967296", "4294967200", "12345678901", "", " 1", "+1",
	"1 ", "#", "1\r",
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static void test_fuzz(void **state)
{
	uint64_t seed = fuzz_seed(0x5b1d5eedull), rng = seed;
	uint64_t count = fuzz_count(100000);
	char text[512];

	(void)state;
	printf("fuzz seed 0x%" PRIx64 ", %" PRIu64 " inputs\n", seed, count);
	for (uint64_t it = 0; it < count; it++) {
		size_t len = 0;
		unsigned int nlines = 1 + (unsigned int)(fuzz_next(&rng) % 6);
		struct unetd_subids s;
		struct warns w = { 0 };
		unsigned int skipped, want_n = 0, want_skipped = 0;
		char *buf;

		/* Lines of three fields (sometimes two or four), then a
		 * few bytes changed anywhere. */
		for (unsigned int l = 0; l < nlines; l++) {
			unsigned int nf = 3;
			uint64_t r = fuzz_next(&rng);

			if (r % 8 == 0)
				nf = 2 + (unsigned int)((r >> 3) % 2) * 2;
			for (unsigned int f = 0; f < nf; f++) {
				const char *fl = fields[fuzz_next(&rng) % NFIELDS];

				if (f)
					text[len++] = ':';
				memcpy(text + len, fl, strlen(fl));
				len += strlen(fl);
			}
			if (l + 1 < nlines || r % 3)
				text[len++] = '\n';
		}
		for (uint64_t r = fuzz_next(&rng); r % 3 == 0 && len; r = fuzz_next(&rng)) {
			size_t at = (size_t)((r >> 2) % len);

			switch ((r >> 20) % 3) {
			case 0: /* replaced */
				text[at] = (char)(r >> 40);
				break;
			case 1: /* gone */
				memmove(text + at, text + at + 1, len - at - 1);
				len--;
				break;
			default: /* a digit, ':' or newline more */
				if (len < sizeof(text)) {
					memmove(text + at + 1, text + at, len - at);
					text[at] = "0123456789:\n"[(r >> 40) % 12];
					len++;
				}
			}
		}
		buf = malloc(len ? len : 1); /* exact: ASan sees a read past it */
		assert_non_null(buf);
		memcpy(buf, text, len);
		skipped = unetd_subid_parse(buf, len, &s, name_uid, warn, &w);
		/* The model, line by line. */
		for (size_t at = 0; at < len;) {
			const char *nl = memchr(text + at, '\n', len - at);
			size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
			struct unetd_subid r;

			if (n && text[at] != '#') {
				if (model_line(text + at, n, &r)) {
					if (want_n >= s.n || s.r[want_n].owner != r.owner ||
					    s.r[want_n].start != r.start || s.r[want_n].count != r.count)
						fail_msg("seed 0x%" PRIx64 " input %" PRIu64
							 ": range %u differs from the model (%.*s)",
							 seed, it, want_n, (int)n, text + at);
					want_n++;
				} else {
					want_skipped++;
				}
			}
			at += n + 1;
		}
		if (s.n != want_n || skipped != want_skipped || w.n != skipped)
			fail_msg("seed 0x%" PRIx64 " input %" PRIu64
				 ": %u ranges %u skipped (%u warnings), the model %u and %u",
				 seed, it, s.n, skipped, w.n, want_n, want_skipped);
		for (unsigned int i = 0; i < s.n; i++) {
			assert_true(s.r[i].count > 0);
			assert_true((uint64_t)s.r[i].start + s.r[i].count <= UINT32_MAX);
		}
		unetd_subid_free(&s);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_lines), cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_find_and_acct), cmocka_unit_test(test_max_ranges),
		cmocka_unit_test(test_load),	   cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
