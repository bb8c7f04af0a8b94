/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * policy.h - who may do what with unetd (docs/unetd-policy.md).
 *
 * The daemon parses a policy once (at start and on reload), then asks it,
 * for each client (identified by SO_PEERCRED) and interface, what that
 * client may do: which kinds of endpoint, which tags and UDP ports, and
 * its quotas.  Which tags and ports are *held* by whom is the daemon's
 * business; the policy only says which ones a user may ask for.
 *
 * Every int function returns 0 or a negative errno.  Nothing here prints
 * or exits: errors are written into the caller's buffer, for its log.
 */
#ifndef UNETD_POLICY_H
#define UNETD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unetd_policy; /* opaque; immutable once parsed, so lookups may run concurrently */

/* Limits of a policy text; anything beyond them is refused, with its line. */
#define UNETD_POLICY_MAX_LINE 1024	    /* bytes of one line, without its newline */
#define UNETD_POLICY_MAX_RULES 4096
#define UNETD_POLICY_MAX_RANGES 32	    /* per list (tags, udp) of one rule */
#define UNETD_POLICY_MAX_ADDRS 16	    /* entries of one rule's addrs list */
#define UNETD_POLICY_MAX_NAME 32	    /* a user or group name */
#define UNETD_POLICY_MAX_PATTERN 64	    /* an interface pattern */
#define UNETD_POLICY_MAX_FILE (1024 * 1024) /* bytes of a policy file */

#define UNETD_POLICY_UNLIMITED32 UINT32_MAX /* max_endpoints "unlimited" */
#define UNETD_POLICY_UNLIMITED64 UINT64_MAX /* max_segment_bytes "unlimited" */

/*
 * Options of unetd_policy_parse_opts and unetd_policy_default_opts.  Set
 * sz to sizeof(struct unetd_policy_opts); fields past the caller's sz read
 * as zero, so the struct can grow.
 */
struct unetd_policy_opts {
	size_t sz;
	/* Label of the grants' rule strings ("LABEL:LINE ..."); NULL: "policy". */
	const char *origin;
	/* Resolve a user or group name: 0 with the id, -ENOENT if there is no
	 * such name, another negative errno if the lookup itself failed.  NULL:
	 * getpwnam_r / getgrnam_r.  Tests and fuzzers set them so that the
	 * result does not depend on the host's user database. */
	int (*user_id)(void *ctx, const char *name, uint32_t *uid);
	int (*group_id)(void *ctx, const char *name, uint32_t *gid);
	void *ctx;
};

/*
 * Parse a policy text of len bytes (it need not be NUL-terminated).
 * Returns 0 and *out (free with unetd_policy_free), or -EINVAL for a text
 * that is not a valid policy, with "LINE:COL: what" in err; -ENOMEM, or
 * the resolver's errno when a name lookup fails for another reason than
 * "no such name", with a message in err.  err may be NULL; it is always
 * NUL-terminated when errlen > 0.  User and group names are resolved to
 * ids here: a name that does not exist is an error.
 */
int unetd_policy_parse(const char *text, size_t len, struct unetd_policy **out, char *err,
		       size_t errlen);
int unetd_policy_parse_opts(const char *text, size_t len, const struct unetd_policy_opts *opts,
			    struct unetd_policy **out, char *err, size_t errlen);

/*
 * Read and parse the policy file at path.  Returns 0 and *out; a negative
 * errno from open/read (err names the path); -EPERM when the file is not
 * owned by root, is writable by group or others, or sits in a directory
 * that is not root's or that others may write without the sticky bit (err
 * says which): the daemon runs as root and must not take orders from a
 * file another user can change.  -ELOOP for a symbolic link (the file is
 * opened with O_NOFOLLOW), -EINVAL for something that is not a regular
 * file, -EFBIG beyond UNETD_POLICY_MAX_FILE, -EINVAL for a syntax error
 * with "PATH:LINE:COL: what" in err.
 */
int unetd_policy_load(const char *path, struct unetd_policy **out, char *err, size_t errlen);

/* A user name's uid from the user database (getpwnam_r, its buffer grown
 * as it asks): 0, -ENOENT (no such user), or another -errno. */
