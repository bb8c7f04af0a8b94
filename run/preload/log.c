/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - diagnostics (log.h). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

static const char *log_path;

void run_log_set(const char *path)
{
	log_path = path && *path ? path : NULL;
}

int run_log_on(void)
{
	return log_path != NULL;
}

void run_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, m, fd;

	if (!log_path)
		return;
	n = snprintf(line, sizeof(line), "unet-run[%d]: ", (int)getpid());
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (strcmp(log_path, "stderr") == 0) {
		syscall(SYS_write, 2, line, (size_t)n);
		return;
	}
	fd = (int)syscall(SYS_openat, AT_FDCWD, log_path,
			  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	syscall(SYS_write, fd, line, (size_t)n);
	syscall(SYS_close, fd);
}
