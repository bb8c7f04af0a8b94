/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - the daemon's log: one line per event on stderr (the journal
 * under systemd), filtered by level; a user's lines through its limit
 * (unetd.h, struct unetd_log_limit). */
#include <stdarg.h>
#include <stdio.h>

#include "core/clock.h"
#include "unetd.h"

int unetd_log_level = UNET_LOG_INFO;

static const char *const level_names[] = { "error", "warning", "info", "debug" };

/* One line: what a user named is in some (an interface's name, which may
 * hold any byte but '/', ':', a space and NUL), and a control byte there
 * must not start a line of its own (a forged one, or many for the one the
 * user's log limit let through) nor speak to a terminal: each is a '?'. */
static void vlog(int level, const char *tail, const char *fmt, va_list ap)
{
	char line[2048];
	int n = vsnprintf(line, sizeof(line), fmt, ap);

	if (n < 0)
		return;
	if (tail && (size_t)n < sizeof(line)) {
		int k = snprintf(line + n, sizeof(line) - (size_t)n, "%s", tail);

		n = k < 0 ? n : n + k;
	}
	for (char *p = line; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	fprintf(stderr, "unetd: %s: %s%s\n", level_names[level], line,
		(size_t)n >= sizeof(line) ? "..." : "");
}

void unetd_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > unetd_log_level)
		return;
	va_start(ap, fmt);
	vlog(level, NULL, fmt, ap);
	va_end(ap);
}

/* The limit of all users but root together (unetd.h). */
static struct unetd_log_limit all_users;

/* Refill l's bucket (rate a second, at most burst) to now. */
static void refill(struct unetd_log_limit *l, uint64_t now, double rate, double burst)
{
	if (!l->last_ns)
		l->tokens = burst;
	else
		l->tokens += (double)(now - l->last_ns) * (rate / 1e9);
	if (l->tokens > burst)
		l->tokens = burst;
	l->last_ns = now;
}

/* The summary of what was left out, if a second has passed since the
 * last one (or force).  who: "uid U" for a user's limit, NULL for all
 * users'. */
static void say_suppressed(struct unetd_log_limit *l, const char *who, uint64_t now, bool force)
{
	if (!l->suppressed || (!force && now - l->said_ns < 1000000000u))
		return;
	if (who)
		unetd_log(l->level, "%s: %llu log lines of its requests suppressed (at most %.0f a second)",
			  who, (unsigned long long)l->suppressed, UNETD_LOG_USER_RATE);
	else
		unetd_log(l->level,
			  "%llu log lines of users' requests suppressed (all users together at most %.0f a second)",
			  (unsigned long long)l->suppressed, UNETD_LOG_USERS_RATE);
	l->suppressed = 0;
	l->said_ns = now;
}

/* Take a line from l's bucket; false: none left, the line is counted
 * for the summary. */
static bool take(struct unetd_log_limit *l, const char *who, int level, uint64_t now, double rate,
		 double burst)
{
	refill(l, now, rate, burst);
	if (l->tokens < 1.0) {
		/* The first left out starts the second its summary waits
		 * for (unless one is due anyway). */
		if (!l->suppressed) {
			l->level = level;
			if (now - l->said_ns >= 1000000000u)
				l->said_ns = now;
		} else if (level < l->level) {
			l->level = level;
		}
		l->suppressed++;
		say_suppressed(l, who, now, false);
		return false;
	}
	l->tokens -= 1.0;
	say_suppressed(l, who, now, false);
	return true;
}

void unetd_log_user(struct unetd_log_limit *l, uint32_t uid, int level, const char *fmt, ...)
{
	char tail[160];
	uint64_t now;
	va_list ap;

	if (level > unetd_log_level)
		return;
	now = unet_mono_ns();
	if (l) {
		if (!take(l, l->who, level, now, UNETD_LOG_USER_RATE, UNETD_LOG_USER_BURST))
			return;
	}
	if (uid != 0 &&
	    !take(&all_users, NULL, level, now, UNETD_LOG_USERS_RATE, UNETD_LOG_USERS_BURST))
		return;
	/* Whom the line is charged to, where that is not its uid. */
	if (l && l->acct != uid) {
		if (l->acct & UNETD_ACCT_ROOT_RANGE)
			snprintf(tail, sizeof(tail), " (uid %u: subordinate of root, charged to %s)",
				 uid, l->who);
		else
			snprintf(tail, sizeof(tail), " (uid %u: subordinate of %s)", uid, l->who);
	}
	va_start(ap, fmt);
	vlog(level, l && l->acct != uid ? tail : NULL, fmt, ap);
	va_end(ap);
}

bool unetd_log_user_flush(struct unetd_log_limit *l, bool force)
{
	say_suppressed(l, l->who, unet_mono_ns(), force);
	return l->suppressed != 0;
}

bool unetd_log_users_flush(bool force)
{
	say_suppressed(&all_users, NULL, unet_mono_ns(), force);
	return all_users.suppressed != 0;
}

bool unetd_log_user_idle(struct unetd_log_limit *l)
{
	if (l->last_ns)
		refill(l, unet_mono_ns(), UNETD_LOG_USER_RATE, UNETD_LOG_USER_BURST);
	return !l->last_ns || (!l->suppressed && l->tokens >= UNETD_LOG_USER_BURST);
}
