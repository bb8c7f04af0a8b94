/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of unet-run's parts that need no network (run/): the
 * preload library's descriptor table, address choice and settings, the
 * launcher's command line, library search and LD_PRELOAD, and the names
 * of the socket listing's files. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "config.h"
#include "fdtab.h"
#include "options.h"
#include "route.h"
#include "run_sockets.h"

/* ---- the descriptor table ---- */

static void fdtab_set_get_take(void **state)
{
	static struct fdtab t = FDTAB_INIT;
	int a, b, c;
	void *old = &a;

	(void)state;
	assert_null(fdtab_get(&t, 0));
	assert_null(fdtab_get(&t, 5000));
	assert_int_equal(fdtab_set(&t, 3, &a, &old), 0);
	assert_null(old);
	assert_ptr_equal(fdtab_get(&t, 3), &a);
	assert_null(fdtab_get(&t, 4));
	/* Replacing hands back what was there. */
	assert_int_equal(fdtab_set(&t, 3, &b, &old), 0);
	assert_ptr_equal(old, &a);
	/* Another page, and the last descriptor the table can hold. */
	assert_int_equal(fdtab_set(&t, 70000, &c, &old), 0);
	assert_int_equal(fdtab_set(&t, FDTAB_MAX_FD - 1, &a, &old), 0);
	assert_ptr_equal(fdtab_get(&t, 70000), &c);
	assert_ptr_equal(fdtab_get(&t, FDTAB_MAX_FD - 1), &a);
	assert_ptr_equal(fdtab_take(&t, 3), &b);
	assert_null(fdtab_get(&t, 3));
	assert_null(fdtab_take(&t, 3));
	assert_ptr_equal(fdtab_take(&t, 70000), &c);
	fdtab_free(&t);
	assert_null(fdtab_get(&t, FDTAB_MAX_FD - 1));
}

static void fdtab_out_of_range(void **state)
{
	static struct fdtab t = FDTAB_INIT;
	int a;
	void *old;

	(void)state;
	assert_int_equal(fdtab_set(&t, -1, &a, &old), -EBADF);
	assert_int_equal(fdtab_set(&t, FDTAB_MAX_FD, &a, &old), -EBADF);
	assert_int_equal(fdtab_set(&t, 1, NULL, &old), -EBADF);
	assert_null(fdtab_get(&t, -1));
	assert_null(fdtab_get(&t, FDTAB_MAX_FD));
	assert_null(fdtab_get(&t, -2147483647 - 1));
	assert_null(fdtab_take(&t, -5));
	fdtab_free(&t);
}

/* ---- address choice ---- */

static void iface_lists(void **state)
{
	(void)state;
	assert_true(route_iface_listed("eth0", "eth0"));
	assert_true(route_iface_listed("eth0,veth1", "veth1"));
	assert_true(route_iface_listed(",,veth1,", "veth1"));
	assert_false(route_iface_listed("eth0,veth1", "eth"));
	assert_false(route_iface_listed("eth0,veth1", "veth10"));
	assert_false(route_iface_listed("", "eth0"));
	assert_false(route_iface_listed(NULL, "eth0"));
	assert_false(route_iface_listed("eth0", ""));
}

static void loopback(void **state)
{
	(void)state;
	assert_true(route_is_loopback(inet_addr("127.0.0.1")));
	assert_true(route_is_loopback(inet_addr("127.255.1.2")));
	assert_false(route_is_loopback(inet_addr("128.0.0.1")));
	assert_false(route_is_loopback(inet_addr("10.0.0.127")));
	assert_false(route_is_loopback(0));
}

static void addr_to_iface(void **state)
{
	struct sockaddr_in a1 = { .sin_family = AF_INET }, a2 = { .sin_family = AF_INET };
	struct sockaddr_in6 six = { .sin6_family = AF_INET6 };
	struct ifaddrs i3 = { .ifa_name = (char *)"veth-b", .ifa_addr = (struct sockaddr *)&a2 };
	struct ifaddrs i2 = { .ifa_next = &i3, .ifa_name = (char *)"veth-a",
			      .ifa_addr = (struct sockaddr *)&six };
	struct ifaddrs i1 = { .ifa_next = &i2, .ifa_name = (char *)"lo",
			      .ifa_addr = (struct sockaddr *)&a1 };
	struct ifaddrs i0 = { .ifa_next = &i1, .ifa_name = (char *)"noaddr" };
	char name[IF_NAMESIZE];

	(void)state;
	a1.sin_addr.s_addr = inet_addr("127.0.0.1");
	a2.sin_addr.s_addr = inet_addr("10.201.0.1");
	assert_int_equal(route_iface_of_addr(&i0, inet_addr("10.201.0.1"), name), 0);
	assert_string_equal(name, "veth-b");
	assert_int_equal(route_iface_of_addr(&i0, inet_addr("127.0.0.1"), name), 0);
	assert_string_equal(name, "lo");
	assert_int_equal(route_iface_of_addr(&i0, inet_addr("10.201.0.2"), name), -ENOENT);
	assert_int_equal(route_iface_of_addr(NULL, inet_addr("10.201.0.1"), name), -ENOENT);
}

