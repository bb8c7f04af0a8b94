/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exec.h - what becomes of a process's U-Net sockets across exec
 * (docs/unet-run.md, "Descriptors").
 *
 * A U-Net socket's state (its endpoint's rings, the UDP and TCP layers'
 * sockets) lives in the process's memory, which exec replaces; its
 * descriptor alone would reach the new image as a kernel socket that
 * U-Net's traffic never reaches.  So, just before exec, each U-Net
 * descriptor without FD_CLOEXEC is replaced by a kernel socket of the
 * same type that is shut down both ways: in the new image reads give end
 * of file, writes EPIPE, and the number stays taken (no later open()
 * lands on it unnoticed).  Close-on-exec ones vanish with exec as
 * always.  When exec fails, the originals are put back.
 */
#ifndef UNET_RUN_EXEC_H
#define UNET_RUN_EXEC_H

/* At most this many U-Net descriptors are carried (dead) across one exec;
 * the saved copies live on the caller's stack (exec may run in a vfork
 * child, where malloc is not safe). */
#define EXEC_MAX_HIDDEN 256

struct exec_hidden {
	int n;
	int fd[EXEC_MAX_HIDDEN];
	int saved[EXEC_MAX_HIDDEN]; /* close-on-exec copies of the originals */
};

/* Replace the inheritable U-Net descriptors by dead kernel sockets.
 * 0, or -1 with errno set (nothing changed then). */
int preload_exec_hide(struct exec_hidden *h);
/* exec failed: put the originals back (errno kept). */
void preload_exec_restore(struct exec_hidden *h);

#endif /* UNET_RUN_EXEC_H */
