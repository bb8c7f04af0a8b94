/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unetctl.h - what unetctl's files share.  The floors, from the bottom:
 *   steer_rule.c      flow steering rules built and printed (pure)
 *   output.c          one emitter that prints text or JSON (em_*)
 *   common.c          errors, the pin root, argument parsing, interfaces
 *   daemon_client.c   unetd's socket: STATUS, asked once per command
 *   tables.c          the library's tables (endpoints, channels, UDP and
 *                     TCP ports): gathered, sorted, printed, listed
 *   attach.c endpoint.c channel.c udp.c tcp.c stats.c daemon.c doctor.c
 *   sockets.c steer.c
 *                     one file per object: its commands (and its command
 *                     table, for a group); objects do not call each other
 *   main.c            the command table, usage, dispatch
 * A lower file never calls a higher one.
 */
#ifndef UNETCTL_H
#define UNETCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <unet-xdp/unet.h>
#include "unet_abi.h"
#include <unet-xdp/unet_tcp.h>
#include <unet-xdp/unet_udp.h>
#include "proto/unetd_proto.h"

#define DEFAULT_PIN_ROOT "/sys/fs/bpf/unet"

/*
 * The version of unetctl's JSON: every document is an object whose first
 * member is "schema_version"; a listing's array sits under a key
 * ("channels", "endpoints", "udp", "interfaces").  Bump it when a member
 * is renamed or removed or changes meaning (adding one does not), and
 * say what changed in docs/unetctl.md.
 */
#define UNETCTL_JSON_SCHEMA 1

/* The global options (main.c parses them, every command reads them;
 * defined in common.c). */
struct unetctl_opts {
	bool json;
	int verbose; /* -v: library log up to info; -vv: and debug */
	const char *pin_root_opt; /* --pin-root */
	const char *socket_opt;	  /* --socket: unetd's */
};
extern struct unetctl_opts ctl;

/* ---- Output: one emitter for text and JSON ------------------------------ */

/*
 * JSON: compact, one document per command, ending with a newline.
 * Text: an object is either a LINE ("key value  key value ...") or ROWS
 * (one "key: value" per line); an array inside a ROWS object prints its
 * key as a row and its elements indented below it.
 */
enum em_style { EM_LINE, EM_ROWS };

struct cmd {
	const char *name;
	int (*fn)(const struct cmd *cmd, int argc, char **argv);
	const char *args; /* synopsis after the command words */
	const char *help; /* one line */
	const struct cmd *sub; /* a command group (channel, endpoint) */
	const char *full; /* "channel add" */
};

struct optdef {
	const char *name; /* "--mode" */
	const char **val; /* where its value goes */
};

/* Interfaces named on the command line, or every one under the pin root. */
struct names {
	char **v;
	size_t n;
};

struct daemon_conn {
	int fd;
	uint32_t pid;	  /* the daemon's, from SO_PEERCRED (not from anything it says) */
	uint32_t version; /* its protocol version, from HELLO */
	char err[256];	  /* why a call failed: one line */
};

#define DAEMON_MAX_LISTED ((UNETD_MAX_MSG - sizeof(struct unetd_rep_hdr) - \
			    sizeof(struct unetd_status)) / sizeof(struct unetd_status_ep))

/* What unetd serves, asked once per command (listings look at it for
 * every endpoint slot). */
struct daemon_view {
	bool tried, reachable;
	uint32_t pid, version;
	struct unetd_status st;
	struct unetd_status_ep eps[DAEMON_MAX_LISTED];
	char err[320];
};

/* Entries are collected and sorted before printing. */
struct list {
	void *v;
	size_t n, cap, size;
};

enum list_kind { LIST_ENDPOINTS, LIST_CHANNELS, LIST_UDP, LIST_TCP };

/* attach.c */
int do_attach(const struct cmd *c, int argc, char **argv);
int do_detach(const struct cmd *c, int argc, char **argv);
int do_status(const struct cmd *c, int argc, char **argv);

/* channel.c */
extern const struct cmd channel_cmds[];

/* common.c */
#define CAP_SYS_ADMIN_BIT 21 /* linux/capability.h CAP_SYS_ADMIN */
/* The last error the library logged (common.c's log callback keeps it). */
extern char last_lib_err[512];
int all_ifaces(struct names *ns);
int collect_name(const char *ifname, void *ctx);
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int fail_iface(int err, const char *ifname);
void free_names(struct names *ns);
int global_opt(int argc, char **argv, int *i);
extern const char global_opts_help[];
bool have_cap(unsigned int cap);
struct unet_iface_opts iface_opts(void);
void log_cb(enum unet_log_level level, const char *msg, void *ctx);
const char *mode_name(enum unet_xdp_mode m, bool alive);
struct unet_iface *open_iface(const char *ifname);
int parse_args(const struct cmd *c, int argc, char **argv, const struct optdef *defs,
		      char **pos, int minpos, int maxpos, int *npos);
int parse_tag(const char *what, const char *s, uint16_t *tag);
bool root_cmd_start(const struct cmd *c, int argc, char **argv, const struct optdef *defs,
		    char **pos, int minpos, int maxpos, int *npos, int *status);
int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);
const char *pin_root(void);
int require_root(void);
void usage_cmd(const struct cmd *c, FILE *f);

/* daemon.c */
extern const struct cmd daemon_cmds[];

/* daemon_client.c */
int daemon_call(struct daemon_conn *dc, uint16_t type, const void *body, uint32_t blen,
		       void *rep, uint32_t cap, uint32_t *len);
void daemon_close(struct daemon_conn *dc);
int daemon_open(struct daemon_conn *dc);
const char *daemon_socket(void);
const struct daemon_view *daemon_view(void);
bool slot_is_unetd(uint32_t pid, const char *comm);

/* doctor.c */
int do_doctor(const struct cmd *c, int argc, char **argv);

/* endpoint.c */
int do_reclaim(const struct cmd *c, int argc, char **argv);
extern const struct cmd endpoint_cmds[];

/* output.c */
void em_bare(const char *key, const char *label, const char *val);
void em_bool(const char *key, bool v);
void em_close(void);
void em_close_array(void);
void em_open(const char *key, enum em_style style);
void em_open_array(const char *key);
void em_str(const char *key, const char *val);
void em_u64(const char *key, uint64_t v);

/* sockets.c */
int do_sockets(const struct cmd *c, int argc, char **argv);

/* steer.c */
int do_steer(const struct cmd *c, int argc, char **argv);

/* stats.c */
int do_fault(const struct cmd *c, int argc, char **argv);
int do_stats(const struct cmd *c, int argc, char **argv);

/* tables.c */
int get_endpoints(struct unet_iface *iface, struct list *l);
int list_over(const struct cmd *c, int argc, char **argv, enum list_kind kind);
int port_del(const struct cmd *c, int argc, char **argv, bool tcp);
void print_endpoint(const char *ifname, bool show_iface, const struct unet_endpoint_entry *e);

/* tcp.c */
extern const struct cmd tcp_cmds[];

/* udp.c */
extern const struct cmd udp_cmds[];
#endif /* UNETCTL_H */
