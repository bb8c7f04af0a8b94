/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of frame building and parsing (lib/core/wire.c) against the layout
 * in docs/wire-format.md, byte by byte. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/internal.h"

static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0xb };
static const uint8_t src[6] = { 0x02, 0, 0, 0, 0, 0xa };

static void test_build_layout(void **state)
{
	uint8_t f[128];
	uint32_t n;

	(void)state;
	memset(f, 0xee, sizeof(f));
	memcpy(f + UNET_PAYLOAD_OFF, "hello", 5);
	n = unet_wire_build(f, dst, src, 0x1234, 0x0506, 5);
	assert_int_equal(n, 60); /* padded to the Ethernet minimum */
	assert_memory_equal(f, dst, 6);
	assert_memory_equal(f + 6, src, 6);
	assert_int_equal(f[12], 0x88);
	assert_int_equal(f[13], 0xB5);
	assert_int_equal(f[14], UNET_WIRE_VERSION);
	assert_int_equal(f[15], 0);
	assert_int_equal(f[16], 0x12);
	assert_int_equal(f[17], 0x34);
	assert_int_equal(f[18], 0x05);
	assert_int_equal(f[19], 0x06);
	assert_int_equal(f[20], 0);
	assert_int_equal(f[21], 5);
	assert_memory_equal(f + 22, "hello", 5);
	for (int i = 27; i < 60; i++)
		assert_int_equal(f[i], 0);
	assert_int_equal(f[60], 0xee); /* nothing written past the frame */
}

static void test_build_long_not_padded(void **state)
{
	uint8_t f[2048];

	(void)state;
	assert_int_equal(unet_wire_build(f, dst, src, 1, 2, 1492), 22 + 1492);
}

static void test_parse_roundtrip(void **state)
{
	uint8_t f[128];
	uint16_t dt, st;
	uint32_t off, len, n;

	(void)state;
	n = unet_wire_build(f, dst, src, 7, 9, 3);
	assert_int_equal(unet_wire_parse(f, n, &dt, &st, &off, &len), 0);
	assert_int_equal(dt, 7);
	assert_int_equal(st, 9);
	assert_int_equal(off, 22);
	assert_int_equal(len, 3);
}

static void test_parse_vlan(void **state)
{
	uint8_t f[128], v[132];
	uint16_t dt, st;
	uint32_t off, len, n;

	(void)state;
	n = unet_wire_build(f, dst, src, 7, 9, 40);
	memcpy(v, f, 12);
	v[12] = 0x81;
	v[13] = 0x00;
	v[14] = 0x00;
	v[15] = 0x05;
	memcpy(v + 16, f + 12, n - 12);
	/* Tagged frames belong to a VLAN device, not to U-Net (unet_abi.h). */
	assert_int_equal(unet_wire_parse(v, n + 4, &dt, &st, &off, &len), -EINVAL);
	v[12] = 0x88;
	v[13] = 0xa8;
	assert_int_equal(unet_wire_parse(v, n + 4, &dt, &st, &off, &len), -EINVAL);
}

static void test_parse_rejects(void **state)
{
	uint8_t f[128];
	uint16_t dt, st;
	uint32_t off, len, n;

	(void)state;
	n = unet_wire_build(f, dst, src, 7, 9, 40);
	/* Truncated inside the U-Net header, inside the payload. */
	assert_int_equal(unet_wire_parse(f, 20, &dt, &st, &off, &len), -EINVAL);
	assert_int_equal(unet_wire_parse(f, 22 + 39, &dt, &st, &off, &len), -EINVAL);
	assert_int_equal(unet_wire_parse(f, 10, &dt, &st, &off, &len), -EINVAL);
	/* Wrong version. */
	f[14] = 2;
	assert_int_equal(unet_wire_parse(f, n, &dt, &st, &off, &len), -EINVAL);
	f[14] = UNET_WIRE_VERSION;
	/* Zero length. */
	f[20] = f[21] = 0;
	assert_int_equal(unet_wire_parse(f, n, &dt, &st, &off, &len), -EINVAL);
	f[21] = 40;
	/* Not U-Net: IPv4. */
	f[12] = 0x08;
	f[13] = 0x00;
	assert_int_equal(unet_wire_parse(f, n, &dt, &st, &off, &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_layout),
		cmocka_unit_test(test_build_long_not_padded),
		cmocka_unit_test(test_parse_roundtrip),
		cmocka_unit_test(test_parse_vlan),
		cmocka_unit_test(test_parse_rejects),
	};
	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
