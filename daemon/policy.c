// SPDX-License-Identifier: BSD-2-Clause
/*
 * policy.c - parse and query unetd's policy (docs/unetd-policy.md).
 *
 * One rule per line, fixed keywords, strict: the daemon runs as root and
 * acts on this file, so anything it does not understand exactly is
 * refused with its line and column rather than guessed at.  Names are
 * resolved to ids when the policy is parsed, so that lookups (one per
 * client request) never touch the user database, and a misspelt name is
 * an error at load time instead of a rule that silently matches no one.
 */
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEF_ENDPOINTS 8
#define DEF_SEGMENT (64ULL << 20)
#define DEF_SHARE 100
#define DEF_CHANNELS 256 /* channels per user: a member of a group cannot take
			  * every tag of an interface from the others */
#define MAX_SHARE 1000
#define MAX_TOKENS (UNETD_POLICY_MAX_LINE / 2 + 1)
#define QUOTE_MAX 40 /* bytes of a token quoted in an error message */

const char UNETD_POLICY_DEFAULT_TEXT[] =
	"# unetd's built-in policy (docs/unetd-policy.md)\n"
	"user root all endpoints unlimited segment unlimited\n"
	"group unet iface * kinds emulated tags 1024-65535 endpoints 8 segment 64M share 100\n"
	"default deny\n";

struct range {
	uint16_t lo, hi;
};

enum subject { SUBJ_USER, SUBJ_GROUP, SUBJ_DEFAULT };

struct rule {
	const struct unetd_policy *pol;
	unsigned int line;
	enum subject subj;
	bool id_known; /* false only for a built-in name the host lacks */
	uint32_t id;
	char name[UNETD_POLICY_MAX_NAME + 1]; /* as written (digits for an id) */
	char iface[UNETD_POLICY_MAX_PATTERN + 1];
	bool deny, emulated, direct;
	uint32_t max_endpoints;
	uint32_t max_channels;
	uint64_t max_segment;
	uint32_t share;
	unsigned int ntags, nudp;
	struct range tags[UNETD_POLICY_MAX_RANGES]; /* sorted, disjoint */
	struct range udp[UNETD_POLICY_MAX_RANGES];
	struct { uint32_t net, mask; } addrs[UNETD_POLICY_MAX_ADDRS]; /* host order */
	unsigned int naddrs;
};

struct unetd_policy {
	char origin[24];
	unsigned int nrules, cap;
	struct rule *rules;
};

struct tok {
	const char *s;
	size_t len;
	unsigned int col; /* 1-based */
};

struct pctx {
	struct unetd_policy_opts o; /* with the defaults filled in */
	bool soft_names;	    /* the built-in: a missing name matches no one */
	char *err;
	size_t errlen;
	unsigned int line;
};

/* ---- errors --------------------------------------------------------- */

