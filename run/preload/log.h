/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * log.h - the preload library's diagnostics: one line per decision
 * ("fd 5 udp connect 10.0.0.2:7000: kernel (leaves by lo, loopback)"),
 * appended to UNET_RUN_LOG.
 *
 * The file is opened, written and closed for every line with raw system
 * calls: the library holds no descriptor of its own that the program
 * could close or find in its way, and nothing recurses into the
 * interposed calls.  Lines are written with one write(2) on an O_APPEND
 * file, so processes and threads sharing a log do not tear each other's.
 */
#ifndef UNET_RUN_LOG_H
#define UNET_RUN_LOG_H

/* path: a file, "stderr", or NULL/"" for no log. */
void run_log_set(const char *path);
/* Whether a log is configured (skip formatting work when not). */
int run_log_on(void);
void run_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* UNET_RUN_LOG_H */
