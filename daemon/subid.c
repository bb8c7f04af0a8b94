/* SPDX-License-Identifier: BSD-2-Clause */
/* subid.c - the subordinate uid ranges (/etc/subuid, unetd --subuid):
 * a user who owns a range can run processes with any uid of it
 * (newuidmap), so the daemon charges those uids' requests, CPU time, log
 * lines and connections to the range's owner (unetd.h, unetd_acct_of;
 * docs/unetd.md "Budgets"). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unetd.h"

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

/* A number of 1 to 10 digits, nothing else, at most UINT32_MAX. */
static bool parse_u32(const char *s, size_t n, uint32_t *v)
{
	uint64_t x = 0;

	if (n > 10 || !all_digits(s, n))
		return false;
	for (size_t i = 0; i < n; i++)
		x = x * 10 + (uint64_t)(s[i] - '0');
	if (x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

/* A user name as shadow's tools take it: [A-Za-z0-9._-], not starting
 * with '-', a '$' allowed last. */
static bool name_ok(const char *s, size_t n)
{
	if (n < 1 || n > UNETD_SUBID_NAME_MAX || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '-' || (c == '$' && i == n - 1))
			continue;
		return false;
	}
	return true;
}

/* One line (no newline): a range in *r, or the reason it is none. */
static const char *parse_line(const char *s, size_t n, unetd_subid_name_fn name_uid,
			      struct unetd_subid *r)
{
	const char *c1 = memchr(s, ':', n), *c2;
	char name[UNETD_SUBID_NAME_MAX + 1];
	size_t on;

	if (!c1)
		return "not owner:start:count";
	on = (size_t)(c1 - s);
	c2 = memchr(c1 + 1, ':', n - on - 1);
	if (!c2)
		return "not owner:start:count";
	if (!parse_u32(c1 + 1, (size_t)(c2 - c1 - 1), &r->start))
		return "start is not a number";
	if (!parse_u32(c2 + 1, n - (size_t)(c2 + 1 - s), &r->count))
		return "count is not a number (or a field too many)";
	if (r->count == 0)
		return "count 0";
	/* The last uid of the range below (uid_t)-1, which is no uid. */
	if ((uint64_t)r->start + r->count > UINT32_MAX)
		return "range past the last uid";
	if (all_digits(s, on)) { /* a uid */
		if (!parse_u32(s, on, &r->owner))
			return "owner is neither a uid nor a user name";
		if (r->owner == UINT32_MAX)
			return "owner (uid_t)-1";
		return NULL;
	}
	if (!name_ok(s, on))
		return "owner is neither a uid nor a user name";
	memcpy(name, s, on);
	name[on] = '\0';
	if (!name_uid || name_uid(name, &r->owner))
		return "no such user";
	return NULL;
}

unsigned int unetd_subid_parse(const char *text, size_t len, struct unetd_subids *s,
			       unetd_subid_name_fn name_uid, unetd_subid_warn_fn warn, void *ctx)
{
	unsigned int skipped = 0, lineno = 0;
	const char *p = text, *end = text + len;

	s->r = NULL;
	s->n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct unetd_subid r = { 0 };
		const char *why;

		lineno++;
		/* Empty lines and comments say nothing. */
		if (n == 0 || p[0] == '#')
			why = NULL;
		else if (n > UNETD_SUBID_LINE_MAX)
			why = "line too long";
		else if (s->n >= UNETD_SUBID_MAX)
			why = "too many ranges (the rest are not read)";
		else if (!(why = parse_line(p, n, name_uid, &r))) {
			if (!s->r) {
				s->r = calloc(UNETD_SUBID_MAX, sizeof(*s->r));
				if (!s->r) {
					if (warn)
						warn(ctx, lineno, "out of memory");
					return skipped + 1;
				}
			}
			s->r[s->n++] = r;
		}
		if (why) {
			skipped++;
			if (warn)
				warn(ctx, lineno, why);
			if (s->n >= UNETD_SUBID_MAX)
				break;
		}
		p = nl ? nl + 1 : end;
	}
	return skipped;
}