static void put_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void put_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* "LINE:COL: what"; returns -EINVAL, the one error of a bad text. */
static int perr(struct pctx *c, unsigned int col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int perr(struct pctx *c, unsigned int col, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->err || !c->errlen)
		return -EINVAL;
	n = snprintf(c->err, c->errlen, "%u:%u: ", c->line, col);
	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A token for an error message: printable (the tokenizer saw to that), cut short. */
#define QFMT "'%.*s%s'"
#define QARG(p, n) (int)((n) > QUOTE_MAX ? QUOTE_MAX : (n)), (p), ((n) > QUOTE_MAX ? "..." : "")

static bool tok_is(const struct tok *t, const char *word)
{
	size_t n = strlen(word);

	return t->len == n && memcmp(t->s, word, n) == 0;
}

/* ---- numbers -------------------------------------------------------- */

/*
 * Decimal digits only: no sign, no hex, no leading zero (010 is not
 * silently ten or eight).  Returns 0, -EINVAL (not a number) or -ERANGE.
 */
static int parse_u64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	if (len > 1 && s[0] == '0')
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

static bool all_digits(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return len > 0;
}

/* ---- name resolution ------------------------------------------------ */

/* getpwnam_r/getgrnam_r want a buffer of a size they may find too small. */
static int nss_lookup(bool group, const char *name, uint32_t *id)
{
	long hint = sysconf(group ? _SC_GETGR_R_SIZE_MAX : _SC_GETPW_R_SIZE_MAX);
	size_t size = hint > 0 ? (size_t)hint : 16384;
	int rc;

	for (;;) {
		char *buf = malloc(size);
		bool found = false;

		if (!buf)
			return -ENOMEM;
		if (group) {
			struct group gr, *res = NULL;

			rc = getgrnam_r(name, &gr, buf, size, &res);
			if (!rc && res) {
				*id = (uint32_t)gr.gr_gid;
				found = true;
			}
		} else {
			struct passwd pw, *res = NULL;

			rc = getpwnam_r(name, &pw, buf, size, &res);
			if (!rc && res) {
				*id = (uint32_t)pw.pw_uid;
				found = true;
			}
		}
		free(buf);
		if (rc == ERANGE && size < (1u << 20)) {
			size *= 2;
			continue;
		}
		if (found)
			return 0;
		/* Not found is 0 with no result; some NSS modules say ENOENT or ESRCH. */
		if (!rc || rc == ENOENT || rc == ESRCH)
			return -ENOENT;
		return -rc;
	}
}

int unetd_nss_user_id(const char *name, uint32_t *uid)
{
	return nss_lookup(false, name, uid);
}

static int nss_user(void *ctx, const char *name, uint32_t *uid)
{
	(void)ctx;
	return nss_lookup(false, name, uid);
}

static int nss_group(void *ctx, const char *name, uint32_t *gid)
{
	(void)ctx;
	return nss_lookup(true, name, gid);
}

/* Portable user names (POSIX's portable filename characters), as useradd
 * accepts them, with Samba's trailing '$'. */
static bool valid_name(const char *s, size_t len)
{
	if (len == 0 || s[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '_' || ch == '.' || ch == '-')
			continue;
		if (ch == '$' && i == len - 1 && i > 0)
			continue;
		return false;
	}
	return true;
}

static int parse_subject(struct pctx *c, struct rule *r, const struct tok *t)
{
	const char *what = r->subj == SUBJ_USER ? "user" : "group";
	uint64_t v;
	int rc;

	if (t->len > UNETD_POLICY_MAX_NAME)
		return perr(c, t->col, "%s name too long (limit %d): " QFMT, what,
			    UNETD_POLICY_MAX_NAME, QARG(t->s, t->len));
	memcpy(r->name, t->s, t->len);
	r->name[t->len] = '\0';
	if (all_digits(t->s, t->len)) {
		rc = parse_u64(t->s, t->len, &v);
		if (rc == -EINVAL)
			return perr(c, t->col, "leading zero in %s id " QFMT, what, QARG(t->s, t->len));
		/* (uid_t)-1 means "no id" to chown and setreuid: never a real one. */
		if (rc || v >= UINT32_MAX)
			return perr(c, t->col, "%s id " QFMT " out of range (0-%u)", what,
				    QARG(t->s, t->len), UINT32_MAX - 1);
		r->id = (uint32_t)v;
		r->id_known = true;
		return 0;
	}
	if (!valid_name(t->s, t->len))
		return perr(c, t->col, "bad %s name " QFMT, what, QARG(t->s, t->len));
	rc = r->subj == SUBJ_USER ? c->o.user_id(c->o.ctx, r->name, &r->id)
				  : c->o.group_id(c->o.ctx, r->name, &r->id);
	if (rc == 0) {
		r->id_known = true;
		return 0;
	}
	if (rc == -ENOENT && c->soft_names)
		return 0; /* r->id_known stays false: the rule matches no one */
	if (rc == -ENOENT)
		return perr(c, t->col, "unknown %s " QFMT, what, QARG(t->s, t->len));
	if (rc > 0 || rc < -4095)
		rc = -EIO; /* a resolver that broke the contract */
	put_err(c->err, c->errlen, "%u:%u: looking up %s '%s': %s", c->line, t->col, what, r->name,
		strerror(-rc));
	return rc;
}

/* ---- values --------------------------------------------------------- */

static int parse_iface(struct pctx *c, struct rule *r, const struct tok *t)
{
	bool wild = false;

	if (t->len > UNETD_POLICY_MAX_PATTERN)
		return perr(c, t->col, "interface pattern too long (limit %d)",
			    UNETD_POLICY_MAX_PATTERN);
	for (size_t i = 0; i < t->len; i++) {
		if (t->s[i] == '/')
			return perr(c, t->col + (unsigned int)i,
				    "'/' in interface pattern: no interface name has one");
		if (t->s[i] == '*' || t->s[i] == '?' || t->s[i] == '[')
			wild = true;
	}
	/* A plain name that no interface can have is a typo, not a rule. */
	if (!wild && t->len >= IFNAMSIZ)
		return perr(c, t->col, "interface name " QFMT " longer than %d characters",
			    QARG(t->s, t->len), IFNAMSIZ - 1);
	memcpy(r->iface, t->s, t->len);
	r->iface[t->len] = '\0';
	return 0;
}

/* Calls item(c, r, arg, start, len, col) for each comma-separated item. */
typedef int (*item_fn)(struct pctx *c, struct rule *r, void *arg, const char *s, size_t len,
		       unsigned int col);

static int each_item(struct pctx *c, struct rule *r, const struct tok *t, item_fn fn, void *arg)
{
	size_t i = 0;

	for (;;) {
		const char *comma = memchr(t->s + i, ',', t->len - i);
		size_t end = comma ? (size_t)(comma - t->s) : t->len;
		int rc;

		if (end == i)
			return perr(c, t->col + (unsigned int)i, "empty item in list " QFMT,
				    QARG(t->s, t->len));
		rc = fn(c, r, arg, t->s + i, end - i, t->col + (unsigned int)i);
		if (rc)
			return rc;
		if (!comma)
			return 0;
		i = end + 1;
		if (i == t->len)
			return perr(c, t->col + (unsigned int)i, "empty item in list " QFMT,
				    QARG(t->s, t->len));
	}
}

static int kind_item(struct pctx *c, struct rule *r, void *arg, const char *s, size_t len,
		     unsigned int col)
{
	struct tok t = { s, len, col };
	bool *which;

	(void)arg;
	if (tok_is(&t, "emulated"))
		which = &r->emulated;
	else if (tok_is(&t, "direct"))
		which = &r->direct;
	else
		return perr(c, col, "unknown kind " QFMT " (expected emulated or direct)",
			    QARG(s, len));
	if (*which)
		return perr(c, col, "kind " QFMT " given twice", QARG(s, len));
	*which = true;
	return 0;
}

/* One IPv4 address or prefix of an `addrs` list: a.b.c.d or a.b.c.d/n. */
static int addr_item(struct pctx *c, struct rule *r, void *arg, const char *s, size_t len,
		     unsigned int col)
{
	unsigned int b[4], bits = 32;
	char text[32], tail;
	int n;

	(void)arg;
	if (len >= sizeof(text))
		return perr(c, col, "bad address " QFMT " (expected a.b.c.d or a.b.c.d/n)", QARG(s, len));
	memcpy(text, s, len);
	text[len] = '\0';
	n = sscanf(text, "%3u.%3u.%3u.%3u/%2u%c", &b[0], &b[1], &b[2], &b[3], &bits, &tail);
	if ((n != 4 && n != 5) || (n == 4 && strchr(text, '/')) || b[0] > 255 || b[1] > 255 ||
	    b[2] > 255 || b[3] > 255 || bits < 1 || bits > 32 || strspn(text, "0123456789./") != len)
		return perr(c, col, "bad address " QFMT " (expected a.b.c.d or a.b.c.d/n)", QARG(s, len));
	if (r->naddrs == UNETD_POLICY_MAX_ADDRS)
		return perr(c, col, "too many addresses (limit %d)", UNETD_POLICY_MAX_ADDRS);
	r->addrs[r->naddrs].mask = bits == 32 ? UINT32_MAX : ~(UINT32_MAX >> bits);
	r->addrs[r->naddrs].net = (b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]) & r->addrs[r->naddrs].mask;
	r->naddrs++;
	return 0;
}

