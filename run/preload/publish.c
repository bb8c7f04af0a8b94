/* SPDX-License-Identifier: BSD-2-Clause */
/* publish.c - the process's socket file for `unetctl sockets` (publish.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "publish.h"
#include "signals.h"

static pthread_mutex_t pub_lock = PTHREAD_MUTEX_INITIALIZER;
static struct run_sockets_file *pub;
static int pub_fd = -1;
static bool pub_tried;
static char pub_path[64]; /* the file, to remove at exit */

/* Random names a process tries when its pid's name is another user's
 * file; each is new, so only a collision with a name of the same pid's
 * making fails one. */
#define PUB_ALT_TRIES 4

/* Field 22 of /proc/self/stat: after the command, which ends with the
 * last ')'. */
static uint64_t self_starttime(void)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* ") S ppid ..." : field 3 is the state; 22 is 20 fields on. */
	for (int f = 2; p && f < 22; f++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &v);
	return v;
}

/* The directory: made by root (sticky, writable by all, as /tmp), and
 * trusted only as that: another user's directory could be emptied or
 * filled by them. */
static int check_dir(char *why, size_t n)
{
	struct stat st;

	if (geteuid() == 0 && mkdir(RUN_SOCKETS_DIR, 01777) == 0)
		chmod(RUN_SOCKETS_DIR, 01777); /* the umask took bits */
	if (lstat(RUN_SOCKETS_DIR, &st) < 0) {
		snprintf(why, n, "%s: %s", RUN_SOCKETS_DIR, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 07777) != 01777) {
		snprintf(why, n, "%s is not a root-owned directory of mode 1777", RUN_SOCKETS_DIR);
		return -1;
	}
	return 0;
}

static void pub_atfork_child(void)
{
	/* The file is the parent's: the child neither writes nor frees its
	 * slots (its inherited U-Net sockets are refused), and it does not
	 * keep the parent's lock. */
	if (pub) {
		munmap(pub, sizeof(*pub));
		syscall(SYS_close, pub_fd);
	}
	pub = NULL;
	pub_fd = -1;
	pub_tried = true;
	pthread_mutex_init(&pub_lock, NULL);
}

/* Remove the files our uid's processes left: ours, named for a process
 * that is gone or for ourselves (our image before exec, whose lock went
 * with it), and nobody holding their lock (a process between creating
 * its file and locking it is alive and not us, so skipped). */
static void sweep(void)
{
	DIR *d = opendir(RUN_SOCKETS_DIR);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		uint32_t alt;
		int32_t pid = run_sockets_name_parse(de->d_name, &alt);
		struct stat st;
		int fd;

		if (pid < 0 || (pid != (int32_t)getpid() && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dirfd(d), de->d_name, 0);
		syscall(SYS_close, fd);
	}
	closedir(d);
}

/* A random N for the name PID.N, never 0: a squatter cannot make that
 * name ahead of us. */
