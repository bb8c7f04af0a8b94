/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * closer.c - closing descriptors that clients sent, off the serving
 * thread.
 *
 * Whatever a client passes with SCM_RIGHTS is installed in our table the
 * moment we receive it, and its last close() runs the file's release in
 * our thread: a TCP socket with unsent data and SO_LINGER waits up to the
 * linger time, a FUSE file waits for its server, a tty for its output to
 * drain.  The one thread that serves every client and moves every frame
 * must never wait on a client's object, so such descriptors go to a
 * thread of their own, which may wait as long as the object makes it.
 * Sockets are made to close at once first (SO_LINGER zero: their sender
 * gets a reset, their own doing).
 *
 * Bound: QUEUE descriptors waiting.  Past it (the closer is stuck on a
 * file that never lets go and clients keep sending) a descriptor is kept
 * open instead and counted, never closed on the serving thread: the
 * daemon's descriptor limit then bounds what such a user can hold.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unetd.h"

#define QUEUE 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static int queue[QUEUE];
static unsigned int head, count;
static bool started;
static unsigned long kept_open;

static void *closer(void *arg)
{
	(void)arg;
	for (;;) {
		int fd;

		pthread_mutex_lock(&lock);
		while (!count)
			pthread_cond_wait(&more, &lock);
		fd = queue[head];
		head = (head + 1) % QUEUE;
		count--;
		pthread_mutex_unlock(&lock);
		close(fd);
	}
	return NULL;
}

int unetd_closer_start(void)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, closer, NULL);

	if (err)
		return -err;
	pthread_detach(t);
	pthread_mutex_lock(&lock);
	started = true;
	pthread_mutex_unlock(&lock);
	return 0;
}

void unetd_close_client_fd(int fd)
{
	struct linger now = { .l_onoff = 1, .l_linger = 0 };
	bool queued = false, on;

	if (fd < 0)
		return;
	/* ENOTSOCK for anything else: harmless. */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
	pthread_mutex_lock(&lock);
	on = started;
	if (on && count < QUEUE) {
		queue[(head + count) % QUEUE] = fd;
		count++;
		queued = true;
		pthread_cond_signal(&more);
	} else if (on) {
		kept_open++;
	}
	pthread_mutex_unlock(&lock);
	if (!on)
		close(fd); /* before the thread runs (start-up) */
	else if (!queued)
		unetd_log(UNET_LOG_WARN, "closer: %u client descriptors wait to be closed: fd %d kept open (%lu so far)",
			  QUEUE, fd, kept_open);
}
