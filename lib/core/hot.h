/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hot.h - UNET_HOT marks a function on the message path: a send, a
 * receive, what a poll does per frame.  GCC and clang place such
 * functions together (.text.hot), so the path's code shares a few pages
 * and cache lines.  Why it matters: in copy mode each round trip runs
 * the kernel's send path (a system call through the stack, veth and the
 * peer's XDP), which evicts the application's code from the first-level
 * caches; every distinct cold code line the next message then touches
 * costs some 15-50 cycles.  Measured in docs/performance.md ("Issue 11,
 * fifth session"): the 30 instructions from uam_ep__uncork to the send
 * call took 260-390 cycles spread over four functions in two files,
 * 30-125 once they lay together.
 */
#ifndef UNET_HOT_H
#define UNET_HOT_H

#define UNET_HOT __attribute__((hot))

#endif