static uint32_t alt_number(void)
{
	struct timespec ts;
	uint32_t n;

	if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != (ssize_t)sizeof(n)) {
		/* Only before the kernel's pool is ready: guessable, so a
		 * squatter might still hide us, which costs the listing only. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		n = (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 10);
	}
	return n ? n : 1;
}

static int create_file(const char *path)
{
	return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* Create our file, its path in path: under our pid's name, replacing a
 * file of our own there; when that name is another user's file (a
 * squatter's, or one a killed process of theirs with our pid left), under
 * PID.N with a random N.  The descriptor, or -1 with errno. */
static int pub_create(char *path, size_t n)
{
	char name[RUN_SOCKETS_NAME_MAX];
	bool taken = false;
	struct stat st;
	int fd;

	run_sockets_name(name, (int32_t)getpid(), 0);
	snprintf(path, n, "%s/%s", RUN_SOCKETS_DIR, name);
	fd = create_file(path);
	if (fd < 0 && errno == EEXIST) {
		/* Our uid's (sweep took our image's from before exec
		 * unless it was held): ours to replace. */
		if (lstat(path, &st) == 0 && st.st_uid == geteuid() && unlink(path) == 0)
			fd = create_file(path);
		else
			taken = true;
	}
	for (int tries = 0; fd < 0 && taken && tries < PUB_ALT_TRIES; tries++) {
		run_sockets_name(name, (int32_t)getpid(), alt_number());
		snprintf(path, n, "%s/%s", RUN_SOCKETS_DIR, name);
		fd = create_file(path);
		taken = fd < 0 && errno == EEXIST;
	}
	return fd;
}

/* Make the file; under pub_lock. */
static void pub_open(void)
{
	char *path = pub_path, why[160];
	struct run_sockets_file *f;
	int fd;

	pub_tried = true;
	pthread_atfork(NULL, NULL, pub_atfork_child);
	if (check_dir(why, sizeof(why)) < 0)
		goto fail;
	sweep();
	fd = pub_create(path, sizeof(pub_path));
	if (fd < 0) {
		snprintf(why, sizeof(why), "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (ftruncate(fd, sizeof(*f)) < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		snprintf(why, sizeof(why), "%s: %s", path, strerror(errno));
		goto fail_file;
	}
	f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (f == MAP_FAILED) {
		snprintf(why, sizeof(why), "mmap %s: %s", path, strerror(errno));
		goto fail_file;
	}
	f->version = RUN_SOCKETS_VERSION;
	f->pid = (int32_t)getpid();
	f->uid = (uint32_t)geteuid();
	f->starttime = self_starttime();
	f->nslots = RUN_SOCKETS_SLOTS;
	/* The magic last: a reader never believes a half-made header. */
	atomic_store_explicit((_Atomic uint32_t *)&f->magic, RUN_SOCKETS_MAGIC,
			      memory_order_release);
	pub = f;
	pub_fd = fd;
	return;
fail_file:
	unlink(path);
	syscall(SYS_close, fd);
fail:
	run_log("sockets not listed for unetctl: %s", why);
}

int pub_add(int fd, enum run_sock_kind kind, enum run_sock_state state, uint32_t local_addr,
	    uint16_t local_port, uint32_t peer_addr, uint16_t peer_port)
{
	int slot = -1;

	run_lock(&pub_lock);
	if (!pub_tried)
		pub_open();
	for (unsigned int i = 0; pub && i < RUN_SOCKETS_SLOTS; i++) {
		struct run_sockets_slot *s = &pub->slot[i];
		_Atomic uint32_t *seq = (_Atomic uint32_t *)&s->seq;

		if (s->kind != RUN_SOCK_FREE)
			continue;
		atomic_fetch_add_explicit(seq, 1, memory_order_acq_rel);
		s->fd = (uint32_t)fd;
		s->state = (uint8_t)state;
		s->local_addr = local_addr;
		s->local_port = local_port;
		s->peer_addr = peer_addr;
		s->peer_port = peer_port;
		s->rx = s->tx = 0;
		s->kind = (uint8_t)kind;
		atomic_fetch_add_explicit(seq, 1, memory_order_release);
		slot = (int)i;
		break;
	}
	run_unlock(&pub_lock);
	return slot;
}

void pub_count(int slot, uint64_t rx, uint64_t tx)
{
	struct run_sockets_slot *s;
	_Atomic uint32_t *seq;

	/* pub is NULL in a fork's child, whose inherited slot numbers are
	 * the parent's. */
	if (slot < 0 || !pub)
		return;
	s = &pub->slot[slot];
	seq = (_Atomic uint32_t *)&s->seq;
	atomic_fetch_add_explicit(seq, 1, memory_order_acq_rel);
	s->rx = rx;
	s->tx = tx;
	atomic_fetch_add_explicit(seq, 1, memory_order_release);
}

void pub_remove(int slot)
{
	struct run_sockets_slot *s;
	_Atomic uint32_t *seq;

	run_lock(&pub_lock);
	if (slot >= 0 && pub) {
		s = &pub->slot[slot];
		seq = (_Atomic uint32_t *)&s->seq;
		atomic_fetch_add_explicit(seq, 1, memory_order_acq_rel);
		s->kind = RUN_SOCK_FREE;
		atomic_fetch_add_explicit(seq, 1, memory_order_release);
	}
	run_unlock(&pub_lock);
}

/* A process that exits normally takes its file along; one killed leaves
 * it, unlocked, and readers skip it. */
__attribute__((destructor)) static void pub_end(void)
{
	if (!pub || pub->pid != (int32_t)getpid())
		return;
	unlink(pub_path);
}
