/* SPDX-License-Identifier: BSD-2-Clause */
/* signals.c - the program's signal handlers behind the library's
 * trampoline: deferral inside the library's locks, and what blocking
 * calls need to restart as the kernel's would (signals.h). */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "signals.h"

#define EXPORT __attribute__((visibility("default")))

__thread int sig_defer_depth RUN_TLS;
__thread volatile int sig_pending RUN_TLS;
static __thread volatile int seen RUN_TLS;

/* The program's action for one signal, as the trampoline needs it. */
struct user_action {
	union {
		void (*info)(int, siginfo_t *, void *);
		void (*plain)(int);
	} fn;
	int flags;
	sigset_t mask;
};

/* One slot per signal.  Written under slots_lock by a thread with every
 * signal blocked; read by the trampoline, which cannot take a lock, so
 * it reads under a sequence count (odd while a writer is in). */
struct slot {
	unsigned int seq;
	bool wrapped;		 /* the kernel's action is our trampoline */
	struct user_action a;
	struct sigaction user; /* what the program gave, for sigaction's old */
};

static struct slot slots[_NSIG];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

/* Handlers that arrived inside the library, per thread, in order.  A
 * standard signal already waiting is not queued twice (the kernel
 * merges them too); past the bound a real-time one is lost, which needs
 * more than 8 different signals within one lock hold. */
#define MAX_DEFERRED 8

struct deferred {
	int sig;
	siginfo_t si;
	struct user_action a;
};

static __thread struct deferred queue[MAX_DEFERRED] RUN_TLS;
static __thread volatile unsigned int nqueued RUN_TLS;

static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
	real_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(
		RTLD_NEXT, "sigaction");
}

static bool slot_read(int sig, struct user_action *a)
{
	const struct slot *s = &slots[sig];
	unsigned int s1, s2;
	bool w;

	do {
		s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		w = s->wrapped;
		*a = s->a;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	} while ((s1 & 1) || s1 != s2);
	return w;
}

/* Under slots_lock, every signal blocked on this thread. */
static void slot_write(int sig, const struct sigaction *user)
{
	struct slot *s = &slots[sig];

	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->wrapped = user != NULL;
	if (user) {
		s->user = *user;
		if (user->sa_flags & SA_SIGINFO)
			s->a.fn.info = user->sa_sigaction;
		else
			s->a.fn.plain = user->sa_handler;
		s->a.flags = user->sa_flags;
		s->a.mask = user->sa_mask;
	}
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

__thread int sig_handler_depth RUN_TLS;

static void call(const struct user_action *a, int sig, siginfo_t *si, void *uc)
{
	/* A handler that leaves by siglongjmp leaves the depth one too
	 * high for the thread's life: sig_in_handler's callers then do
	 * less, never more (a later fork from that thread carries no
	 * connections for its child). */
	sig_handler_depth++;
	if (a->flags & SA_SIGINFO)
		a->fn.info(sig, si, uc);
	else
		a->fn.plain(sig);
	sig_handler_depth--;
}

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction cur;
	struct user_action a;
	bool restart;

	if (!slot_read(sig, &a)) {
		errno = saved; /* the action changed under us: the new one is not ours */
		return;
	}
	/* The kernel's flags, not the slot's: siginterrupt() changes
	 * SA_RESTART through libc's internal sigaction, behind ours. */
	restart = real_sigaction(sig, NULL, &cur) == 0 ? (cur.sa_flags & SA_RESTART) != 0
						       : (a.flags & SA_RESTART) != 0;
	seen |= restart ? SIG_SEEN_RESTART : SIG_SEEN_INTR;
	if (sig_defer_depth > 0) {
		unsigned int n = nqueued;
		bool dup = false;

		for (unsigned int i = 0; i < n && sig < SIGRTMIN; i++)
			dup |= queue[i].sig == sig;
		if (!dup && n < MAX_DEFERRED) {
			queue[n].sig = sig;
			queue[n].si = *si;
			queue[n].a = a;
			nqueued = n + 1;
		}
		sig_pending = 1;
		errno = saved;
		return;
	}
	errno = saved;
	call(&a, sig, si, uc);
}