const struct unetd_subid *unetd_subid_find(const struct unetd_subids *s, uint32_t uid)
{
	if (uid == 0)
		return NULL; /* root is root, whatever a range says */
	/* First wins: an overlap is the earlier line's. */
	for (unsigned int i = 0; i < s->n; i++)
		if (uid >= s->r[i].start && uid - s->r[i].start < s->r[i].count)
			return &s->r[i];
	return NULL;
}

uint64_t unetd_acct_of(const struct unetd_subids *s, uint32_t uid)
{
	const struct unetd_subid *r = unetd_subid_find(s, uid);

	if (!r)
		return uid;
	/* A range of root's: never root's exemptions, and one identity per
	 * 65536 uids of it: container managers (LXD/Incus, podman
	 * --userns=auto, Docker's userns-remap) give slices of one large
	 * range of root's to containers that do not trust each other, a
	 * slice of 65536 each, and one container must not spend another's
	 * budget or connections (an attack review: container A's 256
	 * connections got container B refused). */
	if (!r->owner)
		return UNETD_ACCT_ROOT_RANGE |
		       (r->start + (uid - r->start) / UNETD_ROOT_SLICE * UNETD_ROOT_SLICE);
	return r->owner;
}

int unetd_acct_name(uint64_t acct, char *buf, size_t len)
{
	if (acct & UNETD_ACCT_ROOT_RANGE)
		return snprintf(buf, len, "root's subordinate uids from %u",
				(uint32_t)(acct & UINT32_MAX));
	return snprintf(buf, len, "uid %u", (uint32_t)acct);
}

void unetd_subid_free(struct unetd_subids *s)
{
	free(s->r);
	s->r = NULL;
	s->n = 0;
}

/* Warnings of one load: a line each, at most WARN_MAX. */
#define WARN_MAX 10
struct load_ctx {
	const char *path;
	unsigned int warned;
};

static void warn_line(void *ctx, unsigned int lineno, const char *why)
{
	struct load_ctx *l = ctx;

	if (l->warned++ < WARN_MAX)
		unetd_log(UNET_LOG_WARN, "%s:%u: skipped: %s", l->path, lineno, why);
}

int unetd_subid_load(const char *path, struct unetd_subids *s)
{
	struct load_ctx l = { .path = path };
	struct stat st;
	unsigned int skipped;
	char *text;
	ssize_t got;
	size_t len = 0;
	int fd;

	s->r = NULL;
	s->n = 0;
	if (!strcmp(path, "none"))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT) {
			unetd_log(UNET_LOG_INFO, "%s: none: no subordinate uid ranges", path);
			return 0;
		}
		unetd_log(UNET_LOG_ERROR, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > UNETD_SUBID_FILE_MAX) {
		unetd_log(UNET_LOG_ERROR, "%s: not a regular file of at most %u bytes", path,
			  UNETD_SUBID_FILE_MAX);
		close(fd);
		return -1;
	}
	text = malloc(UNETD_SUBID_FILE_MAX + 1);
	if (!text) {
		close(fd);
		return -1;
	}
	while (len <= UNETD_SUBID_FILE_MAX &&
	       (got = read(fd, text + len, UNETD_SUBID_FILE_MAX + 1 - len)) > 0)
		len += (size_t)got;
	close(fd);
	if (len > UNETD_SUBID_FILE_MAX) {
		unetd_log(UNET_LOG_ERROR, "%s: more than %u bytes", path, UNETD_SUBID_FILE_MAX);
		free(text);
		return -1;
	}
	skipped = unetd_subid_parse(text, len, s, unetd_nss_user_id, warn_line, &l);
	free(text);
	if (l.warned > WARN_MAX)
		unetd_log(UNET_LOG_WARN, "%s: %u more lines skipped", path, l.warned - WARN_MAX);
	unetd_log(UNET_LOG_INFO, "%s: %u subordinate uid ranges (their uids charged to their owners)%s",
		  path, s->n, skipped ? ", some lines skipped" : "");
	return 0;
}
