/* SPDX-License-Identifier: BSD-2-Clause */
/* common.c - what every unetctl command uses: its one-line errors, the
 * pin root, the library's log, argument parsing, opening interfaces. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unetctl.h"

/* The global options: main.c fills them in, every file reads them. */
struct unetctl_opts ctl;

/* ---- Errors ----------------------------------------------------------- */

int fail(const char *fmt, ...)
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

const char *pin_root(void)
{
	const char *env = getenv("UNET_PIN_ROOT");

	if (ctl.pin_root_opt && *ctl.pin_root_opt)
		return ctl.pin_root_opt;
	if (env && *env)
		return env;
	return DEFAULT_PIN_ROOT;
}

struct unet_iface_opts iface_opts(void)
{
	UNET_OPTS_INIT(unet_iface_opts, o);

	o.pin_root = pin_root();
	return o;
}

/* The last error the library logged (it names the path or the check that
 * failed): the one-line error of a failed command carries it. */
char last_lib_err[512];

void log_cb(enum unet_log_level level, const char *msg, void *ctx)
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
	if (ctl.verbose == 0 || (level == UNET_LOG_DEBUG && ctl.verbose < 2))
		return;
	fprintf(stderr, "unetctl: lib %s: %s\n", level <= UNET_LOG_DEBUG ? names[level] : "?",
		msg);
}

/* Whether this process has capability cap in its effective set. */
bool have_cap(unsigned int cap)
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

/* The one-line message for a library error about ifname ("" for none):
 * what the error means here, and the library's last logged error where it
 * says more (which path, which check). */
int fail_iface(int err, const char *ifname)
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
int require_root(void)
{
	if (geteuid() != 0)
		return fail("needs root: the pins under %s are root's, mode 0600 (capabilities "
			    "without uid 0 are not enough)",
			    pin_root());
	return 0;
}

const char global_opts_help[] =
	"Global options (before or after the command):\n"
	"  -j, --json          JSON output\n"
	"  --pin-root PATH     where pins live (default $UNET_PIN_ROOT, else " DEFAULT_PIN_ROOT
	")\n"
	"  --socket PATH       unetd's socket (default $" UNETD_SOCKET_ENV ", else " UNETD_DEFAULT_SOCKET
	")\n"
	"  -v, --verbose       show the library's log on stderr (-vv: with debug)\n"
	"  -h, --help          this help\n"
	"  -V, --version       unetctl's and the library's version\n";

void usage_cmd(const struct cmd *c, FILE *f)
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
int global_opt(int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
		ctl.json = true;
		return 1;
	}
	if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
		ctl.verbose++;
		return 1;
	}
	if (!strcmp(a, "-vv")) {
		ctl.verbose += 2;
		return 1;
	}
	if (!strncmp(a, "--pin-root=", 11)) {
		ctl.pin_root_opt = a + 11;
		return 1;
	}
	if (!strcmp(a, "--pin-root")) {
		if (*i + 1 >= argc) {
			fail("--pin-root needs a PATH");
			return -1;
		}
		ctl.pin_root_opt = argv[++*i];
		return 1;
	}
	if (!strncmp(a, "--socket=", 9)) {
		ctl.socket_opt = a + 9;
		return 1;
	}
	if (!strcmp(a, "--socket")) {
		if (*i + 1 >= argc) {
			fail("--socket needs a PATH");
			return -1;
		}
		ctl.socket_opt = argv[++*i];
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
int parse_args(const struct cmd *c, int argc, char **argv, const struct optdef *defs,
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

/* The start of a command that needs root: its arguments (parse_args),
 * then require_root.  Returns true when the command ends here, with exit
 * status *status (0 after --help, 1 after an error, already printed). */
bool root_cmd_start(const struct cmd *c, int argc, char **argv, const struct optdef *defs,
		    char **pos, int minpos, int maxpos, int *npos, int *status)
{
	int r = parse_args(c, argc, argv, defs, pos, minpos, maxpos, npos);

	*status = r < 0 || (!r && require_root());
	return r || *status;
}

/* Decimal in [min, max]. Returns 0 or -1. */
int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
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

int parse_tag(const char *what, const char *s, uint16_t *tag)
{
	unsigned long v;

	if (parse_uint(s, 1, UINT16_MAX, &v))
		return fail("invalid %s: %s (1..65535)", what, s ? s : "(none)");
	*tag = (uint16_t)v;
	return 0;
}

const char *mode_name(enum unet_xdp_mode m, bool alive)
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

/* Open ifname, or report why not.  NULL after printing the error. */
struct unet_iface *open_iface(const char *ifname)
{
	struct unet_iface_opts opts = iface_opts();
	struct unet_iface *iface;

	iface = unet_iface__open(ifname, &opts);
	if (!iface)
		fail_iface(errno, ifname);
	return iface;
}

int collect_name(const char *ifname, void *ctx)
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

void free_names(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

int all_ifaces(struct names *ns)
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
