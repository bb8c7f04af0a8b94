/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unetctl - administer U-Net on AF_XDP: attach the XDP program to an
 * interface, list and set up channels, look at endpoints and counters,
 * ask unetd what it serves, and tell a user why an endpoint would be
 * direct or emulated (doctor).
 *
 * Subcommands live in tables (struct cmd), as in bpftool.  Every command
 * prints through one emitter (em_*) that writes either text or JSON, so
 * there is a single printing path per listing.  Errors are one line,
 * "unetctl: ...", on stderr, with exit status 1.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <bpf/libbpf.h>
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

static struct {
	bool json;
	int verbose; /* -v: library log up to info; -vv: and debug */
	const char *pin_root_opt; /* --pin-root */
	const char *socket_opt;	  /* --socket: unetd's */
} g;

/* ---- Output: one emitter for text and JSON ------------------------------ */

/*
 * JSON: compact, one document per command, ending with a newline.
 * Text: an object is either a LINE ("key value  key value ...") or ROWS
 * (one "key: value" per line); an array inside a ROWS object prints its
 * key as a row and its elements indented below it.
 */
enum em_style { EM_LINE, EM_ROWS };

struct em_frame {
	bool is_array;
	enum em_style style;
	bool has_items;	  /* JSON: a comma goes before the next item */
	bool line_open;	  /* text LINE object: something printed on the line */
	bool indented;	  /* text: this array raised the indent */
	bool wrapped;	  /* JSON: a top-level array inside {"schema_version"..} */
};

static struct {
	int depth;
	struct em_frame f[16];
	int indent;
	int top_blocks; /* text ROWS blocks printed at indent 0 */
} em;

static void em_json_str(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p == '\t')
			fputs("\\t", stdout);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static struct em_frame *em_top(void)
{
	return em.depth ? &em.f[em.depth - 1] : NULL;
}

/* JSON: the comma and key in front of an item. */
static void em_json_item(const char *key)
{
	struct em_frame *f = em_top();

	if (f) {
		if (f->has_items)
			putchar(',');
		f->has_items = true;
		if (!f->is_array && key) {
			em_json_str(key);
			putchar(':');
		}
	}
}

static void em_indent(void)
{
	for (int i = 0; i < em.indent; i++)
		fputs("  ", stdout);
}

static void em_push(bool is_array, enum em_style style, bool indented)
{
	struct em_frame *f;

	if (em.depth == (int)(sizeof(em.f) / sizeof(em.f[0])))
		abort(); /* a bug in this file, not a user error */
	f = &em.f[em.depth++];
	memset(f, 0, sizeof(*f));
	f->is_array = is_array;
	f->style = style;
	f->indented = indented;
}

/* JSON: the first member of every document. */
static void em_json_schema(void)
{
	printf("\"schema_version\":%d", UNETCTL_JSON_SCHEMA);
	em_top()->has_items = true;
}

static void em_pop_done(void)
{
	em.depth--;
	if (g.json && em.depth == 0)
		putchar('\n');
}

/* Open an object (key NULL at top level or inside an array). */
static void em_open(const char *key, enum em_style style)
{
	bool top = em.depth == 0;

	if (g.json) {
		em_json_item(key);
		putchar('{');
	} else if (style == EM_ROWS && em.indent == 0 && em.top_blocks++ > 0) {
		putchar('\n'); /* blank line between top-level blocks */
	}
	em_push(false, style, false);
	if (g.json && top)
		em_json_schema();
}

static void em_close(void)
{
	struct em_frame *f = em_top();

	if (g.json)
		putchar('}');
	else if (f->style == EM_LINE && f->line_open)
		putchar('\n');
	em_pop_done();
}

/* Open an array under key.  At top level the key names the listing: JSON
 * gets {"schema_version":N,"key":[...]}, text only the elements. */
static void em_open_array(const char *key)
{
	struct em_frame *parent = em_top();
	bool indented = false;

	if (g.json) {
		if (!parent) {
			putchar('{');
			em_push(false, EM_ROWS, false);
			em_json_schema();
		}
		em_json_item(key);
		putchar('[');
	} else if (parent && key) {
		em_indent();
		printf("%s:\n", key);
		em.indent++;
		indented = true;
	}
	em_push(true, EM_ROWS, indented);
	em_top()->wrapped = g.json && !parent;
}

static void em_close_array(void)
{
	struct em_frame *f = em_top();
	bool wrapped = f->wrapped;

	if (g.json)
		putchar(']');
	else if (f->indented)
		em.indent--;
	em_pop_done();
	if (wrapped) {
		putchar('}');
		em_pop_done();
	}
}

/* The one place a value is printed.  quote: a JSON string. */
static void em_value(const char *key, const char *val, bool quote)
{
	struct em_frame *f = em_top();

	if (g.json) {
		em_json_item(key);
		if (quote)
			em_json_str(val);
		else
			fputs(val, stdout);
		return;
	}
	if (f && f->style == EM_LINE) {
		if (!f->line_open)
			em_indent();
		else
			fputs("  ", stdout);
		f->line_open = true;
		printf("%s %s", key, val);
	} else {
		em_indent();
		printf("%s: %s\n", key, val);
	}
}

static void em_str(const char *key, const char *val)
{
	em_value(key, val, true);
}

static void em_u64(const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	em_value(key, buf, false);
}

static void em_bool(const char *key, bool v)
{
	em_value(key, g.json ? (v ? "true" : "false") : (v ? "yes" : "no"), false);
}

/* A string whose text form in a LINE object is label + value, without the
 * key (doctor's "ok  euid  ...  fix: ..."); JSON as em_str. */
static void em_bare(const char *key, const char *label, const char *val)
{
	struct em_frame *f = em_top();
	char buf[1024];

	if (g.json || !f || f->style != EM_LINE) {
		em_str(key, val);
		return;
	}
	snprintf(buf, sizeof(buf), "%s%s", label, val);
	if (!f->line_open)
		em_indent();
	else
		fputs("  ", stdout);
	f->line_open = true;
	fputs(buf, stdout);
}

/* ---- Errors ----------------------------------------------------------- */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("unetctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static const char *pin_root(void)
{
	const char *env = getenv("UNET_PIN_ROOT");

	if (g.pin_root_opt && *g.pin_root_opt)
		return g.pin_root_opt;
	if (env && *env)
		return env;
	return DEFAULT_PIN_ROOT;
}

static struct unet_iface_opts iface_opts(void)
{
	UNET_OPTS_INIT(unet_iface_opts, o);

	o.pin_root = pin_root();
	return o;
}

/* The last error the library logged (it names the path or the check that
 * failed): the one-line error of a failed command carries it. */
static char last_lib_err[512];

static void log_cb(enum unet_log_level level, const char *msg, void *ctx)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	size_t n;

	(void)ctx;
	if (level == UNET_LOG_ERROR) {
		snprintf(last_lib_err, sizeof(last_lib_err), "%s", msg);
		n = strlen(last_lib_err);
		while (n && last_lib_err[n - 1] == '\n')
			last_lib_err[--n] = '\0';
	}
	if (g.verbose == 0 || (level == UNET_LOG_DEBUG && g.verbose < 2))
		return;
	fprintf(stderr, "unetctl: lib %s: %s\n", level <= UNET_LOG_DEBUG ? names[level] : "?",
		msg);
}

/* Whether this process has capability cap in its effective set. */
static bool have_cap(unsigned int cap)
{
	char line[256];
	bool yes = false;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long eff;

		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			yes = cap < 64 && (eff >> cap & 1);
			break;
		}
	}
	fclose(f);
	return yes;
}

#define CAP_SYS_ADMIN_BIT 21 /* linux/capability.h CAP_SYS_ADMIN */

/* The one-line message for a library error about ifname ("" for none):
 * what the error means here, and the library's last logged error where it
 * says more (which path, which check). */
static int fail_iface(int err, const char *ifname)
{
	const char *sep = *ifname ? ": " : "";
	const char *lib = last_lib_err;

	err = err < 0 ? -err : err;
	switch (err) {
	case ENODEV:
		return fail("no such interface: %s", ifname);
	case EMEDIUMTYPE:
		return fail("no bpffs at %s: mount -t bpf -o mode=0700 bpf /sys/fs/bpf or set UNET_PIN_ROOT",
			    pin_root());
	case ENOENT:
		return fail("unet program not attached to %s (unetctl attach %s)", ifname, ifname);
	case EACCES:
		/* A path this process may not open: the log names it. */
		if (*lib)
			return fail("%s%spermission denied: %s", ifname, sep, lib);
		return fail("%s%spermission denied under %s (the pins are root's, mode 0600)",
			    ifname, sep, pin_root());
	case EPERM:
		/* bpf() refused (reading the attached program by id needs
		 * CAP_SYS_ADMIN), or the library refused an unsafe pin path
		 * (the log says which). */
		if (!have_cap(CAP_SYS_ADMIN_BIT))
			return fail("%s%soperation not permitted: needs root with CAP_SYS_ADMIN "
				    "(CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON are not enough)%s%s",
				    ifname, sep, *lib ? ": " : "", lib);
		if (*lib)
			return fail("%s%s%s", ifname, sep, lib);
		return fail("%s%soperation not permitted", ifname, sep);
	case EBUSY:
		return fail("another XDP program is attached to %s", ifname);
	case EOPNOTSUPP:
		return fail("%s: XDP mode not supported by the driver (try --mode skb)", ifname);
	case EPROTO:
		return fail("%s: pinned maps do not match this unetctl%s%s (unetctl detach %s)",
			    ifname, *lib ? ": " : "", lib, ifname);
	default:
		if (*lib)
			return fail("%s%s%s: %s", ifname, sep, strerror(err), lib);
		return fail("%s%s%s", ifname, sep, strerror(err));
	}
}