/* ---- the preload library's settings ---- */

static void config_defaults_and_values(void **state)
{
	char name[IF_NAMESIZE];
	struct run_config c;
	char err[256];

	(void)state;
	run_config_parse(&c, NULL, NULL, NULL, NULL, NULL, err, sizeof(err));
	assert_string_equal(err, "");
	assert_string_equal(c.ifaces, "");
	assert_string_equal(c.log, "");
	assert_string_equal(c.pin_root, "/sys/fs/bpf/unet");
	assert_int_equal(c.spin_us, RUN_SPIN_US_DEFAULT);
	assert_false(c.batch_sends);
	run_config_parse(&c, NULL, NULL, NULL, "1", NULL, err, sizeof(err));
	assert_string_equal(err, "");
	assert_true(c.batch_sends);
	run_config_parse(&c, NULL, NULL, NULL, "0", NULL, err, sizeof(err));
	assert_string_equal(err, "");
	assert_false(c.batch_sends);

	run_config_parse(&c, "veth-a,eth1", "/tmp/x.log", "0", NULL, "/run/pins", err, sizeof(err));
	assert_string_equal(err, "");
	assert_string_equal(c.ifaces, "veth-a,eth1");
	assert_string_equal(c.log, "/tmp/x.log");
	assert_string_equal(c.pin_root, "/run/pins");
	assert_int_equal(c.spin_us, 0);
	assert_true(run_config_serves(&c, "eth1"));
	assert_false(run_config_serves(&c, "eth"));
	assert_true(run_config_any(&c, name));
	assert_string_equal(name, "veth-a");
	run_config_parse(&c, ",eth2,x", NULL, NULL, NULL, NULL, err, sizeof(err));
	assert_true(run_config_any(&c, name));
	assert_string_equal(name, "eth2");

	run_config_parse(&c, NULL, NULL, "1000000", NULL, "", err, sizeof(err));
	assert_string_equal(err, "");
	assert_int_equal(c.spin_us, 1000000);
	assert_string_equal(c.pin_root, "/sys/fs/bpf/unet");
}

static void config_bad_values(void **state)
{
	const char *bad[] = { "-1", "abc", "12x", "1000001", "99999999999999999999999" };
	char longlist[2000];
	struct run_config c;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run_config_parse(&c, NULL, NULL, bad[i], NULL, NULL, err, sizeof(err));
		assert_int_equal(c.spin_us, RUN_SPIN_US_DEFAULT);
		assert_non_null(strstr(err, "UNET_RUN_SPIN_US"));
	}
	for (size_t i = 0; i < 3; i++) {
		const char *b[] = { "yes", "2", "1 " };

		run_config_parse(&c, NULL, NULL, NULL, b[i], NULL, err, sizeof(err));
		assert_false(c.batch_sends);
		assert_non_null(strstr(err, "UNET_RUN_BATCH_SENDS"));
	}
	memset(longlist, 'a', sizeof(longlist) - 1);
	longlist[sizeof(longlist) - 1] = '\0';
	run_config_parse(&c, longlist, NULL, NULL, NULL, NULL, err, sizeof(err));
	assert_string_equal(c.ifaces, "");
	assert_non_null(strstr(err, "UNET_RUN_IFACE"));
}

/* A pinned object named "link" at path (what an attached program's link
 * pin is, as far as a lookup can tell): a small map.  0 or -1. */
static int pin_object(const char *path)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL), r;

	if (fd < 0)
		return -1;
	r = bpf_obj_pin(fd, path);
	close(fd);
	return r;
}

/* The pin root must be a bpffs (the library refuses any other): one of
 * our own, mounted for the test (root only; skipped otherwise). */