void sig_deliver_pending(void)
{
	int saved = errno;
	sigset_t all, old;

	sigfillset(&all);
	for (;;) {
		struct deferred d;
		sigset_t m;

		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (!nqueued) {
			sig_pending = 0;
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			break;
		}
		d = queue[0];
		memmove(&queue[0], &queue[1], (nqueued - 1) * sizeof(queue[0]));
		nqueued--;
		/* With the action's mask, as the kernel runs a handler; the
		 * interrupted context is gone, so the handler's third
		 * argument is NULL. */
		m = old;
		sigorset(&m, &m, &d.a.mask);
		if (!(d.a.flags & SA_NODEFER))
			sigaddset(&m, d.sig);
		pthread_sigmask(SIG_SETMASK, &m, NULL);
		call(&d.a, d.sig, &d.si, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	errno = saved;
}

void sig_watch_start(void)
{
	seen = 0;
}

int sig_watch(void)
{
	return seen;
}

/* Signals the trampoline stays out of: synchronous ones (a fault in the
 * library must not wait for the library), and those no handler takes. */
static bool wrappable(int sig)
{
	switch (sig) {
	case SIGSEGV:
	case SIGBUS:
	case SIGFPE:
	case SIGILL:
	case SIGTRAP:
	case SIGSYS:
	case SIGKILL:
	case SIGSTOP:
		return false;
	default:
		return sig > 0 && sig < _NSIG;
	}
}

static bool is_handler(const struct sigaction *act)
{
	/* SA_RESETHAND (sysv_signal's one-shot handler) is left to the
	 * kernel: after one delivery the kernel's action is SIG_DFL, which
	 * the slot could not follow from inside the handler.  Its calls end
	 * with EINTR, as a handler we did not wrap. */
	return act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN &&
	       !(act->sa_flags & SA_RESETHAND);
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction k, kold;
	struct slot prev;
	sigset_t all, mask;
	int r, err;

	pthread_once(&resolve_once, resolve);
	if (!wrappable(sig))
		return real_sigaction(sig, act, old);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &mask);
	pthread_mutex_lock(&slots_lock);
	prev = slots[sig];
	if (act && is_handler(act)) {
		/* The slot first: a signal right after the kernel's change finds it. */
		slot_write(sig, act);
		k = *act;
		k.sa_sigaction = trampoline;
		k.sa_flags |= SA_SIGINFO;
		r = real_sigaction(sig, &k, &kold);
		if (r < 0)
			slot_write(sig, prev.wrapped ? &prev.user : NULL);
	} else {
		r = real_sigaction(sig, act, &kold);
		if (r == 0 && act)
			slot_write(sig, NULL);
	}
	err = errno;
	if (r == 0 && old) {
		if (kold.sa_sigaction == trampoline && prev.wrapped) {
			*old = prev.user;
			old->sa_flags = (kold.sa_flags & ~SA_SIGINFO) | (prev.user.sa_flags & SA_SIGINFO);
			old->sa_mask = kold.sa_mask;
		} else {
			*old = kold;
		}
	}
	pthread_mutex_unlock(&slots_lock);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	errno = err;
	return r;
}

static sighandler_t install(int sig, sighandler_t h, int flags)
{
	struct sigaction a, old;

	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	sigemptyset(&a.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&a.sa_mask, sig);
	a.sa_flags = flags;
	if (sigaction(sig, &a, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* signal() with BSD semantics (glibc's default): restarted calls, the
 * signal blocked in its handler. */
EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return install(sig, h, SA_RESTART);
}

sighandler_t bsd_signal(int sig, sighandler_t h);
EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return install(sig, h, SA_RESTART);
}

/* System V semantics (what signal() is under strict ISO C): one shot,
 * not blocked in its handler, calls interrupted. */
EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return install(sig, h, SA_RESETHAND | SA_NODEFER);
}

sighandler_t __sysv_signal(int sig, sighandler_t h);
EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return install(sig, h, SA_RESETHAND | SA_NODEFER);
}