/*
 * Every command calls this once its arguments are parsed (global options
 * may follow the command), before it touches anything.  What is really
 * needed (docs/unetctl.md, "Privileges"): uid 0, because the pins are
 * root's (directories 0700, pins 0600) and the library refuses pin
 * directories owned by anyone else, plus CAP_SYS_ADMIN, because reading
 * the attached program by id (to check the pinned maps are its own) needs
 * it.  Capabilities without uid 0 are not enough: they do not make the
 * pins root's.
 */
static int require_root(void)
{
	if (geteuid() != 0)
		return fail("needs root: the pins under %s are root's, mode 0600 (capabilities "
			    "without uid 0 are not enough)",
			    pin_root());
	return 0;
}

/* ---- Arguments -------------------------------------------------------- */

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

static const char global_opts_help[] =
	"Global options (before or after the command):\n"
	"  -j, --json          JSON output\n"
	"  --pin-root PATH     where pins live (default $UNET_PIN_ROOT, else " DEFAULT_PIN_ROOT
	")\n"
	"  --socket PATH       unetd's socket (default $" UNETD_SOCKET_ENV ", else " UNETD_DEFAULT_SOCKET
	")\n"
	"  -v, --verbose       show the library's log on stderr (-vv: with debug)\n"
	"  -h, --help          this help\n"
	"  -V, --version       unetctl's and the library's version\n";

static void usage_cmd(const struct cmd *c, FILE *f)
{
	fprintf(f, "Usage: unetctl [OPTIONS] %s %s\n  %s\n", c->full, c->args, c->help);
	if (c->sub) {
		fprintf(f, "\nCommands:\n");
		for (const struct cmd *s = c->sub; s->name; s++)
			fprintf(f, "  %s %s %s\n      %s\n", c->full, s->name, s->args, s->help);
	}
	fprintf(f, "\n%s", global_opts_help);
}

/* A global option at argv[*i]: 1 consumed (advancing *i past a value),
 * 0 not a global option, -1 error (printed). */
static int global_opt(int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
		g.json = true;
		return 1;
	}
	if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
		g.verbose++;
		return 1;
	}
	if (!strcmp(a, "-vv")) {
		g.verbose += 2;
		return 1;
	}
	if (!strncmp(a, "--pin-root=", 11)) {
		g.pin_root_opt = a + 11;
		return 1;
	}
	if (!strcmp(a, "--pin-root")) {
		if (*i + 1 >= argc) {
			fail("--pin-root needs a PATH");
			return -1;
		}
		g.pin_root_opt = argv[++*i];
		return 1;
	}
	if (!strncmp(a, "--socket=", 9)) {
		g.socket_opt = a + 9;
		return 1;
	}
	if (!strcmp(a, "--socket")) {
		if (*i + 1 >= argc) {
			fail("--socket needs a PATH");
			return -1;
		}
		g.socket_opt = argv[++*i];
		return 1;
	}
	return 0;
}

/*
 * Parse a command's arguments: global options, the command's options
 * (defs, ending with a NULL name) and between minpos and maxpos positional
 * arguments into pos[].  Returns 0, 1 if --help was printed (exit 0), or
 * -1 after printing an error.
 */
static int parse_args(const struct cmd *c, int argc, char **argv, const struct optdef *defs,
		      char **pos, int minpos, int maxpos, int *npos)
{
	bool only_pos = false;
	int n = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const struct optdef *d;
		int r;

		if (only_pos || a[0] != '-' || !a[1]) {
			if (n == maxpos) {
				fail("unexpected argument: %s (usage: unetctl %s %s)", a, c->full,
				     c->args);
				return -1;
			}
			pos[n++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage_cmd(c, stdout);
			return 1;
		}
		r = global_opt(argc, argv, &i);
		if (r < 0)
			return -1;
		if (r)
			continue;
		for (d = defs; d && d->name; d++) {
			size_t len = strlen(d->name);

			if (!strcmp(a, d->name)) {
				if (i + 1 >= argc) {
					fail("%s needs a value (usage: unetctl %s %s)", d->name,
					     c->full, c->args);
					return -1;
				}
				*d->val = argv[++i];
				break;
			}
			if (!strncmp(a, d->name, len) && a[len] == '=') {
				*d->val = a + len + 1;
				break;
			}
		}
		if (!d || !d->name) {
			fail("unknown option: %s (unetctl %s --help)", a, c->full);
			return -1;
		}
	}
	if (n < minpos) {
		fail("missing arguments (usage: unetctl %s %s)", c->full, c->args);
		return -1;
	}
	*npos = n;
	return 0;
}

/* Decimal in [min, max]. Returns 0 or -1. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_tag(const char *what, const char *s, uint16_t *tag)
{
	unsigned long v;

	if (parse_uint(s, 1, UINT16_MAX, &v))
		return fail("invalid %s: %s (1..65535)", what, s ? s : "(none)");
	*tag = (uint16_t)v;
	return 0;
}

/* ---- unetd: the daemon's socket (lib/proto/unetd_proto.h) --------------- */

/* Where unetd listens: --socket, else $UNET_DAEMON_SOCKET, else the
 * default, as the library looks. */
static const char *daemon_socket(void)
{
	const char *env = getenv(UNETD_SOCKET_ENV);

	if (g.socket_opt && *g.socket_opt)
		return g.socket_opt;
	if (env && *env)
		return env;
	return UNETD_DEFAULT_SOCKET;
}

struct daemon_conn {
	int fd;
	uint32_t pid;	  /* the daemon's, from SO_PEERCRED (not from anything it says) */
	uint32_t version; /* its protocol version, from HELLO */
	char err[256];	  /* why a call failed: one line */
};

/* One request and its reply (lib/core/remote.c does the protocol). */
static int daemon_call(struct daemon_conn *dc, uint16_t type, const void *body, uint32_t blen,
		       void *rep, uint32_t cap, uint32_t *len)
{
	return unet_daemon__call(dc->fd, type, body, blen, rep, cap, len, dc->err,
				 sizeof(dc->err));
}

/* Connect and say HELLO.  Returns 0, or a negative errno with the one-line
 * reason in dc->err. */
static int daemon_open(struct daemon_conn *dc)
{
	memset(dc, 0, sizeof(*dc));
	dc->fd = unet_daemon__connect(daemon_socket(), &dc->pid, &dc->version, dc->err,
				      sizeof(dc->err));
	return dc->fd < 0 ? dc->fd : 0;
}

static void daemon_close(struct daemon_conn *dc)
{
	if (dc->fd >= 0)
		close(dc->fd);
	dc->fd = -1;
}

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

/* UNETD_REQ_STATUS on dc into v.  Returns 0 or a negative errno (v->err). */
static int daemon_status(struct daemon_conn *dc, struct daemon_view *v)
{
	uint8_t buf[UNETD_MAX_MSG];
	uint32_t len = 0;
	int err;

	err = daemon_call(dc, UNETD_REQ_STATUS, NULL, 0, buf, sizeof(buf), &len);
	if (!err && len < sizeof(v->st))
		err = -EPROTO;
	if (!err) {
		memcpy(&v->st, buf, sizeof(v->st));
		if (v->st.nlisted > DAEMON_MAX_LISTED ||
		    len < sizeof(v->st) + (size_t)v->st.nlisted * sizeof(v->eps[0]))
			err = -EPROTO;
	}
	if (err) {
		snprintf(v->err, sizeof(v->err), "unetd at %.40s: status: %s", daemon_socket(),
			 dc->err[0] ? dc->err : strerror(-err));
		return err;
	}
	memcpy(v->eps, buf + sizeof(v->st), v->st.nlisted * sizeof(v->eps[0]));
	for (uint32_t i = 0; i < v->st.nlisted; i++)
		v->eps[i].ifname[sizeof(v->eps[i].ifname) - 1] = '\0';
	return 0;
}

/* The daemon's view, asked the first time; reachable false (and err why)
 * when it is not there. */
static const struct daemon_view *daemon_view(void)
{
	static struct daemon_view v;
	struct daemon_conn dc;

	if (v.tried)
		return &v;
	v.tried = true;
	if (daemon_open(&dc)) {
		snprintf(v.err, sizeof(v.err), "%s", dc.err);
		return &v;
	}
	v.pid = dc.pid;
	v.version = dc.version;
	v.reachable = !daemon_status(&dc, &v);
	daemon_close(&dc);
	return &v;
}

/* Whether an endpoint slot's owner is unetd: the process at the daemon's
 * socket (its SO_PEERCRED pid), or a process named "unetd". */
static bool slot_is_unetd(uint32_t pid, const char *comm)
{
	const struct daemon_view *v = daemon_view();

	return (v->reachable && pid == v->pid) || !strcmp(comm, "unetd");
}

/* ---- Attach / detach ---------------------------------------------------- */

static const char *mode_name(enum unet_xdp_mode m, bool alive)
{
	if (!alive)
		return "none";
	switch (m) {
	case UNET_XDP_MODE_NATIVE:
		return "native";
	case UNET_XDP_MODE_SKB:
		return "skb";
	default:
		return "unknown";
	}
}


/* The warning for a device with more receive queues than U-Net serves, in
 * buf ("" when there are not more). */