static void config_attached(void **state)
{
	char dir[] = "/tmp/unet-run-test.XXXXXX", path[PATH_MAX], other[PATH_MAX + 8], err[256],
	     name[IF_NAMESIZE];
	struct run_config c;
	struct stat ns;

	(void)state;
	assert_non_null(mkdtemp(dir));
	if (mount("bpf", dir, "bpf", 0, "mode=0700")) {
		rmdir(dir);
		skip(); /* not root: no bpffs of our own */
	}
	run_config_parse(&c, NULL, NULL, NULL, NULL, dir, err, sizeof(err));
	assert_false(run_config_any(&c, name));
	assert_int_equal(stat("/proc/thread-self/ns/net", &ns), 0);
	/* Another namespace's device of the same name, attached: not ours. */
	snprintf(path, sizeof(path), "%s/veth-x@%llu", dir, (unsigned long long)ns.st_ino + 1);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(other, sizeof(other), "%s/link", path);
	assert_int_equal(pin_object(other), 0);
	assert_false(run_config_serves(&c, "veth-x"));
	assert_false(run_config_any(&c, name));
	snprintf(path, sizeof(path), "%s/veth-x@%llu", dir, (unsigned long long)ns.st_ino);
	assert_int_equal(mkdir(path, 0700), 0);
	/* A directory without the program's link is not attached. */
	assert_false(run_config_serves(&c, "veth-x"));
	assert_false(run_config_any(&c, name));
	snprintf(path, sizeof(path), "%s/veth-x@%llu/link", dir, (unsigned long long)ns.st_ino);
	assert_int_equal(pin_object(path), 0);
	assert_true(run_config_serves(&c, "veth-x"));
	assert_false(run_config_serves(&c, "veth-y"));
	assert_false(run_config_serves(&c, "../veth-x")); /* not a device name */
	assert_true(run_config_any(&c, name));
	assert_string_equal(name, "veth-x");
	assert_int_equal(umount(dir), 0); /* the pins go with the mount */
	rmdir(dir);
}

/* ---- the launcher ---- */

static int parse(struct run_opts *o, char *err, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;

	argv[argc++] = (char *)"unet-run";
	va_start(ap, err);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	return run_opts_parse(o, argc, argv, err, 256);
}

static void opts_good(void **state)
{
	struct run_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, "prog", NULL), 0);
	assert_int_equal(o.prog, 1);
	assert_string_equal(o.iface, "");
	assert_null(o.log);
	assert_null(o.spin_us);
	assert_false(o.batch_sends);

	assert_int_equal(parse(&o, err, "--iface", "a", "--iface=b,c", "--log", "/tmp/l",
			       "--spin-us=20", "--batch-sends", "prog", "--iface", "x", NULL),
			 0);
	assert_int_equal(o.prog, 8);
	assert_true(o.batch_sends);
	assert_string_equal(o.iface, "a,b,c");
	assert_string_equal(o.log, "/tmp/l");
	assert_string_equal(o.spin_us, "20");

	/* "--" ends the options, even before a name starting with '-'. */
	assert_int_equal(parse(&o, err, "--log=stderr", "--", "-prog", NULL), 0);
	assert_int_equal(o.prog, 3);
	assert_int_equal(parse(&o, err, "--help", NULL), 0);
	assert_true(o.help);
	assert_int_equal(parse(&o, err, "--version", "x", NULL), 0);
	assert_true(o.version);
}

static void opts_bad(void **state)
{
	struct run_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, NULL), -1);
	assert_non_null(strstr(err, "no program"));
	assert_int_equal(parse(&o, err, "--iface", "a", NULL), -1);
	assert_non_null(strstr(err, "no program"));
	assert_int_equal(parse(&o, err, "--iface", NULL), -1);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(parse(&o, err, "--iface=", "p", NULL), -1);
	assert_int_equal(parse(&o, err, "--iface=a b", "p", NULL), -1);
	assert_int_equal(parse(&o, err, "--log=", "p", NULL), -1);
	assert_int_equal(parse(&o, err, "--spin-us", "-3", "p", NULL), -1);
	assert_int_equal(parse(&o, err, "--spin-us", "1000001", "p", NULL), -1);
	assert_int_equal(parse(&o, err, "--spin-us", "", "p", NULL), -1);
	assert_int_equal(parse(&o, err, "--frobnicate", "p", NULL), -1);
	assert_non_null(strstr(err, "unknown option"));
	assert_int_equal(parse(&o, err, "--ifaces", "a", "p", NULL), -1);
}

static void preload_search(void **state)
{
	char out[3][PATH_MAX];

	(void)state;
	assert_int_equal(run_preload_candidates("/usr/bin/unet-run", "../lib/x86_64-linux-gnu/unet-xdp",
						out, 3),
			 3);
	assert_string_equal(out[0], "/usr/bin/../lib/x86_64-linux-gnu/unet-xdp/libunet-preload.so");
	assert_string_equal(out[1], "/usr/bin/../lib/unet-xdp/libunet-preload.so");
	assert_string_equal(out[2], "/usr/bin/./libunet-preload.so");
	/* The built-in place equal to the default is looked at once. */
	assert_int_equal(run_preload_candidates("/opt/unet/bin/unet-run", "../lib/unet-xdp", out, 3), 2);
	assert_string_equal(out[0], "/opt/unet/bin/../lib/unet-xdp/libunet-preload.so");
	assert_string_equal(out[1], "/opt/unet/bin/./libunet-preload.so");
	assert_int_equal(run_preload_candidates("/unet-run", NULL, out, 3), 2);
	assert_string_equal(out[0], "/../lib/unet-xdp/libunet-preload.so");
	assert_string_equal(out[1], "/./libunet-preload.so");
	assert_int_equal(run_preload_candidates("unet-run", "", out, 3), 0);
	assert_int_equal(run_preload_candidates("/a/unet-run", "x", out, 1), 1);
	assert_string_equal(out[0], "/a/x/libunet-preload.so");
}

