/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of the segment's frame pool (lib/core/pool.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/internal.h"

static void test_init_rejects_bad_sizes(void **state)
{
	struct unet_pool p = { 0 };

	(void)state;
	assert_int_equal(unet_pool_init(&p, 0, 2048), -EINVAL);
	assert_int_equal(unet_pool_init(&p, 16, 0), -EINVAL);
	assert_int_equal(unet_pool_init(&p, 16, 3000), -EINVAL);
}

static void test_get_every_frame_once(void **state)
{
	struct unet_pool p = { 0 };
	uint8_t seen[64] = { 0 };

	(void)state;
	assert_int_equal(unet_pool_init(&p, 64, 2048), 0);
	for (int i = 0; i < 64; i++) {
		uint64_t a = unet_pool_get(&p, UNET_FRAME_APP);

		assert_int_not_equal(a, UNET_NO_BUF);
		assert_int_equal(a % 2048, 0);
		assert_true(a / 2048 < 64);
		assert_int_equal(seen[a / 2048], 0);
		seen[a / 2048] = 1;
	}
	assert_int_equal(unet_pool_get(&p, UNET_FRAME_APP), UNET_NO_BUF);
	assert_int_equal(p.nfree, 0);
	unet_pool_fini(&p);
}

static void test_put_checks_owner(void **state)
{
	struct unet_pool p = { 0 };
	uint64_t a;

	(void)state;
	assert_int_equal(unet_pool_init(&p, 8, 4096), 0);
	a = unet_pool_get(&p, UNET_FRAME_RX);
	/* Held as RX, so returning it as an APP buffer is refused. */
	assert_int_equal(unet_pool_put(&p, a, UNET_FRAME_APP), -EINVAL);
	assert_int_equal(unet_pool_put(&p, a, UNET_FRAME_RX), 0);
	/* A double release is refused and does not grow the pool. */
	assert_int_equal(unet_pool_put(&p, a, UNET_FRAME_RX), -EINVAL);
	assert_int_equal(p.nfree, 8);
	/* Out of range and the no-buffer marker. */
	assert_int_equal(unet_pool_put(&p, 8 * 4096, UNET_FRAME_FREE), -EINVAL);
	assert_int_equal(unet_pool_index(&p, UNET_NO_BUF), -EINVAL);
	unet_pool_fini(&p);
}

static void test_move_and_index(void **state)
{
	struct unet_pool p = { 0 };
	uint64_t a;

	(void)state;
	assert_int_equal(unet_pool_init(&p, 4, 2048), 0);
	a = unet_pool_get(&p, UNET_FRAME_APP);
	assert_int_equal(unet_pool_index(&p, a + 100), (int64_t)(a / 2048));
	assert_int_equal(unet_pool_move(&p, a, UNET_FRAME_RX, UNET_FRAME_KERNEL), -EINVAL);
	assert_int_equal(unet_pool_move(&p, a, UNET_FRAME_APP, UNET_FRAME_KERNEL), 0);
	assert_int_equal(unet_pool_put(&p, a, UNET_FRAME_KERNEL), 0);
	unet_pool_fini(&p);
	unet_pool_fini(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_rejects_bad_sizes),
		cmocka_unit_test(test_get_every_frame_once),
		cmocka_unit_test(test_put_checks_owner),
		cmocka_unit_test(test_move_and_index),
	};
	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