static const char *queue_warning(const char *ifname, unsigned int devq, char *buf, size_t size)
{
	buf[0] = '\0';
	if (devq > UNET_MAX_QUEUES)
		snprintf(buf, size,
			 "%s has %u receive queues, U-Net serves queues 0-%d only "
			 "(UNET_MAX_QUEUES %d): frames arriving on queues %d-%u are dropped "
			 "(ethtool -L %s rx %d or combined %d, or steer them)",
			 ifname, devq, UNET_MAX_QUEUES - 1, UNET_MAX_QUEUES, UNET_MAX_QUEUES,
			 devq - 1, ifname, UNET_MAX_QUEUES, UNET_MAX_QUEUES);
	return buf;
}

static int do_attach(const struct cmd *c, int argc, char **argv)
{
	const char *mode_s = NULL;
	const struct optdef defs[] = { { "--mode", &mode_s }, { NULL, NULL } };
	enum unet_xdp_mode mode = UNET_XDP_MODE_AUTO;
	struct unet_iface_opts opts;
	struct unet_iface_status st;
	struct unet_iface *iface;
	char *pos[1];
	char warn[320];
	unsigned int devq;
	int n, r, err;

	r = parse_args(c, argc, argv, defs, pos, 1, 1, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	opts = iface_opts();
	if (mode_s) {
		if (!strcmp(mode_s, "native"))
			mode = UNET_XDP_MODE_NATIVE;
		else if (!strcmp(mode_s, "skb"))
			mode = UNET_XDP_MODE_SKB;
		else if (strcmp(mode_s, "auto"))
			return fail("invalid mode: %s (native, skb or auto)", mode_s);
	}
	err = unet_iface__attach(pos[0], mode, &opts);
	if (err)
		return fail_iface(err, pos[0]);
	iface = unet_iface__open(pos[0], &opts);
	if (!iface)
		return fail_iface(errno, pos[0]);
	err = unet_iface__status(iface, &st);
	unet_iface__close(iface);
	if (err)
		return fail_iface(err, pos[0]);
	if (mode != UNET_XDP_MODE_AUTO && st.mode != mode)
		fprintf(stderr,
			"unetctl: note: %s was already attached in %s mode (unetctl detach %s "
			"to change it)\n",
			pos[0], mode_name(st.mode, st.link_alive), pos[0]);
	devq = st.device_queues;
	if (*queue_warning(pos[0], devq, warn, sizeof(warn)))
		fprintf(stderr, "unetctl: warning: %s\n", warn);
	em_open(NULL, EM_LINE);
	em_str("ifname", st.ifname);
	em_str("mode", mode_name(st.mode, st.link_alive));
	em_u64("prog_id", st.prog_id);
	em_u64("queues", st.nqueues);
	em_u64("device_queues", devq);
	em_close();
	return 0;
}

static int do_detach(const struct cmd *c, int argc, char **argv)
{
	struct unet_iface_opts opts;
	char *pos[1];
	int n, r, err;

	r = parse_args(c, argc, argv, NULL, pos, 1, 1, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	opts = iface_opts();
	err = unet_iface__detach(pos[0], &opts);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("ifname", pos[0]);
	em_bool("detached", true);
	em_close();
	return 0;
}

/* ---- Listings ---------------------------------------------------------- */

/* Entries are collected and sorted before printing. */
struct list {
	void *v;
	size_t n, cap, size;
};

static int list_add(struct list *l, const void *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		void *v = realloc(l->v, cap * l->size);

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	memcpy((char *)l->v + l->n * l->size, e, l->size);
	l->n++;
	return 0;
}

/* Sort what a for_each collected into l, if it went well (err 0).
 * Returns err. */
static int list_sort(struct list *l, int err, int (*cmp)(const void *, const void *))
{
	if (!err && l->n)
		qsort(l->v, l->n, l->size, cmp);
	return err;
}

static int collect_channel(const struct unet_channel_entry *e, void *ctx)
{
	return list_add(ctx, e);
}

static int collect_endpoint(const struct unet_endpoint_entry *e, void *ctx)
{
	return list_add(ctx, e);
}

static int cmp_channel(const void *a, const void *b)
{
	const struct unet_channel_entry *x = a, *y = b;

	return (int)x->tag - (int)y->tag;
}

static int cmp_endpoint(const void *a, const void *b)
{
	const struct unet_endpoint_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int collect_udp(const struct unet_udp_entry *e, void *ctx)
{
	return list_add(ctx, e);
}

/* UDP and TCP ports: by address (addr in network order), then port. */
static int cmp_addr_port(uint32_t xaddr, uint16_t xport, uint32_t yaddr, uint16_t yport)
{
	uint32_t xa = ntohl(xaddr), ya = ntohl(yaddr);

	if (xa != ya)
		return xa < ya ? -1 : 1;
	return (int)xport - (int)yport;
}

static int cmp_udp(const void *a, const void *b)
{
	const struct unet_udp_entry *x = a, *y = b;

	return cmp_addr_port(x->addr, x->port, y->addr, y->port);
}

static int get_udp(struct unet_iface *iface, struct list *l)
{
	l->size = sizeof(struct unet_udp_entry);
	return list_sort(l, unet_iface__for_each_udp(iface, collect_udp, l), cmp_udp);
}

static int collect_tcp(const struct unet_tcp_entry *e, void *ctx)
{
	return list_add(ctx, e);
}

static int cmp_tcp(const void *a, const void *b)
{
	const struct unet_tcp_entry *x = a, *y = b;

	return cmp_addr_port(x->addr, x->port, y->addr, y->port);
}

static int get_tcp(struct unet_iface *iface, struct list *l)
{
	l->size = sizeof(struct unet_tcp_entry);
	return list_sort(l, unet_iface__for_each_tcp(iface, collect_tcp, l), cmp_tcp);
}

static int get_endpoints(struct unet_iface *iface, struct list *l)
{
	l->size = sizeof(struct unet_endpoint_entry);
	return list_sort(l, unet_iface__for_each_endpoint(iface, collect_endpoint, l), cmp_endpoint);
}

static int get_channels(struct unet_iface *iface, struct list *l)
{
	l->size = sizeof(struct unet_channel_entry);
	return list_sort(l, unet_iface__for_each_channel(iface, collect_channel, l), cmp_channel);
}

/*
 * One endpoint slot of ifname (with an "iface" member when show_iface),
 * and its kind: "direct" (a process's own AF_XDP sockets) or "unetd" (the
 * daemon's real endpoint).  Under unetd's slot follow the emulated
 * endpoints that the daemon at our socket serves on ifname (kind
 * "emulated", id the daemon's endpoint id, uid and pid from the kernel's
 * SO_PEERCRED of the client's connection, slot: unetd's).
 */
static void print_endpoint(const char *ifname, bool show_iface, const struct unet_endpoint_entry *e)
{
	const struct daemon_view *v;
	bool unetd = slot_is_unetd(e->pid, e->comm);

	em_open(NULL, EM_LINE);
	if (show_iface)
		em_str("iface", ifname);
	em_u64("id", e->id);
	em_str("kind", unetd ? "unetd" : "direct");
	em_u64("pid", e->pid);
	em_str("comm", e->comm);
	em_u64("queues", e->nqueues);
	em_bool("stale", e->stale);
	em_close();
	if (!unetd)
		return;
	v = daemon_view();
	if (!v->reachable || v->pid != e->pid) {
		fflush(stdout);
		fprintf(stderr,
			"unetctl: note: slot %u of %s is unetd's (pid %u) but %s: its emulated "
			"endpoints are not listed\n",
			e->id, ifname, e->pid,
			v->reachable ? "the unetd at our socket is another process" : v->err);
		return;
	}
	for (uint32_t i = 0; i < v->st.nlisted; i++) {
		const struct unetd_status_ep *se = &v->eps[i];

		if (strcmp(se->ifname, ifname))
			continue;
		em_open(NULL, EM_LINE);
		if (show_iface)
			em_str("iface", ifname);
		em_u64("id", se->ep);
		em_str("kind", "emulated");
		em_u64("pid", se->pid);
		em_u64("uid", se->uid);
		em_u64("channels", se->nchannels);
		em_u64("slot", e->id);
		em_close();
	}
	if (v->st.nlisted < v->st.nendpoints) {
		fflush(stdout);
		fprintf(stderr,
			"unetctl: note: unetd serves %u endpoints, its status reply lists %u: "
			"the others are not shown\n",
			v->st.nendpoints, v->st.nlisted);
	}
}

/*
 * One channel, and its kind: "emulated" when it is a channel of unetd's
 * real endpoint (one of the daemon's clients holds it: the daemon's
 * status counts channels per client endpoint, not which tags), else
 * "direct".  eps: the interface's endpoint slots.
 */
static void print_channel(const char *ifname, const struct unet_channel_entry *e,
			  const struct list *eps)
{
	const char *comm = "";
	char mac[18];

	for (size_t i = 0; i < eps->n; i++) {
		const struct unet_endpoint_entry *x = &((struct unet_endpoint_entry *)eps->v)[i];

		if (x->id == e->endpoint && x->pid == e->pid)
			comm = x->comm;
	}
	em_open(NULL, EM_LINE);
	em_str("iface", ifname);
	em_u64("tag", e->tag);
	em_str("peer_mac", unet_format_mac(e->peer_mac, mac));
	em_u64("peer_tag", e->peer_tag);
	em_u64("endpoint", e->endpoint);
	em_u64("pid", e->pid);
	em_str("kind", slot_is_unetd(e->pid, comm) ? "emulated" : "direct");
	em_bool("stale", e->stale);
	em_u64("delivered", e->delivered);
	em_u64("delivered_bytes", e->delivered_bytes);
	em_u64("drops", e->drop_wrong_src + e->drop_no_socket);
	em_u64("drop_wrong_src", e->drop_wrong_src);
	em_u64("drop_no_socket", e->drop_no_socket);
	em_close();
}

static void print_udp(const char *ifname, const struct unet_udp_entry *e)
{
	char a[INET_ADDRSTRLEN], r[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &e->addr, a, sizeof(a));
	inet_ntop(AF_INET, &e->remote_addr, r, sizeof(r));
	em_open(NULL, EM_LINE);
	em_str("iface", ifname);
	em_str("addr", a);
	em_u64("port", e->port);
	em_str("remote_addr", e->remote_addr ? r : "any");
	em_u64("remote_port", e->remote_port);
	em_u64("endpoint", e->endpoint);
	em_u64("pid", e->pid);
	em_bool("stale", e->stale);
	em_bool("arp", e->answers_arp);
	em_u64("delivered", e->delivered);
	em_u64("delivered_bytes", e->delivered_bytes);
	em_u64("drop_filter", e->drop_filter);
	em_u64("drop_no_socket", e->drop_no_socket);
	em_close();
}

static void print_tcp(const char *ifname, const struct unet_tcp_entry *e)
{
	char a[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &e->addr, a, sizeof(a));
	em_open(NULL, EM_LINE);
	em_str("iface", ifname);
	em_str("addr", a);
	em_u64("port", e->port);
	em_str("kind", e->listen ? "listen" : "connection");
	em_u64("endpoint", e->endpoint);
	em_u64("pid", e->pid);
	em_bool("stale", e->stale);
	em_u64("delivered", e->delivered);
	em_u64("delivered_bytes", e->delivered_bytes);
	em_u64("drop_no_socket", e->drop_no_socket);
	em_u64("drop_injected", e->drop_injected);
	em_close();
}

/* Open ifname, or report why not.  NULL after printing the error. */
static struct unet_iface *open_iface(const char *ifname)
{
	struct unet_iface_opts opts = iface_opts();
	struct unet_iface *iface;

	iface = unet_iface__open(ifname, &opts);
	if (!iface)
		fail_iface(errno, ifname);
	return iface;
}

/* Interfaces named on the command line, or every one under the pin root. */
struct names {
	char **v;
	size_t n;
};

static int collect_name(const char *ifname, void *ctx)
{
	struct names *ns = ctx;
	char **v = realloc(ns->v, (ns->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	ns->v = v;
	v[ns->n] = strdup(ifname);
	if (!v[ns->n])
		return -ENOMEM;
	ns->n++;
	return 0;
}

static void free_names(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

static int all_ifaces(struct names *ns)
{
	struct unet_iface_opts opts = iface_opts();
	int err;

	err = unet_iface__for_each(&opts, collect_name, ns);
	if (err == -EMEDIUMTYPE)
		return fail_iface(err, "");
	if (err)
		return fail("%s: %s", pin_root(), strerror(-err));
	return 0;
}

/* One interface's status, as a ROWS block. Returns 0 or the exit status. */
static int status_one(const char *ifname)
{
	struct unet_iface_status st;
	struct unet_iface *iface;
	struct list eps = { 0 };
	char warn[320];
	unsigned int devq;
	int err;

	iface = open_iface(ifname);
	if (!iface)
		return 1;
	err = unet_iface__status(iface, &st);
	devq = st.device_queues;
	queue_warning(ifname, devq, warn, sizeof(warn));
	if (!err)
		err = get_endpoints(iface, &eps);
	unet_iface__close(iface);
	if (err) {
		free(eps.v);
		return fail_iface(err, ifname);
	}
	em_open(NULL, EM_ROWS);
	em_str("ifname", st.ifname);
	em_u64("ifindex", (uint64_t)(st.ifindex > 0 ? st.ifindex : 0));
	em_bool("attached", st.link_alive);
	em_str("mode", mode_name(st.mode, st.link_alive));
	em_u64("prog_id", st.prog_id);
	em_u64("queues", st.nqueues);
	em_u64("device_queues", devq);
	if (*warn)
		em_str("warning", warn);
	em_u64("channels", st.n_channels);
	em_open_array("endpoints");
	for (size_t i = 0; i < eps.n; i++)
		print_endpoint(st.ifname, false, &((struct unet_endpoint_entry *)eps.v)[i]);
	em_close_array();
	em_close();
	free(eps.v);
	return 0;
}

static int do_status(const struct cmd *c, int argc, char **argv)
{
	struct names ns = { 0 };
	char *pos[1];
	int n, r;

	r = parse_args(c, argc, argv, NULL, pos, 0, 1, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	if (n == 1)
		return status_one(pos[0]);
	r = all_ifaces(&ns);
	if (!r) {
		/* Collect everything first: a failure prints no partial JSON. */
		em_open_array("interfaces");
		for (size_t i = 0; i < ns.n && !r; i++)
			r = status_one(ns.v[i]);
		em_close_array();
	}
	free_names(&ns);
	return r;
}

enum list_kind { LIST_ENDPOINTS, LIST_CHANNELS, LIST_UDP, LIST_TCP };

/* channel list / endpoint list / udp list: over IFACE or every attached
 * interface. */
static int list_over(const struct cmd *c, int argc, char **argv, enum list_kind kind)
{
	struct names ns = { 0 };
	struct list *lists, *eplists;
	char *pos[1];
	int n, r, err = 0;

	r = parse_args(c, argc, argv, NULL, pos, 0, 1, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	if (n == 1) {
		if (collect_name(pos[0], &ns)) {
			free_names(&ns);
			return fail("out of memory");
		}
	} else if ((r = all_ifaces(&ns))) {
		free_names(&ns);
		return r;
	}
	lists = calloc(ns.n ? ns.n : 1, sizeof(*lists));
	eplists = calloc(ns.n ? ns.n : 1, sizeof(*eplists)); /* channels: their slots' kinds */
	if (!lists || !eplists) {
		free(lists);
		free(eplists);
		free_names(&ns);
		return fail("out of memory");
	}
	/* Gather all, then print: an error leaves no half-printed output. */
	for (size_t i = 0; i < ns.n && !r; i++) {
		struct unet_iface *iface = open_iface(ns.v[i]);

		if (!iface) {
			r = 1;
			break;
		}
		err = kind == LIST_CHANNELS ? get_channels(iface, &lists[i])
		      : kind == LIST_UDP    ? get_udp(iface, &lists[i])
		      : kind == LIST_TCP    ? get_tcp(iface, &lists[i])
					    : get_endpoints(iface, &lists[i]);
		if (!err && kind == LIST_CHANNELS)
			err = get_endpoints(iface, &eplists[i]);
		unet_iface__close(iface);
		if (err)
			r = fail_iface(err, ns.v[i]);
	}
	if (!r) {
		em_open_array(kind == LIST_CHANNELS ? "channels"
			      : kind == LIST_UDP    ? "udp"
			      : kind == LIST_TCP    ? "tcp"
						    : "endpoints");
		for (size_t i = 0; i < ns.n; i++) {
			for (size_t j = 0; j < lists[i].n; j++) {
				if (kind == LIST_CHANNELS)
					print_channel(ns.v[i],
						      &((struct unet_channel_entry *)lists[i].v)[j],
						      &eplists[i]);
				else if (kind == LIST_UDP)
					print_udp(ns.v[i], &((struct unet_udp_entry *)lists[i].v)[j]);
				else if (kind == LIST_TCP)
					print_tcp(ns.v[i], &((struct unet_tcp_entry *)lists[i].v)[j]);
				else
					print_endpoint(ns.v[i], true,
						       &((struct unet_endpoint_entry *)lists[i].v)[j]);
			}
		}
		em_close_array();
	}
	for (size_t i = 0; i < ns.n; i++) {
		free(lists[i].v);
		free(eplists[i].v);
	}
	free(lists);
	free(eplists);
	free_names(&ns);
	return r;
}

static int do_channel_list(const struct cmd *c, int argc, char **argv)
{
	return list_over(c, argc, argv, LIST_CHANNELS);
}

static int do_endpoint_list(const struct cmd *c, int argc, char **argv)
{
	return list_over(c, argc, argv, LIST_ENDPOINTS);
}

static int do_udp_list(const struct cmd *c, int argc, char **argv)
{
	return list_over(c, argc, argv, LIST_UDP);
}

static int port_del(const struct cmd *c, int argc, char **argv, bool tcp)
{
	struct unet_iface *iface;
	struct in_addr a;
	unsigned long port;
	char *pos[2], buf[32], *colon;
	int n, r, err;

	r = parse_args(c, argc, argv, NULL, pos, 2, 2, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	if (strlen(pos[1]) >= sizeof(buf) || !(colon = strchr(strcpy(buf, pos[1]), ':')))
		return fail("invalid ADDR:PORT: %s", pos[1]);
	*colon = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1 || parse_uint(colon + 1, 1, 65535, &port))
		return fail("invalid ADDR:PORT: %s", pos[1]);
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	err = tcp ? unet_iface__tcp_del(iface, a.s_addr, (uint16_t)port)
		  : unet_iface__udp_del(iface, a.s_addr, (uint16_t)port);
	unet_iface__close(iface);
	if (err == -ENOENT)
		return fail("no %s port %s on %s", tcp ? "TCP" : "UDP", pos[1], pos[0]);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_str("addr", buf);
	em_u64("port", port);
	em_bool("deleted", true);
	em_close();
	return 0;
}

static int do_udp_del(const struct cmd *c, int argc, char **argv)
{
	return port_del(c, argc, argv, false);
}

static int do_tcp_del(const struct cmd *c, int argc, char **argv)
{
	return port_del(c, argc, argv, true);
}

static int do_tcp_list(const struct cmd *c, int argc, char **argv)
{
	return list_over(c, argc, argv, LIST_TCP);
}

static int do_channel_add(const struct cmd *c, int argc, char **argv)
{
	const char *ep_s = NULL, *tag_s = NULL, *peer_s = NULL, *ptag_s = NULL;
	const struct optdef defs[] = {
		{ "--endpoint", &ep_s }, { "--tag", &tag_s },	      { "--peer", &peer_s },
		{ "--peer-tag", &ptag_s }, { NULL, NULL },
	};
	struct unet_iface *iface;
	uint16_t tag = 0, peer_tag = 0;
	unsigned long ep;
	uint8_t mac[6];
	char macs[18];
	char *pos[1];
	int n, r, err;

	r = parse_args(c, argc, argv, defs, pos, 1, 1, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	if (!ep_s || !tag_s || !peer_s || !ptag_s)
		return fail("missing option (usage: unetctl %s %s)", c->full, c->args);
	if (parse_uint(ep_s, 0, UNET_MAX_ENDPOINTS - 1, &ep))
		return fail("invalid endpoint: %s (0..%d)", ep_s, UNET_MAX_ENDPOINTS - 1);
	if (parse_tag("tag", tag_s, &tag) || parse_tag("peer tag", ptag_s, &peer_tag))
		return 1;
	if (unet_parse_mac(peer_s, mac))
		return fail("invalid MAC address: %s (aa:bb:cc:dd:ee:ff)", peer_s);

	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	err = unet_iface__channel_add(iface, (uint32_t)ep, tag, mac, peer_tag);
	unet_iface__close(iface);
	if (err == -EADDRINUSE)
		return fail("tag %u in use on %s", tag, pos[0]);
	if (err == -ESRCH)
		return fail("no live endpoint %lu on %s (unetctl endpoint list %s)", ep, pos[0],
			    pos[0]);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_u64("tag", tag);
	em_str("peer_mac", unet_format_mac(mac, macs));
	em_u64("peer_tag", peer_tag);
	em_u64("endpoint", ep);
	em_close();
	return 0;
}

static int do_channel_del(const struct cmd *c, int argc, char **argv)
{
	struct unet_iface *iface;
	uint16_t tag = 0;
	char *pos[2];
	int n, r, err;

	r = parse_args(c, argc, argv, NULL, pos, 2, 2, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	if (parse_tag("tag", pos[1], &tag))
		return 1;
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	err = unet_iface__channel_del(iface, tag);
	unet_iface__close(iface);
	if (err == -ENOENT)
		return fail("no channel with tag %u on %s", tag, pos[0]);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_u64("tag", tag);
	em_bool("deleted", true);
	em_close();
	return 0;
}

static int do_stats(const struct cmd *c, int argc, char **argv)
{
	uint64_t ctr[UNET_STAT__COUNT];
	struct unet_iface *iface;
	char *pos[1];
	int n, r, err;

	r = parse_args(c, argc, argv, NULL, pos, 1, 1, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	err = unet_iface__stats(iface, ctr);
	unet_iface__close(iface);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_ROWS);
	em_str("ifname", pos[0]);
	for (int i = 0; i < UNET_STAT__COUNT; i++)
		em_u64(unet_stat_name(i), ctr[i]);
	em_close();
	return 0;
}

/* Test hook: injected loss in the XDP program (no tc netem needed). */
static int do_fault(const struct cmd *c, int argc, char **argv)
{
	const char *ppm_s = NULL;
	const struct optdef defs[] = { { "--drop-ppm", &ppm_s }, { NULL, NULL } };
	struct unet_iface *iface;
	unsigned long ppm;
	char *pos[1];
	int n, r, err;

	r = parse_args(c, argc, argv, defs, pos, 1, 1, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	if (!ppm_s)
		return fail("--drop-ppm is required (usage: unetctl %s %s)", c->full, c->args);
	if (parse_uint(ppm_s, 0, 1000000, &ppm))
		return fail("invalid --drop-ppm: %s (0..1000000)", ppm_s);
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	err = unet_iface__set_fault(iface, (uint32_t)ppm);
	unet_iface__close(iface);
	if (err)
		return fail_iface(err, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_u64("drop_ppm", ppm);
	em_close();
	return 0;
}

static int do_reclaim(const struct cmd *c, int argc, char **argv)
{
	struct unet_iface *iface;
	char *pos[1];
	int n, r;

	r = parse_args(c, argc, argv, NULL, pos, 1, 1, &n);
	if (r)
		return r < 0;
	if (require_root())
		return 1;
	iface = open_iface(pos[0]);
	if (!iface)
		return 1;
	r = unet_iface__reclaim(iface);
	unet_iface__close(iface);
	if (r < 0)
		return fail_iface(r, pos[0]);
	em_open(NULL, EM_LINE);
	em_str("iface", pos[0]);
	em_u64("removed", (uint64_t)r);
	em_close();
	return 0;
}

/* ---- unetd's state ---------------------------------------------------- */

static int do_daemon_status(const struct cmd *c, int argc, char **argv)
{
	const struct daemon_view *v;
	char *pos[1], warn[128];
	int n, r;

	r = parse_args(c, argc, argv, NULL, pos, 0, 0, &n);
	if (r)
		return r < 0;
	/* No root needed: the daemon answers STATUS to anyone who connects. */
	v = daemon_view();
	if (!v->reachable)
		return fail("%s", v->err);
	em_open(NULL, EM_ROWS);
	em_str("socket", daemon_socket());
	em_bool("reachable", true);
	em_u64("pid", v->pid);
	em_u64("protocol_version", v->version);
	/* Our own connection is one of the daemon's clients: not counted. */
	em_u64("clients", v->st.nclients ? v->st.nclients - 1 : 0);
	em_u64("nendpoints", v->st.nendpoints);
	em_u64("req_bad", v->st.req_bad);
	em_u64("req_denied", v->st.req_denied);
	em_u64("req_throttled", v->st.req_throttled);
	if (v->st.nlisted < v->st.nendpoints) {
		snprintf(warn, sizeof(warn), "%u endpoints not listed (one status reply holds %u)",
			 v->st.nendpoints - v->st.nlisted, v->st.nlisted);
		em_str("warning", warn);
	}
	em_open_array("endpoints");
	for (uint32_t i = 0; i < v->st.nlisted; i++) {
		const struct unetd_status_ep *se = &v->eps[i];
		const struct unetd_ep_counters *k = &se->counters;

		em_open(NULL, EM_LINE);
		em_u64("id", se->ep);
		em_str("iface", se->ifname);
		em_u64("uid", se->uid);
		em_u64("pid", se->pid);
		em_u64("channels", se->nchannels);
		em_u64("rx_delivered", k->rx_delivered);
		em_u64("rx_dropped", k->rx_dropped);
		em_u64("tx_sent", k->tx_sent);
		em_u64("tx_bad_desc", k->tx_bad_desc);
		em_u64("tx_bad_frame", k->tx_bad_frame);
		em_u64("tx_foreign_tag", k->tx_foreign_tag);
		em_u64("tx_foreign_peer", k->tx_foreign_peer);
		em_u64("tx_dropped", k->tx_dropped);
		em_u64("share", se->share);
		em_close();
	}
	em_close_array();
	em_close();
	return 0;
}

/* ---- doctor: why an endpoint would be direct or emulated ----------------- */

#define CAP_NET_RAW_BIT 13  /* AF_XDP sockets */
#define CAP_IPC_LOCK_BIT 14 /* the UMEM's locked memory beyond RLIMIT_MEMLOCK */
#define DIRECT_SEGMENT (8u << 20) /* the library's default segment */

/* Drivers with AF_XDP zero-copy (the kernel's xsk_pool users). */
static const char *const zc_drivers[] = { "i40e", "ice", "ixgbe", "igc", "igb", "mlx5_core",
					  "stmmac", "ena", "idpf", "virtio_net", NULL };

enum chk { CHK_OK, CHK_WARN, CHK_FAIL };

struct doctor {
	const char *ifname; /* NULL: no interface named */
	uid_t euid;
	char first_fail[512];
};

/* One check: "ok|warn|fail  NAME  MESSAGE  fix: FIX" (fix NULL: none). */
static void check(struct doctor *dr, enum chk st, const char *name, const char *fix,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void check(struct doctor *dr, enum chk st, const char *name, const char *fix,
		  const char *fmt, ...)
{
	static const char *const words[] = { "ok", "warn", "fail" };
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (st == CHK_FAIL && !dr->first_fail[0])
		snprintf(dr->first_fail, sizeof(dr->first_fail), "%s", msg);
	em_open(NULL, EM_LINE);
	em_bare("status", "", words[st]);
	em_bare("check", "", name);
	em_bare("message", "", msg);
	if (fix)
		em_bare("fix", "fix: ", fix);
	em_close();
}

/* The bpffs under the pin root, as this user sees it: ok (direct may pin
 * there), or not, with the reason in the check line. */
static bool doctor_bpffs(struct doctor *dr)
{
	const char *root = pin_root();
	enum chk bad = dr->euid == 0 ? CHK_FAIL : CHK_WARN;
	char path[PATH_MAX], *slash;
	struct statfs sf;
	struct stat st;

	/* The pin root, or its nearest ancestor that exists (the library
	 * makes the rest) and that this user can look at. */
	snprintf(path, sizeof(path), "%s", root);
	while (stat(path, &st) || statfs(path, &sf)) {
		slash = strrchr(path, '/');
		if (!slash || slash == path) {
			check(dr, bad, "bpffs", NULL, "cannot look at the pin root %s: %s", root,
			      strerror(errno));
			return false;
		}
		*slash = '\0';
	}
	if ((unsigned long)sf.f_type != BPF_FS_MAGIC) {
		check(dr, bad, "bpffs",
		      "mount -t bpf -o mode=0700 bpf /sys/fs/bpf, or point --pin-root or $UNET_PIN_ROOT "
		      "at a bpffs",
		      "no bpffs at the pin root %s (%s is not one)%s", root, path,
		      dr->euid ? ": only direct endpoints need it" : ": direct endpoints cannot pin");
		return false;
	}
	if (st.st_uid != 0 && st.st_uid != dr->euid) {
		check(dr, bad, "bpffs", "chown root and chmod 0700 it (or mount bpffs with mode=0700)",
		      "%s is owned by uid %u: the library refuses it", path, (unsigned)st.st_uid);
		return false;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		bool refused = !strcmp(path, root) || !(st.st_mode & S_ISVTX);

		check(dr, refused ? bad : CHK_WARN, "bpffs",
		      "mount -t bpf -o mode=0700 bpf ... (or chmod 0700 it)",
		      "%s (bpffs) is writable by group or others (mode %04o): %s", path,
		      (unsigned)(st.st_mode & 07777),
		      refused ? "the library refuses it"
			      : "sticky, so the library accepts it below, but mode=0700 is safer");
		return !refused;
	}
	check(dr, CHK_OK, "bpffs", NULL, "bpffs at %s, mode %04o, owner uid %u%s%s", path,
	      (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
	      strcmp(path, root) ? "; the pin root " : "", strcmp(path, root) ? root : "");
	return true;
}

/* The XDP program on the interface.  *native: attached in driver mode (or
 * not attached: auto tries native first); *mode says which.  Returns false
 * when a direct endpoint cannot have its program there. */
static bool doctor_xdp(struct doctor *dr, int ifindex, bool *native, const char **mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char fix[128];
	int err;

	*native = true;
	*mode = "unknown";
	snprintf(fix, sizeof(fix), "unetctl attach %s [--mode native|skb] (as root)", dr->ifname);
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err) {
		check(dr, CHK_WARN, "xdp", NULL, "cannot ask the kernel about %s's XDP program: %s",
		      dr->ifname, strerror(-err));
		return true;
	}
	*native = q.attach_mode != XDP_ATTACHED_SKB;
	*mode = !q.prog_id ? "auto (not attached yet: native, else skb)"
		: *native  ? "native"
			   : "skb";
	if (dr->euid == 0) {
		struct unet_iface_opts opts = iface_opts();
		struct unet_iface_status st;
		struct unet_iface *iface = unet_iface__open(dr->ifname, &opts);

		if (iface) {
			err = unet_iface__status(iface, &st);
			unet_iface__close(iface);
			if (!err) {
				*native = st.mode != UNET_XDP_MODE_SKB;
				*mode = *native ? "native" : "skb";
				check(dr, CHK_OK, "xdp", NULL,
				      "unet program attached to %s, %s mode (prog %u)%s", dr->ifname,
				      mode_name(st.mode, st.link_alive), st.prog_id,
				      *native ? "" : ": skb (generic) XDP has no zero-copy");
				return true;
			}
		} else {
			err = -errno;
		}
		if (err != -ENOENT) {
			check(dr, CHK_FAIL, "xdp", NULL, "%s: %s%s%s", dr->ifname, strerror(-err),
			      last_lib_err[0] ? ": " : "", last_lib_err);
			return false;
		}
		if (q.prog_id) {
			check(dr, CHK_FAIL, "xdp", "detach it (ip link set dev IFACE xdp off) or use another interface",
			      "another XDP program (id %u) is attached to %s", q.prog_id, dr->ifname);
			return false;
		}
		check(dr, CHK_WARN, "xdp", fix,
		      "no XDP program on %s: the first direct endpoint attaches unet's (native, else "
		      "skb)", dr->ifname);
		return true;
	}
	if (q.prog_id)
		check(dr, CHK_OK, "xdp", NULL,
		      "an XDP program (id %u) is attached to %s in %s mode (whether it is unet's only "
		      "root can tell)",
		      q.prog_id, dr->ifname,
		      q.attach_mode == XDP_ATTACHED_SKB ? "skb (generic)"
		      : q.attach_mode == XDP_ATTACHED_HW ? "hardware"
							: "native (driver)");
	else
		check(dr, CHK_WARN, "xdp", fix,
		      "no XDP program on %s: unetd attaches unet's when it serves the first "
		      "endpoint there", dr->ifname);
	return true;
}

/* The driver, and whether AF_XDP zero-copy is to be had (returned). */
static bool doctor_zerocopy(struct doctor *dr, bool native, bool direct)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	bool zc = false;
	int fd;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dr->ifname);
	ifr.ifr_data = (void *)&di;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCETHTOOL, &ifr)) {
		check(dr, CHK_WARN, "zerocopy", NULL, "cannot ask %s's driver (ethtool -i): %s",
		      dr->ifname, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	di.driver[sizeof(di.driver) - 1] = '\0';
	for (const char *const *d = zc_drivers; *d; d++)
		zc = zc || !strcmp(di.driver, *d);
	if (!direct)
		check(dr, CHK_WARN, "zerocopy", "a direct endpoint (root) on a NIC with zero-copy",
		      "copy: unetd copies every frame of an emulated endpoint (driver %s)", di.driver);
	else if (!zc)
		check(dr, CHK_WARN, "zerocopy",
		      "a NIC whose driver has AF_XDP zero-copy (ice, i40e, ixgbe, igc, mlx5_core, ...)",
		      "copy mode: driver %s has no AF_XDP zero-copy%s", di.driver,
		      strcmp(di.driver, "veth") ? " that unetctl knows of (the library tries it first)"
						 : "");
	else if (!native)
		check(dr, CHK_WARN, "zerocopy",
		      "unetctl detach, then unetctl attach IFACE --mode native",
		      "copy mode: driver %s has zero-copy, but the program runs in skb mode",
		      di.driver);
	else
		check(dr, CHK_OK, "zerocopy", NULL,
		      "driver %s has AF_XDP zero-copy: the library asks for it first", di.driver);
	return direct && zc && native;
}

#define GRANT_SEGMENT_DEFAULT (4u << 20) /* unetd's default for a direct grant */

/* RLIMIT_MEMLOCK: what a direct endpoint's UMEM is charged to (for a
 * grant, unetd reads the caller's limit).  granted: unetd would grant the
 * caller a direct endpoint. */
static bool doctor_memlock(struct doctor *dr, bool granted)
{
	struct rlimit rl;
	char lim[32];

	if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
		check(dr, CHK_WARN, "memlock", NULL, "getrlimit: %s", strerror(errno));
		return true;
	}
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(lim, sizeof(lim), "unlimited");
	else
		snprintf(lim, sizeof(lim), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
	if (dr->euid != 0 && !granted) {
		check(dr, CHK_OK, "memlock", NULL,
		      "RLIMIT_MEMLOCK %s: emulated endpoints lock none of your memory (unetd's region)",
		      lim);
		return true;
	}
	if (dr->euid != 0) {
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < GRANT_SEGMENT_DEFAULT) {
			check(dr, CHK_FAIL, "memlock", "ulimit -l 8192 or more (or a smaller segment)",
			      "RLIMIT_MEMLOCK %s: unetd charges a granted segment (4 MiB by default) to "
			      "it and refuses the grant",
			      lim);
			return false;
		}
		check(dr, CHK_OK, "memlock", NULL,
		      "RLIMIT_MEMLOCK %s: room for a granted segment (4 MiB by default, charged "
		      "to you by unetd)",
		      lim);
		return true;
	}
	if (have_cap(CAP_IPC_LOCK_BIT)) {
		check(dr, CHK_OK, "memlock", NULL,
		      "RLIMIT_MEMLOCK %s, and CAP_IPC_LOCK: the UMEM is not limited by it", lim);
		return true;
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < DIRECT_SEGMENT + (1u << 20)) {
		check(dr, CHK_FAIL, "memlock", "ulimit -l unlimited (LimitMEMLOCK=infinity in a unit)",
		      "RLIMIT_MEMLOCK %s without CAP_IPC_LOCK: too little for the default 8 MiB "
		      "segment (ENOBUFS)",
		      lim);
		return false;
	}
	check(dr, CHK_OK, "memlock", NULL, "RLIMIT_MEMLOCK %s: room for the default 8 MiB segment",
	      lim);
	return true;
}

/* What unetd would give the caller on the interface. */
struct daemon_offer {
	bool emulated;	   /* an emulated endpoint (a queue not set aside for grants) */
	bool direct;	   /* a direct grant (the policy's kind and a queue set aside) */
	bool policy_direct; /* the policy grants direct: auto asks for it */
	char rule[64];
};

/* The device's receive queues, as a mask (1 when /sys does not say). */
static uint32_t device_queue_mask(const char *ifname)
{
	char path[128];
	unsigned int n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%u", ifname, n);
		if (access(path, F_OK) || n == 32)
			break;
	}
	return n ? (n >= 32 ? UINT32_MAX : (1u << n) - 1) : 1;
}

/* unetd: reachable, its protocol, and what its policy grants us (*o). */
/* Whether spinning can pay here: a spinning client, its peer and (for an
 * emulated endpoint) unetd each want a CPU while a message is in flight;
 * with fewer CPUs than that they take turns in time slices and a
 * spinning round trip is slower than a blocking one. */
static void doctor_spin(struct doctor *dr)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n >= 3)
		check(dr, CHK_OK, "spin", NULL,
		      "%ld CPUs: a spinning wait (a poll loop, or unet_endpoint__set_spin_us) has a CPU to itself", n);
	else
		check(dr, CHK_WARN, "spin", "block in unet_endpoint__wait with a small spin budget instead of polling in a loop",
		      "%ld CPUs: a spinning process, its peer and unetd compete for them; "
		      "spinning waits are slower than blocking ones here (unetd does not spin)",
		      n);
}

static void doctor_daemon(struct doctor *dr, bool direct, struct daemon_offer *o)
{
	uint32_t all = dr->ifname ? device_queue_mask(dr->ifname) : UINT32_MAX, gq;
	char *rule = o->rule;
	size_t rlen = sizeof(o->rule);
	enum chk bad = direct ? CHK_WARN : CHK_FAIL;
	struct unetd_whoami req = { { 0 } };
	struct unetd_whoami_rep w = { 0 };
	struct daemon_conn dc;
	char gids[160] = "", fix[200], quota[96], seg[32];
	uint32_t len = 0;
	size_t off = 0;
	bool ok;
	int err;

	if (daemon_open(&dc)) {
		check(dr, bad, "daemon",
		      "start unetd (it serves emulated endpoints), or point --socket or "
		      "$" UNETD_SOCKET_ENV " at its socket",
		      "%s", dc.err);
		check(dr, bad, "policy", NULL, "cannot ask unetd's policy: unetd not reachable");
		return;
	}
	check(dr, CHK_OK, "daemon", NULL, "unetd at %s (pid %u), protocol version %u",
	      daemon_socket(), dc.pid, dc.version);
	if (dr->ifname)
		snprintf(req.ifname, sizeof(req.ifname), "%s", dr->ifname);
	err = daemon_call(&dc, UNETD_REQ_WHOAMI, &req, sizeof(req), &w, sizeof(w), &len);
	daemon_close(&dc);
	if (!err && len < sizeof(w))
		err = -EPROTO;
	if (err) {
		check(dr, bad, "policy", "update unetd to the version of this unetctl",
		      "unetd at %s cannot say what its policy grants (%s): an older unetd without "
		      "WHOAMI?",
		      daemon_socket(), err == -ECONNRESET ? "it dropped the question" : strerror(-err));
		return;
	}
	w.tags[sizeof(w.tags) - 1] = w.udp[sizeof(w.udp) - 1] = w.rule[sizeof(w.rule) - 1] = '\0';
	snprintf(rule, rlen, "%s", w.rule[0] ? w.rule : "no rule");
	for (uint32_t i = 0; i < w.ngids && i < UNETD_WHOAMI_MAX_GIDS && off < sizeof(gids) - 12; i++)
		off += (size_t)snprintf(gids + off, sizeof(gids) - off, "%s%u", i ? "," : "", w.gids[i]);
	if (!dr->ifname) {
		check(dr, CHK_WARN, "policy", "unetctl doctor IFACE",
		      "unetd takes you for uid %u gid %u groups %s; name an interface to ask for its "
		      "grant",
		      w.uid, w.gid, w.ngids ? gids : "none");
		o->emulated = true; /* if the policy grants it */
		return;
	}
	snprintf(fix, sizeof(fix),
		 "add a rule to unetd's policy, e.g. \"user %u iface %s kinds emulated tags "
		 "1024-65535\" (docs/unetd-policy.md), and restart unetd",
		 w.uid, dr->ifname);
	if (!w.allowed) {
		check(dr, bad, "policy", fix,
		      "unetd's policy refuses uid %u (gid %u, groups %s) on %s: %s", w.uid, w.gid,
		      w.ngids ? gids : "none", dr->ifname, w.rule[0] ? w.rule : "no rule matches");
		return;
	}
	if (w.max_segment_bytes == UINT64_MAX)
		snprintf(seg, sizeof(seg), "unlimited");
	else if (!(w.max_segment_bytes % (1u << 20)))
		snprintf(seg, sizeof(seg), "%lluM", (unsigned long long)(w.max_segment_bytes >> 20));
	else
		snprintf(seg, sizeof(seg), "%llu bytes", (unsigned long long)w.max_segment_bytes);
	if (w.max_endpoints == UINT32_MAX)
		snprintf(quota, sizeof(quota), "endpoints unlimited");
	else
		snprintf(quota, sizeof(quota), "endpoints %u", w.max_endpoints);
	if (w.max_endpoints != UINT32_MAX && w.endpoints_held >= w.max_endpoints) {
		check(dr, bad, "policy", "close one of them, or raise \"endpoints\" in the rule",
		      "uid %u holds %u of its %u endpoints (%s): a new one gets EDQUOT", w.uid,
		      w.endpoints_held, w.max_endpoints, w.rule);
		return;
	}
	/* Direct grants go on the queues set aside (--grant-queues), emulated
	 * endpoints on the others (the daemon's real endpoint). */
	gq = w.grant_queues & all;
	o->policy_direct = (w.kinds & (1u << UNETD_KIND_DIRECT)) != 0;
	o->direct = o->policy_direct && gq;
	o->emulated = (w.kinds & (1u << UNETD_KIND_EMULATED)) && (all & ~gq);
	ok = o->direct || o->emulated;
	check(dr, ok ? CHK_OK : bad, "policy",
	      ok ? NULL : "unetd --grant-queues MASK (direct), or a queue left for emulated endpoints",
	      "unetd grants uid %u (gid %u, groups %s) on %s: kinds %s%s%s, tags %s, udp %s, %s "
	      "(holds %u), segment %s, share %u (%s); queues set aside for direct grants: %#x%s",
	      w.uid, w.gid, w.ngids ? gids : "none", dr->ifname,
	      (w.kinds & (1u << UNETD_KIND_EMULATED)) ? "emulated" : "",
	      (w.kinds & (1u << UNETD_KIND_EMULATED)) && o->policy_direct ? "," : "",
	      o->policy_direct ? "direct" : "", w.tags, w.udp, quota, w.endpoints_held, seg,
	      w.share, w.rule, gq,
	      o->policy_direct && !gq ? " (none: unetd cannot grant a direct endpoint)"
	      : !(all & ~gq)	      ? " (all: no emulated endpoints here)"
				      : "");
}

static int do_doctor(const struct cmd *c, int argc, char **argv)
{
	struct doctor dr = { .euid = geteuid() };
	bool iface_ok = true, direct = true, emulated, native = true, zc = false, granted = false;
	struct daemon_offer o = { 0 };
	const char *mode = "unknown";
	char *pos[1], why[800];
	int n, r, ifindex = 0;

	r = parse_args(c, argc, argv, NULL, pos, 0, 1, &n);
	if (r)
		return r < 0;
	dr.ifname = n ? pos[0] : NULL;
	if (dr.ifname && strlen(dr.ifname) >= IF_NAMESIZE)
		return fail("invalid interface name: %s", dr.ifname);

	em_open(NULL, EM_ROWS);
	if (dr.ifname)
		em_str("ifname", dr.ifname);
	em_u64("euid", dr.euid);
	em_open_array("checks");
	if (dr.ifname) {
		ifindex = (int)if_nametoindex(dr.ifname);
		iface_ok = ifindex > 0;
		if (iface_ok)
			check(&dr, CHK_OK, "interface", NULL, "%s (ifindex %d)", dr.ifname, ifindex);
		else
			check(&dr, CHK_FAIL, "interface", "name one of ip link's interfaces",
			      "no interface %s in this network namespace", dr.ifname);
	}
	if (dr.euid == 0 && have_cap(CAP_SYS_ADMIN_BIT) && have_cap(CAP_NET_RAW_BIT)) {
		check(&dr, CHK_OK, "euid", NULL,
		      "euid 0: the library makes a direct endpoint (its own AF_XDP sockets)");
	} else if (dr.euid == 0) {
		direct = false;
		check(&dr, CHK_FAIL, "euid", "run with root's full capabilities",
		      "euid 0 without CAP_SYS_ADMIN and CAP_NET_RAW: no direct endpoint");
	} else {
		direct = false;
		check(&dr, CHK_WARN, "euid", "run as root, or have unetd's policy grant you direct",
		      "euid %u is not root: only root makes its own direct endpoints (the pins and "
		      "AF_XDP sockets are root's), so the library asks unetd, which grants a direct "
		      "one or serves an emulated one as its policy says",
		      (unsigned)dr.euid);
	}
	direct = doctor_bpffs(&dr) && direct;
	if (dr.ifname && iface_ok)
		direct = doctor_xdp(&dr, ifindex, &native, &mode) && direct;
	doctor_daemon(&dr, direct && dr.euid == 0, &o);
	if (dr.euid == 0) {
		direct = doctor_memlock(&dr, false) && direct;
	} else {
		/* Anyone else asks unetd: a direct grant when the policy has
		 * one for them (auto asks for it), else emulated. */
		granted = o.direct && doctor_memlock(&dr, true);
		direct = granted;
	}
	emulated = o.emulated;
	if (dr.ifname && iface_ok)
		zc = doctor_zerocopy(&dr, native, direct);
	doctor_spin(&dr);
	direct = direct && iface_ok;
	emulated = emulated && iface_ok;
	em_close_array();

	if (direct && granted)
		snprintf(why, sizeof(why),
			 "euid %u is not root: unetd grants a direct endpoint on a queue set aside "
			 "(%s)",
			 (unsigned)dr.euid, o.rule);
	else if (direct)
		snprintf(why, sizeof(why), "euid 0: direct, own AF_XDP sockets%s",
			 dr.ifname ? (native ? ", native XDP" : ", skb XDP") : "");
	else if (emulated && dr.euid == 0)
		snprintf(why, sizeof(why),
			 "not direct (%s); emulated by unetd if asked for (kind "
			 "UNET_ENDPOINT_EMULATED: auto tries direct as root) (%s)",
			 dr.first_fail, o.rule);
	else if (emulated)
		snprintf(why, sizeof(why), "not direct (euid %u is not root, and %s); emulated by unetd (%s)%s",
			 (unsigned)dr.euid,
			 !o.policy_direct ? "the policy grants no direct endpoint"
			 : o.direct	  ? "the grant's locked memory does not fit"
					  : "unetd sets no queue aside for direct grants",
			 dr.ifname ? o.rule : "if the policy grants it",
			 o.policy_direct ? ": ask for UNET_ENDPOINT_EMULATED, auto asks unetd for direct"
					 : "");
	else
		snprintf(why, sizeof(why), "%s", dr.first_fail);
	em_str("endpoint", direct ? "direct" : emulated ? "emulated" : "none");
	if (direct || emulated) {
		em_str("copy", zc ? "zero-copy" : "copy");
		em_str("xdp_mode", mode);
	}
	em_str("reason", why);
	em_close();
	if (!direct && !emulated)
		return fail("uid %u can get no endpoint%s%s: %s", (unsigned)dr.euid,
			    dr.ifname ? " on " : "", dr.ifname ? dr.ifname : "", dr.first_fail);
	return 0;
}

/* ---- Command tables ---------------------------------------------------- */

static int do_group(const struct cmd *c, int argc, char **argv);
static int do_help(const struct cmd *c, int argc, char **argv);

static const struct cmd channel_cmds[] = {
	{ "list", do_channel_list, "[IFACE]",
	  "list channels: tag, peer, endpoint, owner, stale, counters", NULL, "channel list" },
	{ "add", do_channel_add, "IFACE --endpoint ID --tag T --peer MAC --peer-tag P",
	  "bind tag T to live endpoint ID, accepting frames from MAC with tag P", NULL,
	  "channel add" },
	{ "del", do_channel_del, "IFACE TAG", "remove a channel, whoever owns it", NULL,
	  "channel del" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static const struct cmd udp_cmds[] = {
	{ "list", do_udp_list, "[IFACE]",
	  "list UDP ports: address, port, remote filter, endpoint, owner, stale, counters", NULL,
	  "udp list" },
	{ "del", do_udp_del, "IFACE ADDR:PORT",
	  "remove a UDP port, whoever owns it (its datagrams go to the kernel again)", NULL,
	  "udp del" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static const struct cmd tcp_cmds[] = {
	{ "list", do_tcp_list, "[IFACE]",
	  "list TCP ports: address, port, listen or connection, endpoint, owner, stale, counters",
	  NULL, "tcp list" },
	{ "del", do_tcp_del, "IFACE ADDR:PORT",
	  "remove a TCP port, whoever owns it (its segments go to the kernel again)", NULL,
	  "tcp del" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static const struct cmd endpoint_cmds[] = {
	{ "list", do_endpoint_list, "[IFACE]",
	  "list endpoints: slots (kind direct or unetd: owner pid, comm, stale) and the emulated "
	  "ones unetd serves (owner uid, pid)",
	  NULL, "endpoint list" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static const struct cmd daemon_cmds[] = {
	{ "status", do_daemon_status, "",
	  "unetd's state: socket, pid, protocol, clients, refusals, endpoints with their counters "
	  "(no root needed)",
	  NULL, "daemon status" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static const struct cmd cmds[] = {
	{ "attach", do_attach, "IFACE [--mode native|skb|auto]",
	  "load the XDP program, attach it to IFACE and pin it", NULL, "attach" },
	{ "detach", do_detach, "IFACE", "detach the XDP program and remove its pins", NULL,
	  "detach" },
	{ "status", do_status, "[IFACE]",
	  "program, mode, queues, endpoints and channels of IFACE (default: all)", NULL,
	  "status" },
	{ "channel", do_group, "{list|add|del} ...", "channels (default: list)", channel_cmds,
	  "channel" },
	{ "endpoint", do_group, "{list} ...", "endpoints (default: list)", endpoint_cmds,
	  "endpoint" },
	{ "udp", do_group, "{list|del} ...", "UDP/IPv4 ports over U-Net (default: list)",
	  udp_cmds, "udp" },
	{ "tcp", do_group, "{list|del} ...", "TCP/IPv4 ports over U-Net (default: list)",
	  tcp_cmds, "tcp" },
	{ "stats", do_stats, "IFACE", "the XDP program's counters on IFACE", NULL, "stats" },
	{ "reclaim", do_reclaim, "IFACE",
	  "remove endpoints whose owner died, their channels and UDP ports", NULL, "reclaim" },
	{ "fault", do_fault, "IFACE --drop-ppm N",
	  "test hook: drop N per million U-Net frames that would be delivered (0: off)", NULL,
	  "fault" },
	{ "daemon", do_group, "{status}", "unetd, the daemon (default: status)", daemon_cmds,
	  "daemon" },
	{ "doctor", do_doctor, "[IFACE]",
	  "for you: direct or emulated endpoint, copy or zero-copy, native or skb, what is "
	  "missing and how to fix it (no root needed; exit 1: no endpoint)",
	  NULL, "doctor" },
	{ "help", do_help, "", "this help", NULL, "help" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: unetctl [OPTIONS] COMMAND [ARGS]\n"
		   "U-Net on AF_XDP: attach the XDP program, set up channels, watch it.\n\n"
		   "Commands:\n");
	for (const struct cmd *c = cmds; c->name; c++) {
		if (c->sub) {
			for (const struct cmd *s = c->sub; s->name; s++)
				fprintf(f, "  %s %s %s\n      %s\n", c->name, s->name, s->args,
					s->help);
		} else {
			fprintf(f, "  %s%s%s\n      %s\n", c->name, *c->args ? " " : "", c->args,
				c->help);
		}
	}
	fprintf(f, "\n%s\nRun as root (daemon status and doctor: anyone).  unetctl COMMAND --help "
		   "for one command.\n",
		global_opts_help);
}

static int do_help(const struct cmd *c, int argc, char **argv)
{
	(void)c;
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static const struct cmd *find_cmd(const struct cmd *table, const char *name)
{
	for (const struct cmd *c = table; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* "channel ..." / "endpoint ...": the next word picks the command; global
 * options may come first; none means list. */
static int do_group(const struct cmd *c, int argc, char **argv)
{
	const struct cmd *s;
	int i = 0;

	for (; i < argc && argv[i][0] == '-'; i++) {
		int r;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage_cmd(c, stdout);
			return 0;
		}
		r = global_opt(argc, argv, &i);
		if (r < 0)
			return 1;
		if (!r)
			return fail("unknown option: %s (unetctl %s --help)", argv[i], c->full);
	}
	if (i == argc)
		return c->sub[0].fn(&c->sub[0], 0, argv + i);
	if (!strcmp(argv[i], "help")) {
		usage_cmd(c, stdout);
		return 0;
	}
	s = find_cmd(c->sub, argv[i]);
	if (!s)
		return fail("unknown subcommand: %s %s (unetctl %s --help)", c->name, argv[i],
			    c->name);
	return s->fn(s, argc - i - 1, argv + i + 1);
}

/* unetctl --version: the version it was built with, the library's it
 * runs with (they differ when unetctl links the shared library), and the
 * JSON schema's. */
static int print_version(void)
{
	em_open(NULL, EM_LINE);
	em_str("unetctl", UNET_VERSION_STRING);
	em_str("library", unet_version_string());
	if (!g.json)
		em_u64("json_schema", UNETCTL_JSON_SCHEMA);
	em_close();
	return 0;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	bool version = false;
	int i = 1, r;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			version = true;
			continue;
		}
		r = global_opt(argc, argv, &i);
		if (r < 0)
			return 1;
		if (!r)
			return fail("unknown option: %s (unetctl --help)", argv[i]);
	}
	if (version) {
		if (i < argc)
			return fail("--version takes no command (unetctl --help)");
		return print_version();
	}
	if (i == argc) {
		usage(stderr);
		return 1;
	}
	c = find_cmd(cmds, argv[i]);
	if (!c)
		return fail("unknown subcommand: %s (unetctl --help)", argv[i]);
	unet_set_log_fn(log_cb, NULL);
	r = c->fn(c, argc - i - 1, argv + i + 1);
	fflush(stdout);
	return r ? 1 : 0;
}