static void preload_env(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(run_preload_env(NULL, "/l/p.so", out, sizeof(out)), 0);
	assert_string_equal(out, "/l/p.so");
	assert_int_equal(run_preload_env("", "/l/p.so", out, sizeof(out)), 0);
	assert_string_equal(out, "/l/p.so");
	/* The user's preloads (a sanitizer runtime) stay first. */
	assert_int_equal(run_preload_env("libasan.so.8", "/l/p.so", out, sizeof(out)), 0);
	assert_string_equal(out, "libasan.so.8 /l/p.so");
	assert_int_equal(run_preload_env("a.so:/l/p.so", "/l/p.so", out, sizeof(out)), 0);
	assert_string_equal(out, "a.so:/l/p.so");
	assert_int_equal(run_preload_env("/l/p.so.1", "/l/p.so", out, sizeof(out)), 0);
	assert_string_equal(out, "/l/p.so.1 /l/p.so");
	assert_int_equal(run_preload_env("x", "/l/p.so", out, 8), -1);
}

/* ---- the socket listing's file names ---- */

static void socket_file_names(void **state)
{
	static const char *const bad[] = {
		"", ".", "..", "0", "00", "01", "007", " 7", "7 ", "+7", "-7", "7.", ".7",
		"7.0", "7.01", "7.-1", "7.+1", "7. 1", "7.1.2", "7..1", "7x", "x7", "2147483648",
		"99999999999", "7.4294967296", "7.99999999999", "0x7",
	};
	char name[RUN_SOCKETS_NAME_MAX];
	uint32_t alt = 99;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(run_sockets_name_parse(bad[i], &alt), -1);
	assert_int_equal(run_sockets_name_parse("7", &alt), 7);
	assert_int_equal(alt, 0);
	assert_int_equal(run_sockets_name_parse("4711.3141592653", &alt), 4711);
	assert_int_equal(alt, 3141592653u);
	assert_int_equal(run_sockets_name_parse("2147483647.4294967295", &alt), INT32_MAX);
	assert_int_equal(alt, UINT32_MAX);
	run_sockets_name(name, INT32_MAX, UINT32_MAX);
	assert_string_equal(name, "2147483647.4294967295");
	run_sockets_name(name, 10, 0);
	assert_string_equal(name, "10");
}

/* Seeded: a name read back is the one name its pid and N are written as
 * (so one file cannot be listed under two names of one process), and
 * every name written reads back. */
static void socket_file_names_fuzz(void **state)
{
	static const char alphabet[] = "0123456789012345678901234.. +-x";
	unsigned int seed = 20261127;
	char s[16], name[RUN_SOCKETS_NAME_MAX];
	int accepted = 0;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		size_t len = (size_t)(rand_r(&seed) % 14);
		int32_t pid;
		uint32_t alt;

		for (size_t j = 0; j < len; j++)
			s[j] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		s[len] = 0;
		pid = run_sockets_name_parse(s, &alt);
		if (pid < 0)
			continue;
		accepted++;
		assert_true(pid >= 1);
		run_sockets_name(name, pid, alt);
		assert_string_equal(name, s);
	}
	assert_true(accepted > 1000); /* the strings did hit names */
	for (int i = 0; i < 100000; i++) {
		int32_t pid = (int32_t)((uint32_t)rand_r(&seed) % INT32_MAX) + 1, back;
		uint32_t alt = i % 2 ? (uint32_t)rand_r(&seed) * 2u + (uint32_t)(i % 3) : 0, got;

		run_sockets_name(name, pid, alt);
		back = run_sockets_name_parse(name, &got);
		assert_int_equal(back, pid);
		assert_int_equal(got, alt);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fdtab_set_get_take),
		cmocka_unit_test(fdtab_out_of_range),
		cmocka_unit_test(iface_lists),
		cmocka_unit_test(loopback),
		cmocka_unit_test(addr_to_iface),
		cmocka_unit_test(config_defaults_and_values),
		cmocka_unit_test(config_bad_values),
		cmocka_unit_test(config_attached),
		cmocka_unit_test(opts_good),
		cmocka_unit_test(opts_bad),
		cmocka_unit_test(preload_search),
		cmocka_unit_test(preload_env),
		cmocka_unit_test(socket_file_names),
		cmocka_unit_test(socket_file_names_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
