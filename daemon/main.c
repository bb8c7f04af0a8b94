/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unetd - the operating system's half of U-Net: owns the interfaces' XDP
 * program, pinned maps and real AF_XDP sockets, and serves endpoints to
 * processes that may not touch any of those (docs/unetd.md).
 *
 *   unetd [--foreground] [--socket PATH] [--policy FILE] [--pin-root DIR]
 *         [--subuid FILE] [--spin-us N] [--grant-queues MASK] [--verbose]
 *
 * One thread: an epoll loop over the listening socket, the clients'
 * connections, the emulated endpoints' kick eventfds and the real
 * endpoints' sockets.  While frames flow it polls without sleeping, and
 * for --spin-us after the last work, so that a reply that comes quickly
 * costs no wake-up; then it asks clients to kick it and sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/clock.h"
#include "unetd.h"

#define DEFAULT_POLICY "/etc/unet/unetd.policy"
#define DEFAULT_SUBUID "/etc/subuid"
#define DEFAULT_SPIN_US 200
/* Fewer CPUs than this: the daemon does not spin unless told to.  A
 * spinning client, the daemon and the client's peer are three processes
 * that each want a CPU while a message is in flight; on fewer CPUs a
 * spinning daemon takes the CPU the one it waits for needs, and every
 * round trip waits out a time slice (8 ms measured on 2 vCPUs, against
 * 22 us without the spin). */
#define SPIN_MIN_CPUS 3
#define BUSY_PASSES 16

static struct unetd daemon_state;

static void lib_log(enum unet_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	unetd_log((int)level, "libunet: %s", msg);
}

static void on_signal(int sig)
{
	(void)sig;
	daemon_state.stop = 1;
}

static uint64_t now_us(void)
{
	return unet_mono_ns() / 1000u;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: unetd [--foreground] [--socket PATH] [--policy FILE] [--pin-root DIR]\n"
		   "             [--subuid FILE] [--grant-queues MASK] [--max-tcp-ports N]\n"
		   "             [--spin-us N] [--verbose]\n"
		   "  --socket    where clients connect (default $%s, else %s)\n"
		   "  --policy    who may do what (default %s if it exists, else the built-in\n"
		   "              default: root everything, group unet emulated endpoints)\n"
		   "  --pin-root  bpffs directory for the interfaces' pins (as unetctl)\n"
		   "  --subuid    subordinate uid ranges, owner:start:count (default %s;\n"
		   "              'none': none): their uids' budgets are their owners'\n"
		   "  --spin-us   poll this long after the last frame before sleeping (default\n"
		   "              %d, or 0 when the daemon may run on fewer than %d CPUs)\n"
		   "  --grant-queues MASK  device queues set aside for direct-access grants\n"
		   "              (default 0: none; the others serve emulated endpoints)\n"
		   "  --max-tcp-ports N  TCP ports all clients may hold together (default %d,\n"
		   "              3/4 of an interface's table; one user: at most %d)\n",
		UNETD_SOCKET_ENV, UNETD_DEFAULT_SOCKET, DEFAULT_POLICY, DEFAULT_SUBUID, DEFAULT_SPIN_US,
		SPIN_MIN_CPUS,
		UNETD_MAX_TCP_PORTS_DEFAULT, UNETD_MAX_TCP_PORTS_PER_USER);
}

static int load_policy(struct unetd *d, const char *path)
{
	char err[256];
	int r;

	if (!path && access(DEFAULT_POLICY, F_OK))
		return unetd_policy_default(&d->policy);
	r = unetd_policy_load(path ? path : DEFAULT_POLICY, &d->policy, err, sizeof(err));
	if (r)
		fprintf(stderr, "unetd: %s\n", err);
	return r;
}

