/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exec.c - the exec family, interposed so that a U-Net socket handed to
 * the next program image is a dead kernel socket, never a live-looking
 * one that U-Net's traffic bypasses (exec.h).
 *
 * glibc's execv, execvp and execl* call its internal execve, not the
 * interposable one, so each is interposed here.  posix_spawn and a raw
 * execve system call are not (docs/unet-run.md, "Limits").
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "exec.h"

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

/* The longest execl argument list taken; more fails with E2BIG. */
#define EXECL_MAX_ARGS 4096

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

/* Looked up by the constructor: exec may run in a vfork child, where
 * dlsym (locks, malloc) is not safe. */
static execve_fn real_execve, real_execvpe;
static fexecve_fn real_fexecve;

__attribute__((constructor)) static void exec_start(void)
{
	real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
	real_execvpe = (execve_fn)dlsym(RTLD_NEXT, "execvpe");
	real_fexecve = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
}

enum exec_how { BY_PATH, BY_SEARCH, BY_FD };

/* path names the image (BY_PATH, BY_SEARCH through PATH) or fd does. */
static int run_exec(enum exec_how how, const char *path, int fd, char *const argv[],
		    char *const envp[])
{
	struct exec_hidden h;
	int r;

	if (!real_execve)
		exec_start(); /* called from a constructor that ran before ours */
	if (preload_exec_hide(&h) < 0)
		return -1;
	errno = ENOSYS;
	r = -1;
	if (how == BY_PATH && real_execve)
		r = real_execve(path, argv, envp);
	else if (how == BY_SEARCH && real_execvpe)
		r = real_execvpe(path, argv, envp);
	else if (how == BY_FD && real_fexecve)
		r = real_fexecve(fd, argv, envp);
	preload_exec_restore(&h);
	return r;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return run_exec(BY_PATH, path, -1, argv, envp);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return run_exec(BY_SEARCH, file, -1, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return run_exec(BY_FD, NULL, fd, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	return run_exec(BY_PATH, path, -1, argv, environ);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return run_exec(BY_SEARCH, file, -1, argv, environ);
}

/* The execl family: the arguments gathered into an array on the stack. */
#define GATHER(ap, first, argv, n)                                             \
	do {                                                                   \
		(argv)[0] = (char *)(first);                                   \
		for ((n) = 1; (argv)[(n) - 1]; (n)++) {                        \
			if ((n) == EXECL_MAX_ARGS) {                           \
				va_end(ap);                                    \
				errno = E2BIG;                                 \
				return -1;                                     \
			}                                                      \
			(argv)[(n)] = va_arg(ap, char *);                      \
		}                                                              \
	} while (0)

EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[EXECL_MAX_ARGS];
	va_list ap;
	size_t n;

	va_start(ap, arg);
	GATHER(ap, arg, argv, n);
	va_end(ap);
	return run_exec(BY_PATH, path, -1, argv, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[EXECL_MAX_ARGS];
	va_list ap;
	size_t n;

	va_start(ap, arg);
	GATHER(ap, arg, argv, n);
	va_end(ap);
	return run_exec(BY_SEARCH, file, -1, argv, environ);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[EXECL_MAX_ARGS];
	char **envp;
	va_list ap;
	size_t n;

	va_start(ap, arg);
	GATHER(ap, arg, argv, n);
	envp = va_arg(ap, char **);
	va_end(ap);
	return run_exec(BY_PATH, path, -1, argv, envp);
}