struct range_list {
	const char *what; /* "tag" or "UDP port" */
	struct range *v;
	unsigned int *n;
};

static int range_item(struct pctx *c, struct rule *r, void *arg, const char *s, size_t len,
		      unsigned int col)
{
	struct range_list *l = arg;
	const char *dash = memchr(s, '-', len);
	uint64_t lo, hi;
	size_t llen = dash ? (size_t)(dash - s) : len;
	int rc;

	(void)r;
	if (*l->n == UNETD_POLICY_MAX_RANGES)
		return perr(c, col, "too many ranges (limit %d)", UNETD_POLICY_MAX_RANGES);
	if (dash && llen == 0)
		return perr(c, col, "range " QFMT " has no start", QARG(s, len));
	if (dash && llen + 1 == len)
		return perr(c, col, "range " QFMT " has no end", QARG(s, len));
	rc = parse_u64(s, llen, &lo);
	if (rc == -EINVAL)
		return perr(c, col, "bad %s " QFMT " (decimal, no leading zero)", l->what,
			    QARG(s, llen));
	if (rc || lo > UINT16_MAX)
		return perr(c, col, "%s " QFMT " out of range (1-65535)", l->what, QARG(s, llen));
	hi = lo;
	if (dash) {
		const char *h = dash + 1;
		size_t hlen = len - llen - 1;
		unsigned int hcol = col + (unsigned int)llen + 1;

		rc = parse_u64(h, hlen, &hi);
		if (rc == -EINVAL)
			return perr(c, hcol, "bad %s " QFMT " (decimal, no leading zero)", l->what,
				    QARG(h, hlen));
		if (rc || hi > UINT16_MAX)
			return perr(c, hcol, "%s " QFMT " out of range (1-65535)", l->what,
				    QARG(h, hlen));
	}
	/* Tag 0 never names a channel (UNET_TAG_INVALID); port 0 is no port. */
	if (lo == 0)
		return perr(c, col, "%s 0 is reserved (use 1-65535)", l->what);
	if (hi < lo)
		return perr(c, col, "range " QFMT " reversed", QARG(s, len));
	/* Overlaps are refused, not merged: "1000-1999,1500" is a slip of the pen. */
	for (unsigned int i = 0; i < *l->n; i++)
		if (lo <= l->v[i].hi && l->v[i].lo <= hi)
			return perr(c, col, "%s range " QFMT " overlaps %u-%u", l->what, QARG(s, len),
				    l->v[i].lo, l->v[i].hi);
	l->v[*l->n].lo = (uint16_t)lo;
	l->v[*l->n].hi = (uint16_t)hi;
	(*l->n)++;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return (int)x->lo - (int)y->lo;
}

static int parse_ranges(struct pctx *c, struct rule *r, const struct tok *t, const char *what,
			struct range *v, unsigned int *n)
{
	struct range_list l = { what, v, n };
	int rc;

	if (tok_is(t, "any")) {
		v[0].lo = 1;
		v[0].hi = UINT16_MAX;
		*n = 1;
		return 0;
	}
	if (tok_is(t, "none"))
		return 0;
	rc = each_item(c, r, t, range_item, &l);
	if (rc)
		return rc;
	/* Sorted and disjoint, so unetd_grant_tag can search them. */
	qsort(v, *n, sizeof(*v), cmp_range);
	return 0;
}

