/* SPDX-License-Identifier: BSD-2-Clause */
/* test_version.c - the version macros of <unet-xdp/version.h> and the
 * library's unet_version()/unet_version_string() agree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <unet-xdp/unet.h>

#if !UNET_VERSION_AT_LEAST(0, 0, 0)
#error "UNET_VERSION_AT_LEAST does not hold for 0.0.0"
#endif
#if UNET_VERSION_AT_LEAST(UNET_VERSION_MAJOR, UNET_VERSION_MINOR, UNET_VERSION_PATCH + 1)
#error "UNET_VERSION_AT_LEAST holds for a later version"
#endif

static void test_function_matches_macros(void **state)
{
	char buf[32];

	(void)state;
	assert_int_equal(unet_version(), UNET_VERSION);
	assert_int_equal(unet_version(), UNET_VERSION_ENCODE(UNET_VERSION_MAJOR, UNET_VERSION_MINOR,
							     UNET_VERSION_PATCH));
	assert_string_equal(unet_version_string(), UNET_VERSION_STRING);
	snprintf(buf, sizeof(buf), "%d.%d.%d", UNET_VERSION_MAJOR, UNET_VERSION_MINOR,
		 UNET_VERSION_PATCH);
	assert_string_equal(unet_version_string(), buf);
}

static void test_encoding_orders_versions(void **state)
{
	(void)state;
	assert_true(UNET_VERSION_ENCODE(0, 1, 0) < UNET_VERSION_ENCODE(0, 1, 1));
	assert_true(UNET_VERSION_ENCODE(0, 1, 255) < UNET_VERSION_ENCODE(0, 2, 0));
	assert_true(UNET_VERSION_ENCODE(0, 255, 255) < UNET_VERSION_ENCODE(1, 0, 0));
	assert_true(UNET_VERSION_AT_LEAST(UNET_VERSION_MAJOR, UNET_VERSION_MINOR, UNET_VERSION_PATCH));
	assert_true(UNET_VERSION_MINOR < 256 && UNET_VERSION_PATCH < 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_matches_macros),
		cmocka_unit_test(test_encoding_orders_versions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
