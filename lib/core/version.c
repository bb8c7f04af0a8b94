/* SPDX-License-Identifier: BSD-2-Clause */
/* version.c - the library's version at run time (include/unet-xdp/version.h). */
#include <unet-xdp/version.h>

unsigned int unet_version(void)
{
	return UNET_VERSION;
}

const char *unet_version_string(void)
{
	return UNET_VERSION_STRING;
}