static int parse_count(struct pctx *c, const struct tok *t, const char *what, uint64_t max,
		       bool unlimited_ok, uint64_t *v)
{
	int rc;

	if (unlimited_ok && tok_is(t, "unlimited")) {
		*v = UINT64_MAX;
		return 0;
	}
	rc = parse_u64(t->s, t->len, v);
	if (rc == -EINVAL)
		return perr(c, t->col, "bad %s " QFMT " (a decimal number%s)", what,
			    QARG(t->s, t->len), unlimited_ok ? " or unlimited" : "");
	if (rc || *v > max || *v == 0)
		return perr(c, t->col, "%s " QFMT " out of range (1-%llu%s)", what, QARG(t->s, t->len),
			    (unsigned long long)max, unlimited_ok ? " or unlimited" : "");
	return 0;
}

/* N, NK, NM or NG: bytes, binary multiples.  Uppercase only: one spelling. */
static int parse_size(struct pctx *c, const struct tok *t, uint64_t *v)
{
	size_t n = t->len;
	unsigned int shift = 0;
	uint64_t x;
	int rc;

	if (tok_is(t, "unlimited")) {
		*v = UNETD_POLICY_UNLIMITED64;
		return 0;
	}
	if (n > 0) {
		switch (t->s[n - 1]) {
		case 'K': shift = 10; n--; break;
		case 'M': shift = 20; n--; break;
		case 'G': shift = 30; n--; break;
		default:
			if (t->s[n - 1] < '0' || t->s[n - 1] > '9')
				return perr(c, t->col + (unsigned int)n - 1,
					    "unknown size suffix '%c' (use K, M or G)", t->s[n - 1]);
		}
	}
	rc = parse_u64(t->s, n, &x);
	if (rc == -EINVAL)
		return perr(c, t->col, "bad size " QFMT " (a decimal number, then K, M or G)",
			    QARG(t->s, t->len));
	/* UINT64_MAX itself spells "unlimited". */
	if (rc || x > (UINT64_MAX >> shift) || (x << shift) == UNETD_POLICY_UNLIMITED64)
		return perr(c, t->col, "size " QFMT " overflows", QARG(t->s, t->len));
	if (x == 0)
		return perr(c, t->col, "segment must be at least 1 byte (write 'deny' to grant nothing)");
	*v = x << shift;
	return 0;
}

/* ---- rules ---------------------------------------------------------- */

enum key { K_IFACE, K_KINDS, K_TAGS, K_UDP, K_ADDRS, K_ENDPOINTS, K_CHANNELS, K_SEGMENT, K_SHARE,
	   K_DENY, K_ALL, K__COUNT };

static const struct {
	const char *word;
	bool has_value;
} keys[K__COUNT] = {
	[K_IFACE] = { "iface", true },	       [K_KINDS] = { "kinds", true },
	[K_TAGS] = { "tags", true },	       [K_UDP] = { "udp", true },
	[K_ENDPOINTS] = { "endpoints", true }, [K_SEGMENT] = { "segment", true },
	[K_SHARE] = { "share", true },	       [K_DENY] = { "deny", false },
	[K_ALL] = { "all", false },	       [K_CHANNELS] = { "channels", true },
	[K_ADDRS] = { "addrs", true },
};

static int find_key(const struct tok *t)
{
	for (int k = 0; k < K__COUNT; k++)
		if (tok_is(t, keys[k].word))
			return k;
	return -1;
}

static bool same_subject(const struct rule *a, const struct rule *b)
{
	if (a->subj != b->subj)
		return false;
	if (a->subj == SUBJ_DEFAULT)
		return true;
	if (a->id_known != b->id_known)
		return false;
	return a->id_known ? a->id == b->id : strcmp(a->name, b->name) == 0;
}

static int add_rule(struct pctx *c, struct unetd_policy *p, const struct rule *r)
{
	/* First match wins within a class, so a later rule for the same
	 * subject whose interfaces an earlier rule already covers is dead
	 * text: refuse it rather than let the reader believe it does
	 * something.  Caught: the same pattern, an earlier "*", and a plain
	 * name that an earlier pattern matches (pattern against pattern in
	 * general is beyond fnmatch). */
	bool plain = strpbrk(r->iface, "*?[") == NULL;

	for (unsigned int i = 0; i < p->nrules; i++) {
		const struct rule *q = &p->rules[i];

		if (!same_subject(q, r))
			continue;
		if (strcmp(q->iface, r->iface) == 0)
			return perr(c, 1, "rule never matches: line %u has the same subject and interface pattern",
				    q->line);
		if (strcmp(q->iface, "*") == 0)
			return perr(c, 1, "rule never matches: line %u has the same subject on every interface",
				    q->line);
		if (plain && fnmatch(q->iface, r->iface, 0) == 0)
			return perr(c, 1, "rule never matches: line %u has the same subject on '%s' (pattern '%s')",
				    q->line, r->iface, q->iface);
	}
	if (p->nrules == UNETD_POLICY_MAX_RULES)
		return perr(c, 1, "too many rules (limit %d)", UNETD_POLICY_MAX_RULES);
	if (p->nrules == p->cap) {
		unsigned int cap = p->cap ? p->cap * 2 : 16;
		struct rule *v = realloc(p->rules, (size_t)cap * sizeof(*v));

		if (!v) {
			put_err(c->err, c->errlen, "line %u: out of memory", c->line);
			return -ENOMEM;
		}
		p->rules = v;
		p->cap = cap;
	}
	p->rules[p->nrules] = *r;
	p->rules[p->nrules].pol = p;
	p->nrules++;
	return 0;
}

