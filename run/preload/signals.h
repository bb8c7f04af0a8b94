/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * signals.h - the program's signal handlers, seen through the preload
 * library (docs/unet-run.md "Signals").
 *
 * The library interposes sigaction (and signal, bsd_signal,
 * sysv_signal) and installs its own trampoline in front of each
 * asynchronous handler the program sets.  The trampoline does two jobs:
 *
 * - Deferral.  A handler that arrives while its thread holds one of
 *   the library's locks (run_lock) runs when the thread lets go of the
 *   last one, so a handler that calls the library never finds the
 *   stack's state half-changed, nor its lock held by the very thread it
 *   interrupted.  Synchronous signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 *   SIGTRAP, SIGSYS) are never wrapped nor deferred.
 * - Restart.  It notes, for the thread, whether a handler ran and
 *   whether that handler's action had SA_RESTART, so a blocking call of
 *   the library ends with EINTR or goes on waiting as the kernel's
 *   would (signal(7): restarted with SA_RESTART unless the socket has a
 *   timeout; poll, select and epoll_wait never).
 */
#ifndef UNET_RUN_SIGNALS_H
#define UNET_RUN_SIGNALS_H

#include <pthread.h>

#define RUN_TLS __attribute__((tls_model("initial-exec")))

/* How many of the library's locks this thread holds (deferral while
 * > 0), and whether handlers wait for it to reach 0. */
extern __thread int sig_defer_depth RUN_TLS;
extern __thread volatile int sig_pending RUN_TLS;

/* How deep this thread is in the program's handlers the trampoline
 * called (0: not in one). */
extern __thread int sig_handler_depth RUN_TLS;

static inline int sig_in_handler(void)
{
	return sig_handler_depth > 0;
}

/* Run the handlers deferred on this thread (called at depth 0). */
void sig_deliver_pending(void);

static inline void sig_defer_enter(void)
{
	sig_defer_depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void sig_defer_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (--sig_defer_depth == 0 && sig_pending)
		sig_deliver_pending();
}

/* The library's locks: taken with signals deferred, released with the
 * deferred ones delivered (after the unlock, so a handler may take the
 * lock itself). */
static inline void run_lock(pthread_mutex_t *m)
{
	sig_defer_enter();
	pthread_mutex_lock(m);
}

static inline void run_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	sig_defer_leave();
}

/* What handlers ran on this thread since sig_watch_start. */
enum {
	SIG_SEEN_RESTART = 1, /* a handler whose action has SA_RESTART */
	SIG_SEEN_INTR = 2,    /* a handler without it */
};

/* A blocking call starts: forget the handlers that ran before it. */
void sig_watch_start(void);
/* SIG_SEEN_* bits since sig_watch_start. */
int sig_watch(void);

/* Whether a blocking call whose wait was interrupted (or during whose
 * wait a handler ran) goes on: a handler ran and every one that ran
 * since the call started had SA_RESTART, and the call has no timeout.
 * A wait ended with EINTR but no handler of ours seen (one the library
 * did not wrap) does not go on. */
static inline int sig_restarts(int seen, int has_timeout)
{
	return seen == SIG_SEEN_RESTART && !has_timeout;
}

#endif /* UNET_RUN_SIGNALS_H */
