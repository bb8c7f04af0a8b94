/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * version.h - the version of libunet-xdp, at build time and at run time.
 *
 * This file is the one place the version numbers live: the Makefile (the
 * soname, the shared library's file name, the pkg-config file), the Debian
 * changelog's check and unet_version() all read them from here.  What
 * bumps what is written down in docs/packaging.md ("Versions").
 *
 *   #if UNET_VERSION < UNET_VERSION_ENCODE(0, 2, 0)   (build time)
 *   if (unet_version() < UNET_VERSION_ENCODE(0, 2, 0))  (run time)
 *
 * Included by <unet-xdp/unet.h>.
 */
#ifndef UNET_VERSION_H
#define UNET_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef UNET_API
#define UNET_API __attribute__((visibility("default")))
#endif

#define UNET_VERSION_MAJOR 0
#define UNET_VERSION_MINOR 5
#define UNET_VERSION_PATCH 0

/* The N in the soname libunet-xdp.so.N: bumped on every incompatible
 * change of the ABI, independently of the numbers above. */
#define UNET_SOVERSION 4

/* One integer per version, ordered as the versions are (minor and patch
 * below 256).  No casts: it works in #if. */
#define UNET_VERSION_ENCODE(major, minor, patch) (((major) << 16) | ((minor) << 8) | (patch))

/* The version of the header an application was built with. */
#define UNET_VERSION UNET_VERSION_ENCODE(UNET_VERSION_MAJOR, UNET_VERSION_MINOR, UNET_VERSION_PATCH)

#define UNET__STR2(x) #x
#define UNET__STR(x) UNET__STR2(x)
/* "MAJOR.MINOR.PATCH" of the header. */
#define UNET_VERSION_STRING \
	UNET__STR(UNET_VERSION_MAJOR) "." UNET__STR(UNET_VERSION_MINOR) "." UNET__STR(UNET_VERSION_PATCH)

/* True if the header is at least version major.minor.patch. */
#define UNET_VERSION_AT_LEAST(major, minor, patch) \
	(UNET_VERSION >= UNET_VERSION_ENCODE(major, minor, patch))

/* The version of the library the application runs with, encoded as
 * UNET_VERSION_ENCODE does.  Returns it; never fails. */
UNET_API unsigned int unet_version(void);

/* The same as "MAJOR.MINOR.PATCH".  Returns a static string; never
 * fails. */
UNET_API const char *unet_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* UNET_VERSION_H */