static int parse_rule(struct pctx *c, struct unetd_policy *p, const struct tok *t, unsigned int n)
{
	unsigned int seen[K__COUNT] = { 0 }; /* column of each key, 0 if absent */
	struct rule r;
	unsigned int i = 1;
	uint64_t v = 0;
	int rc;

	memset(&r, 0, sizeof(r));
	r.line = c->line;
	strcpy(r.iface, "*");
	r.max_endpoints = DEF_ENDPOINTS;
	r.max_channels = DEF_CHANNELS;
	r.max_segment = DEF_SEGMENT;
	r.share = DEF_SHARE;

	if (tok_is(&t[0], "user")) {
		r.subj = SUBJ_USER;
	} else if (tok_is(&t[0], "group")) {
		r.subj = SUBJ_GROUP;
	} else if (tok_is(&t[0], "default")) {
		r.subj = SUBJ_DEFAULT;
	} else {
		return perr(c, t[0].col, "unknown keyword " QFMT " (a rule starts with user, group or default)",
			    QARG(t[0].s, t[0].len));
	}
	if (r.subj != SUBJ_DEFAULT) {
		if (n < 2 || find_key(&t[1]) >= 0)
			return perr(c, t[0].col + (unsigned int)t[0].len, "missing %s name or id after '%s'",
				    r.subj == SUBJ_USER ? "user" : "group",
				    r.subj == SUBJ_USER ? "user" : "group");
		rc = parse_subject(c, &r, &t[1]);
		if (rc)
			return rc;
		i = 2;
	}

	for (; i < n; i++) {
		int k = find_key(&t[i]);
		const struct tok *val = NULL;

		if (k < 0) {
			if (tok_is(&t[i], "user") || tok_is(&t[i], "group") || tok_is(&t[i], "default"))
				return perr(c, t[i].col, "unexpected " QFMT ": one rule per line",
					    QARG(t[i].s, t[i].len));
			return perr(c, t[i].col,
				    "unknown keyword " QFMT " (expected iface, kinds, tags, udp, addrs, endpoints, channels, segment, share, deny or all)",
				    QARG(t[i].s, t[i].len));
		}
		if (seen[k])
			return perr(c, t[i].col, "duplicate '%s' (first at column %u)", keys[k].word,
				    seen[k]);
		seen[k] = t[i].col;
		if (keys[k].has_value) {
			/* "tags kinds emulated": the value is missing, not "kinds". */
			if (i + 1 >= n || find_key(&t[i + 1]) >= 0)
				return perr(c, t[i].col + (unsigned int)t[i].len,
					    "missing value after '%s'", keys[k].word);
			val = &t[++i];
		}
		switch (k) {
		case K_IFACE:
			rc = parse_iface(c, &r, val);
			break;
		case K_KINDS:
			rc = each_item(c, &r, val, kind_item, NULL);
			break;
		case K_TAGS:
			rc = parse_ranges(c, &r, val, "tag", r.tags, &r.ntags);
			break;
		case K_UDP:
			rc = parse_ranges(c, &r, val, "UDP port", r.udp, &r.nudp);
			break;
		case K_ENDPOINTS:
			rc = parse_count(c, val, "endpoints", UINT32_MAX - 1, true, &v);
			r.max_endpoints = v == UINT64_MAX ? UNETD_POLICY_UNLIMITED32 : (uint32_t)v;
			break;
		case K_ADDRS:
			rc = each_item(c, &r, val, addr_item, NULL);
			break;
		case K_CHANNELS:
			rc = parse_count(c, val, "channels", UINT32_MAX - 1, true, &v);
			r.max_channels = v == UINT64_MAX ? UNETD_POLICY_UNLIMITED32 : (uint32_t)v;
			break;
		case K_SEGMENT:
			rc = parse_size(c, val, &r.max_segment);
			break;
		case K_SHARE:
			rc = parse_count(c, val, "share", MAX_SHARE, false, &v);
			r.share = (uint32_t)v;
			break;
		case K_DENY:
			r.deny = true;
			rc = 0;
			break;
		case K_ALL:
			rc = 0; /* applied below, once no conflict is possible */
			break;
		default:
			rc = -EINVAL; /* not reached: find_key returns a key */
		}
		if (rc)
			return rc;
	}

	if (seen[K_DENY]) {
		for (int k = 0; k < K__COUNT; k++)
			if (k != K_DENY && k != K_IFACE && seen[k])
				return perr(c, seen[k], "'%s' in a deny rule, which grants nothing",
					    keys[k].word);
	} else if (seen[K_ALL]) {
		static const int conflict[] = { K_KINDS, K_TAGS, K_UDP, K_ADDRS };

		for (size_t j = 0; j < sizeof(conflict) / sizeof(conflict[0]); j++)
			if (seen[conflict[j]])
				return perr(c, seen[conflict[j]],
					    "'%s' with 'all', which grants every kind, tag and UDP port",
					    keys[conflict[j]].word);
		r.emulated = r.direct = true;
		r.tags[0] = (struct range){ 1, UINT16_MAX };
		r.udp[0] = (struct range){ 1, UINT16_MAX };
		r.ntags = r.nudp = 1;
		r.addrs[0].net = r.addrs[0].mask = 0; /* every address */
		r.naddrs = 1;
	} else if (!seen[K_KINDS]) {
		return perr(c, 1, "rule grants no kind of endpoint: add 'kinds emulated', 'kinds direct' or write 'deny'");
	}
	if (r.deny) {
		/* Nothing but the subject and pattern is kept of a deny rule. */
		r.max_endpoints = 0;
		r.max_channels = 0;
		r.max_segment = 0;
		r.share = 0;
	}
	return add_rule(c, p, &r);
}