int unetd_nss_user_id(const char *name, uint32_t *uid);

/*
 * The built-in policy (the text of etc/unetd.policy, UNETD_POLICY_DEFAULT_TEXT):
 *   root          everything: both kinds, every interface, tag and UDP port,
 *                 unlimited endpoints and segment bytes;
 *   group "unet"  emulated endpoints on any interface, tags 1024-65535, no
 *                 UDP ports, 8 endpoints, 64M of segments, share 100;
 *   anyone else   nothing.
 * If the host has no group "unet", that rule matches nobody (where a
 * policy file naming a missing group is refused).  Returns 0 and *out, or
 * -ENOMEM.  Rule strings say "built-in:LINE ...".
 */
int unetd_policy_default(struct unetd_policy **out);
int unetd_policy_default_opts(const struct unetd_policy_opts *opts, struct unetd_policy **out);
extern const char UNETD_POLICY_DEFAULT_TEXT[];

/* Accepts NULL. */
void unetd_policy_free(struct unetd_policy *p);

/* Number of rules in p (for logs and unetctl doctor). */
unsigned int unetd_policy_rule_count(const struct unetd_policy *p);

struct unetd_grant {
	bool allowed;		    /* a rule matched and it grants a kind of endpoint */
	bool emulated, direct;	    /* kinds of endpoint allowed */
	uint32_t max_endpoints;	    /* per client user; UNETD_POLICY_UNLIMITED32: no limit */
	uint32_t max_channels;	    /* per client user, over all its endpoints; the same */
	uint64_t max_segment_bytes; /* total segment bytes per user; UNETD_POLICY_UNLIMITED64: no limit */
	uint32_t share;		    /* weight for fair service, 1..1000 */
	/* tags and UDP ports: ranges; query with the functions below */
	const void *priv; /* the rule it came from (borrowed from the policy) */
	char rule[64];	  /* where it came from, e.g. "policy:12 group unet" */
};

/*
 * What uid, whose groups are gids[0..ngids) (its primary gid and its
 * supplementary gids: the daemon reads them from /proc/PID/status Groups:
 * or with getgrouplist), may do on interface ifname.
 *
 * Precedence: among the rules whose interface pattern matches ifname, a
 * "user" rule for uid wins over any "group" rule for one of gids, which
 * wins over a "default" rule; among rules of one class, the first in the
 * file wins.  Nothing matched, or a "deny" rule won: allowed is false and
 * everything else is zero (rule still says why).
 *
 * The grant borrows from p (priv): it is valid only while p lives; after
 * a reload, look clients up again in the new policy.
 * Returns 0 (whether or not anything is allowed), or -EINVAL for NULL
 * p/ifname/out, gids NULL with ngids > 0, or an ifname that is empty or
 * longer than an interface name can be.
 */
int unetd_policy_lookup(const struct unetd_policy *p, uint32_t uid, const uint32_t *gids,
			unsigned int ngids, const char *ifname, struct unetd_grant *out);

/* Whether the grant lets its user send from (and answer ARP for) the IPv4
 * address addr (host order) that the device does not have: the rule's
 * `addrs` list (`all`: any).  False when !g->allowed, for 0. */
bool unetd_grant_addr(const struct unetd_grant *g, uint32_t addr);

/* Whether the grant allows tag (resp. UDP port); false when !g->allowed, for tag or port 0. */
bool unetd_grant_tag(const struct unetd_grant *g, uint16_t tag);
bool unetd_grant_udp_port(const struct unetd_grant *g, uint16_t port);
/* Whether the grant allows any IP port at all (its `udp` list is not
 * empty): the condition for an ephemeral TCP port (docs/unetd-policy.md). */
bool unetd_grant_any_port(const struct unetd_grant *g);

/* The tags (resp. UDP ports) the grant allows, as "1-100,200" in buf,
 * "none" for none, ending in "..." when cut to size.  Costs one step per
 * range of the rule, never one per number. */
void unetd_grant_format_tags(const struct unetd_grant *g, char *buf, size_t size);
void unetd_grant_format_udp(const struct unetd_grant *g, char *buf, size_t size);

#endif /* UNETD_POLICY_H */