static void handle(struct unetd *d, struct unetd_src *s)
{
	/* Freed by an earlier event of the same batch (a request that
	 * reaped closed clients, a client whose endpoints went with it). */
	if (s->dead)
		return;
	switch (s->kind) {
	case UNETD_SRC_LISTEN:
		unetd_server_accept(d);
		break;
	case UNETD_SRC_CLIENT:
		if (!unetd_server_serve(d, s->obj))
			unetd_client_free(d, s->obj);
		break;
	case UNETD_SRC_KICK: {
		struct unetd_emul *e = s->obj;
		uint64_t v;

		if (read(e->kick_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			unetd_log(UNET_LOG_DEBUG, "kick: %s", strerror(errno));
		break;
	}
	case UNETD_SRC_REAL:
		break; /* the data plane polls it */
	}
}

static void run(struct unetd *d)
{
	struct epoll_event evs[64];
	uint64_t last_work = now_us();
	unsigned int busy = 0;

	while (!d->stop) {
		int work = unetd_dataplane_poll(d), n, timeout = 0;

		/* While frames flow, a pass of the data plane is a few frames
		 * (a round of fair service): look at the sockets only every
		 * BUSY_PASSES passes, not at the cost of a system call each.
		 * Nothing waits on it: clients do not kick a daemon that is
		 * not asleep, and requests can wait some microseconds. */
		if (work) {
			last_work = now_us();
			if (++busy % BUSY_PASSES)
				continue;
		} else if (now_us() - last_work >= d->spin_us) {
			/* Idle: clients must kick us from now on. */
			if (unetd_dataplane_arm(d))
				timeout = 0;
			else
				timeout = 1000;
		}
		/* Granted sockets a gone client may still hold: look at them
		 * a few times a second. */
		if (d->lingering) {
			uint64_t t = now_us() * 1000;

			if (t - d->linger_checked_ns >= 200000000u) {
				d->linger_checked_ns = t;
				unetd_direct_reap(d);
			}
			if (d->lingering && (timeout < 0 || timeout > 200))
				timeout = 200;
		}
		/* Requests waiting for their user's budget: look again soon. */
		if (d->nthrottled && unetd_server_unthrottle(d) && (timeout < 0 || timeout > 5))
			timeout = 5;
		/* Users' log lines left out: each said in a summary within a
		 * second or so, also when the user has gone quiet. */
		if (now_us() - d->log_flushed_us >= 100000u) {
			d->log_flushed_us = now_us();
			d->log_pending = unetd_server_log_flush(d);
		}
		if (d->log_pending && (timeout < 0 || timeout > 200))
			timeout = 200;
		n = epoll_wait(d->epoll_fd, evs, 64, timeout);
		/* Spinning, but on a machine with few CPUs a client or its peer
		 * may need this one: let them run first. */
		if (!timeout && !work && !n)
			sched_yield();
		if (timeout)
			unetd_dataplane_disarm(d);
		for (int i = 0; i < n; i++)
			handle(d, evs[i].data.ptr);
		unetd_free_dead(d);
		if (n > 0)
			last_work = now_us();
	}
}

/* Every port a client holds is a kernel socket of ours and every client
 * a connection: at systemd's default soft limit (1024) one user's ports
 * left no descriptor for anyone else's connection.  The hard limit is
 * what the administrator allows; the per-user bounds (quota.c, tcp.c)
 * keep each user's share of it. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		unetd_log(UNET_LOG_WARN, "cannot raise the open-file limit: %s", strerror(errno));
	else
		unetd_log(UNET_LOG_INFO, "open-file limit %llu", (unsigned long long)rl.rlim_cur);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' }, { "socket", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' }, { "pin-root", required_argument, NULL, 'r' },
		{ "spin-us", required_argument, NULL, 'u' }, { "verbose", no_argument, NULL, 'v' },
		{ "grant-queues", required_argument, NULL, 'g' },
		{ "max-tcp-ports", required_argument, NULL, 't' },
		{ "subuid", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },	   { NULL, 0, NULL, 0 },
	};
	struct unetd *d = &daemon_state;
	const char *policy = NULL, *subuid = DEFAULT_SUBUID, *env;
	struct sigaction sa = { .sa_handler = on_signal };
	bool foreground = false, spin_set = false;
	int c;

	d->socket_path = (env = getenv(UNETD_SOCKET_ENV)) && *env ? env : UNETD_DEFAULT_SOCKET;
	d->spin_us = DEFAULT_SPIN_US;
	d->max_tcp_ports = UNETD_MAX_TCP_PORTS_DEFAULT;
	while ((c = getopt_long(argc, argv, "fs:p:r:u:g:t:S:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			foreground = true;
			break;
		case 's':
			d->socket_path = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'r':
			d->pin_root = optarg;
			break;
		case 'S':
			subuid = optarg;
			break;
		case 'u':
			d->spin_us = (uint32_t)strtoul(optarg, NULL, 10);
			spin_set = true;
			break;
		case 'g':
			d->grant_queues = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (*optarg < '0' || *optarg > '9' || *end || n < 1 || n > UNET_MAX_TCP_PORTS) {
				fprintf(stderr, "unetd: --max-tcp-ports takes 1..%u, not '%s'\n",
					UNET_MAX_TCP_PORTS, optarg);
				return 2;
			}
			d->max_tcp_ports = (uint32_t)n;
			break;
		}
		case 'v':
			unetd_log_level = UNET_LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "unetd: must run as root (it owns the XDP program and the pins)\n");
		return 1;
	}
	unet_set_log_fn(lib_log, NULL);
	if (load_policy(d, policy))
		return 1;
	/* Read once, at the start (the daemon has no reload: a changed
	 * file takes a restart). */
	if (unetd_subid_load(subuid, &d->subids))
		return 1;
	d->own_netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (d->own_netns_fd < 0 || unetd_netns_check(d->own_netns_fd, &d->own_netns)) {
		perror("unetd: /proc/self/ns/net");
		return 1;
	}
	unetd_emul_register(d);
	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epoll_fd < 0 || unetd_server_open(d))
		return 1;
	if (!foreground && daemon(0, 0)) {
		perror("unetd: daemon");
		return 1;
	}
	/* After daemon(): a thread does not survive its fork. */
	if (unetd_closer_start()) {
		fprintf(stderr, "unetd: cannot start the closer thread\n");
		return 1;
	}
	if (unetd_teardown_start(d)) {
		fprintf(stderr, "unetd: cannot start the teardown thread\n");
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	if (!spin_set) {
		cpu_set_t cpus;
		int n = sched_getaffinity(0, sizeof(cpus), &cpus) ? 0 : CPU_COUNT(&cpus);

		if (n && n < SPIN_MIN_CPUS) {
			d->spin_us = 0;
			unetd_log(UNET_LOG_INFO,
				  "spin 0 us: %d CPUs (a spinning daemon would take the CPU its clients and their peers need; --spin-us sets it)",
				  n);
		}
	}
	unetd_log(UNET_LOG_INFO, "ready (pid %d, spin %u us)", (int)getpid(), d->spin_us);
	run(d);
	while (d->clients)
		unetd_client_free(d, d->clients);
	unetd_direct_drop_lingering(d); /* the daemon goes: it tracks nothing more */
	while (d->users) { /* none left once every client is gone */
		struct unetd_user *u = d->users;

		d->users = u->next;
		unetd_log_user_flush(&u->log, true);
		free(u);
	}
	unetd_log_users_flush(true);
	unetd_iface_free_all(d);
	unetd_free_dead(d);
	/* What the clients' interfaces left to detach in their namespaces. */
	if (!unetd_teardown_drain(5000))
		unetd_log(UNET_LOG_WARN, "teardown: still busy after 5 s: some interfaces not detached");
	unlink(d->socket_path);
	unetd_policy_free(d->policy);
	unetd_subid_free(&d->subids);
	unetd_log(UNET_LOG_INFO, "stopped");
	return 0;
}