/* Split one line (without its newline) into tokens and parse it. */
static int parse_line(struct pctx *c, struct unetd_policy *p, const char *s, size_t len)
{
	struct tok t[MAX_TOKENS]; /* 12 KiB: fine on a daemon thread's stack */
	unsigned int n = 0;
	size_t i = 0;

	while (i < len) {
		unsigned char ch = (unsigned char)s[i];
		size_t start;

		if (ch == ' ' || ch == '\t') {
			i++;
			continue;
		}
		if (ch == '#')
			break; /* a comment runs to the end of the line */
		start = i;
		while (i < len) {
			ch = (unsigned char)s[i];
			if (ch == ' ' || ch == '\t' || ch == '#')
				break;
			if (ch == '\r')
				return perr(c, (unsigned int)i + 1,
					    "carriage return (CRLF line endings?)");
			if (ch == 0)
				return perr(c, (unsigned int)i + 1, "NUL byte");
			if (ch < 0x20 || ch == 0x7f)
				return perr(c, (unsigned int)i + 1, "control character 0x%02x", ch);
			if (ch > 0x7f)
				return perr(c, (unsigned int)i + 1,
					    "non-ASCII byte 0x%02x (allowed only in comments)", ch);
			i++;
		}
		/* At most MAX_TOKENS fit in a line of UNETD_POLICY_MAX_LINE bytes. */
		t[n].s = s + start;
		t[n].len = i - start;
		t[n].col = (unsigned int)start + 1;
		n++;
	}
	/* Comments may hold any text but NUL, which would end the file for a C reader. */
	if (i < len && memchr(s + i, '\0', len - i))
		return perr(c, (unsigned int)((const char *)memchr(s + i, '\0', len - i) - s) + 1,
			    "NUL byte");
	if (n == 0)
		return 0;
	return parse_rule(c, p, t, n);
}

static int opts_get(const struct unetd_policy_opts *in, struct unetd_policy_opts *o)
{
	memset(o, 0, sizeof(*o));
	if (in) {
		size_t sz = in->sz;

		if (sz < sizeof(size_t))
			return -EINVAL;
		/* A newer caller's fields this code does not know must be zero. */
		for (size_t i = sizeof(*o); i < sz; i++)
			if (((const unsigned char *)in)[i])
				return -EINVAL;
		memcpy(o, in, sz < sizeof(*o) ? sz : sizeof(*o));
	}
	o->sz = sizeof(*o);
	if (!o->user_id)
		o->user_id = nss_user;
	if (!o->group_id)
		o->group_id = nss_group;
	return 0;
}

static int parse_text(const char *text, size_t len, const struct unetd_policy_opts *opts,
		      bool soft_names, struct unetd_policy **out, char *err, size_t errlen)
{
	struct pctx c = { .soft_names = soft_names, .err = err, .errlen = errlen };
	struct unetd_policy *p;
	size_t pos = 0;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!out || (!text && len)) {
		put_err(err, errlen, "invalid arguments");
		return -EINVAL;
	}
	*out = NULL;
	rc = opts_get(opts, &c.o);
	if (rc) {
		put_err(err, errlen, "invalid options");
		return rc;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		put_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(p->origin, sizeof(p->origin), "%s", c.o.origin ? c.o.origin : "policy");
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (c.line == UINT_MAX) {
			rc = perr(&c, 1, "too many lines");
			goto fail;
		}
		c.line++;
		if (end - pos > UNETD_POLICY_MAX_LINE) {
			rc = perr(&c, UNETD_POLICY_MAX_LINE + 1, "line too long (limit %d bytes)",
				  UNETD_POLICY_MAX_LINE);
			goto fail;
		}
		rc = parse_line(&c, p, text + pos, end - pos);
		if (rc)
			goto fail;
		pos = nl ? end + 1 : len;
	}
	*out = p;
	return 0;
fail:
	unetd_policy_free(p);
	return rc;
}

/* ---- public --------------------------------------------------------- */

int unetd_policy_parse_opts(const char *text, size_t len, const struct unetd_policy_opts *opts,
			    struct unetd_policy **out, char *err, size_t errlen)
{
	return parse_text(text, len, opts, false, out, err, errlen);
}

int unetd_policy_parse(const char *text, size_t len, struct unetd_policy **out, char *err,
		       size_t errlen)
{
	return parse_text(text, len, NULL, false, out, err, errlen);
}

int unetd_policy_default_opts(const struct unetd_policy_opts *opts, struct unetd_policy **out)
{
	struct unetd_policy_opts o;
	int rc;

	rc = opts_get(opts, &o);
	if (rc)
		return rc;
	if (!o.origin)
		o.origin = "built-in";
	/* The text is ours and valid: only ENOMEM (or a failing user
	 * database) can stop it, and a missing group "unet" only makes its
	 * rule match no one. */
	rc = parse_text(UNETD_POLICY_DEFAULT_TEXT, sizeof(UNETD_POLICY_DEFAULT_TEXT) - 1, &o, true,
			out, NULL, 0);
	return rc == -EINVAL ? -EIO : rc;
}

int unetd_policy_default(struct unetd_policy **out)
{
	return unetd_policy_default_opts(NULL, out);
}

void unetd_policy_free(struct unetd_policy *p)
{
	if (!p)
		return;
	free(p->rules);
	free(p);
}

unsigned int unetd_policy_rule_count(const struct unetd_policy *p)
{
	return p ? p->nrules : 0;
}

/* Why a path is refused, or 0: owned by root, and not writable by others. */
static int check_owner(const char *what, const char *path, const struct stat *st, bool dir,
		       char *err, size_t errlen)
{
	if (st->st_uid != 0) {
		put_err(err, errlen, "%s: %s owned by uid %u, not root", path, what,
			(unsigned int)st->st_uid);
		return -EPERM;
	}
	/* A sticky root directory is safe: others may not replace root's file in it. */
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(dir && (st->st_mode & S_ISVTX))) {
		put_err(err, errlen, "%s: %s writable by %s (mode %04o)", path, what,
			(st->st_mode & S_IWOTH) ? "others" : "group",
			(unsigned int)(st->st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int unetd_policy_load(const char *path, struct unetd_policy **out, char *err, size_t errlen)
{
	char dir[PATH_MAX], perr_buf[256];
	const char *base;
	struct unetd_policy_opts o = { .sz = sizeof(o), .origin = "policy" };
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int dfd = -1, fd = -1, rc;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !out || !*path) {
		put_err(err, errlen, "invalid arguments");
		return -EINVAL;
	}
	*out = NULL;
	if (strlen(path) >= sizeof(dir)) {
		put_err(err, errlen, "%.64s...: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(dir, path);
	base = strrchr(dir, '/');
	if (!base) {
		base = path;
		strcpy(dir, ".");
	} else {
		base = path + (base - dir) + 1;
		if (base == path + 1)
			dir[1] = '\0'; /* "/name": the root directory */
		else
			dir[base - path - 1] = '\0';
	}
	if (!*base) {
		put_err(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}

	/* Whoever may write the directory may swap the file for another. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st)) {
		rc = -errno;
		put_err(err, errlen, "%s: directory %s: %s", path, dir, strerror(-rc));
		goto out;
	}
	rc = check_owner("directory", path, &st, true, err, errlen);
	if (rc)
		goto out;
	/* O_NONBLOCK: a FIFO planted here must not hang the daemon in open(). */
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ELOOP)
			put_err(err, errlen, "%s: a symbolic link (name the file itself)", path);
		else
			put_err(err, errlen, "%s: %s", path, strerror(-rc));
		goto out;
	}
	/* Checked on the open file: what is read is what was checked. */
	if (fstat(fd, &st)) {
		rc = -errno;
		put_err(err, errlen, "%s: %s", path, strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		put_err(err, errlen, "%s: not a regular file", path);
		rc = -EINVAL;
		goto out;
	}
	rc = check_owner("file", path, &st, false, err, errlen);
	if (rc)
		goto out;
	if (st.st_size > UNETD_POLICY_MAX_FILE) {
		put_err(err, errlen, "%s: larger than %d bytes", path, UNETD_POLICY_MAX_FILE);
		rc = -EFBIG;
		goto out;
	}
	/* Read to EOF, not st_size: the file may change between fstat and read. */
	buf = malloc(UNETD_POLICY_MAX_FILE + 1);
	if (!buf) {
		put_err(err, errlen, "%s: out of memory", path);
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, UNETD_POLICY_MAX_FILE + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			put_err(err, errlen, "%s: %s", path, strerror(-rc));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > UNETD_POLICY_MAX_FILE) {
			put_err(err, errlen, "%s: larger than %d bytes", path, UNETD_POLICY_MAX_FILE);
			rc = -EFBIG;
			goto out;
		}
	}
	rc = parse_text(buf, len, &o, false, out, perr_buf, sizeof(perr_buf));
	if (rc)
		put_err(err, errlen, "%s:%s", path, perr_buf);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

static void describe(const struct rule *r, char *buf, size_t len)
{
	const char *subj = r->subj == SUBJ_USER ? "user " : r->subj == SUBJ_GROUP ? "group " : "default";
	bool star = strcmp(r->iface, "*") == 0;

	char full[192]; /* fits the longest origin, name and pattern */
	size_t n;

	snprintf(full, sizeof(full), "%s:%u %s%s%s%s%s", r->pol->origin, r->line, subj, r->name,
		 r->id_known || r->subj == SUBJ_DEFAULT ? "" : " (unknown)", star ? "" : " iface ",
		 star ? "" : r->iface);
	/* A long name or pattern is cut short: the line number still finds the rule. */
	n = strnlen(full, len - 1);
	memcpy(buf, full, n);
	buf[n] = '\0';
}

static bool has_gid(const uint32_t *gids, unsigned int n, uint32_t gid)
{
	for (unsigned int i = 0; i < n; i++)
		if (gids[i] == gid)
			return true;
	return false;
}

int unetd_policy_lookup(const struct unetd_policy *p, uint32_t uid, const uint32_t *gids,
			unsigned int ngids, const char *ifname, struct unetd_grant *out)
{
	const struct rule *user = NULL, *group = NULL, *def = NULL, *r;

	if (!p || !ifname || !out || (!gids && ngids))
		return -EINVAL;
	if (!*ifname || strnlen(ifname, IFNAMSIZ) >= IFNAMSIZ)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < p->nrules && !user; i++) {
		r = &p->rules[i];
		if (r->subj == SUBJ_USER ? (!r->id_known || r->id != uid)
		    : r->subj == SUBJ_GROUP ? (group || !r->id_known || !has_gid(gids, ngids, r->id))
					    : def != NULL)
			continue;
		if (fnmatch(r->iface, ifname, 0) != 0)
			continue;
		if (r->subj == SUBJ_USER)
			user = r; /* the most specific class: stop here */
		else if (r->subj == SUBJ_GROUP)
			group = r;
		else
			def = r;
	}
	r = user ? user : group ? group : def;
	if (!r) {
		snprintf(out->rule, sizeof(out->rule), "%s: no rule matches", p->origin);
		return 0;
	}
	describe(r, out->rule, sizeof(out->rule));
	out->priv = r;
	if (r->deny)
		return 0;
	out->allowed = r->emulated || r->direct;
	out->emulated = r->emulated;
	out->direct = r->direct;
	out->max_endpoints = r->max_endpoints;
	out->max_channels = r->max_channels;
	out->max_segment_bytes = r->max_segment;
	out->share = r->share;
	return 0;
}

static bool in_ranges(const struct range *v, unsigned int n, uint16_t x)
{
	unsigned int lo = 0, hi = n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (x < v[mid].lo)
			hi = mid;
		else if (x > v[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

bool unetd_grant_tag(const struct unetd_grant *g, uint16_t tag)
{
	const struct rule *r = g ? g->priv : NULL;

	return r && g->allowed && tag != 0 && in_ranges(r->tags, r->ntags, tag);
}

bool unetd_grant_addr(const struct unetd_grant *g, uint32_t addr)
{
	const struct rule *r = g ? g->priv : NULL;

	if (!r || !g->allowed || !addr)
		return false;
	for (unsigned int i = 0; i < r->naddrs; i++)
		if ((addr & r->addrs[i].mask) == r->addrs[i].net)
			return true;
	return false;
}

bool unetd_grant_udp_port(const struct unetd_grant *g, uint16_t port)
{
	const struct rule *r = g ? g->priv : NULL;

	return r && g->allowed && port != 0 && in_ranges(r->udp, r->nudp, port);
}

bool unetd_grant_any_port(const struct unetd_grant *g)
{
	const struct rule *r = g ? g->priv : NULL;

	return r && g->allowed && r->nudp > 0;
}

/* The ranges v[0..n) as "a-b,c" in buf (adjacent ones joined), "none"
 * for none, cut with "..." when they do not fit.  As many steps as there
 * are ranges: a request's cost does not grow with the numbers. */
static void format_ranges(const struct range *v, unsigned int n, char *buf, size_t size)
{
	size_t off = 0;

	if (!size)
		return;
	buf[0] = '\0';
	for (unsigned int i = 0; i < n; i++) {
		unsigned int lo = v[i].lo, hi = v[i].hi;
		char item[16];
		int len;

		if (!lo && !hi)
			continue;
		while (i + 1 < n && v[i + 1].lo <= hi + 1u) {
			if (v[i + 1].hi > hi)
				hi = v[i + 1].hi;
			i++;
		}
		if (lo == 0)
			lo = 1; /* 0 is never granted */
		len = lo == hi ? snprintf(item, sizeof(item), "%s%u", off ? "," : "", lo)
			       : snprintf(item, sizeof(item), "%s%u-%u", off ? "," : "", lo, hi);
		if (off + (size_t)len + 4 > size) { /* room for "..." and the NUL */
			snprintf(buf + off, size - off, "...");
			return;
		}
		memcpy(buf + off, item, (size_t)len + 1);
		off += (size_t)len;
	}
	if (!off)
		snprintf(buf, size, "none");
}

void unetd_grant_format_tags(const struct unetd_grant *g, char *buf, size_t size)
{
	const struct rule *r = g ? g->priv : NULL;

	format_ranges(r ? r->tags : NULL, r && g->allowed ? r->ntags : 0, buf, size);
}

void unetd_grant_format_udp(const struct unetd_grant *g, char *buf, size_t size)
{
	const struct rule *r = g ? g->priv : NULL;

	format_ranges(r ? r->udp : NULL, r && g->allowed ? r->nudp : 0, buf, size);
}
