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
	assert_int_equal(unet_pool_move(&p, a, UNET_FRAME_RX, UNET_FRAME_TX), -EINVAL);
	assert_int_equal(unet_pool_move(&p, a, UNET_FRAME_APP, UNET_FRAME_TX), 0);
	assert_int_equal(unet_pool_put(&p, a, UNET_FRAME_TX), 0);
	unet_pool_fini(&p);
	unet_pool_fini(NULL);
}

/* Kept send buffers: back to their holder at completion, not to the
 * pool; given up now (held) or at completion (still on a ring). */
static void test_keep(void **state)
{
	struct unet_pool p = { 0 };
	uint64_t a, b, c;

	(void)state;
	assert_int_equal(unet_pool_init(&p, 4, 2048), 0);
	a = unet_pool_get(&p, UNET_FRAME_APP);
	b = unet_pool_get(&p, UNET_FRAME_APP);
	c = unet_pool_get(&p, UNET_FRAME_RX);
	/* only a buffer the application holds can be kept */
	assert_int_equal(unet_pool_keep(&p, c), -EINVAL);
	assert_int_equal(unet_pool_keep(&p, UNET_NO_BUF), -EINVAL);
	assert_int_equal(unet_pool_unkeep(&p, b), -EINVAL); /* not kept */
	assert_int_equal(unet_pool_keep(&p, a), 0);
	assert_int_equal(unet_pool_keep(&p, b), 0);

	/* a: sent, completed -> back to APP, not to the pool */
	assert_int_equal(unet_pool_move(&p, a, UNET_FRAME_APP, UNET_FRAME_TX), 0);
	assert_int_equal(unet_pool_completed(&p, a), 1);
	assert_int_equal(p.owner[a / 2048], UNET_FRAME_APP);
	assert_int_equal(p.nfree, 1);
	assert_int_equal(unet_pool_completed(&p, a), -EINVAL); /* a second completion */
	/* given up while held: to the pool now, once */
	assert_int_equal(unet_pool_unkeep(&p, a), 0);
	assert_int_equal(p.nfree, 2);
	assert_int_equal(unet_pool_unkeep(&p, a), -EINVAL);

	/* b: given up while on the ring -> its completion frees it */
	assert_int_equal(unet_pool_move(&p, b, UNET_FRAME_APP, UNET_FRAME_TX), 0);
	assert_int_equal(unet_pool_unkeep(&p, b), 0);
	assert_int_equal(p.owner[b / 2048], UNET_FRAME_TX);
	assert_int_equal(p.nfree, 2);
	assert_int_equal(unet_pool_unkeep(&p, b), -EINVAL);
	assert_int_equal(unet_pool_completed(&p, b), 0);
	assert_int_equal(p.nfree, 3);

	/* a kept buffer freed outright is not kept when it comes out again */
	a = unet_pool_get(&p, UNET_FRAME_APP);
	assert_int_equal(unet_pool_keep(&p, a), 0);
	assert_int_equal(unet_pool_put(&p, a, UNET_FRAME_APP), 0);
	a = unet_pool_get(&p, UNET_FRAME_APP);
	assert_int_equal(unet_pool_move(&p, a, UNET_FRAME_APP, UNET_FRAME_TX), 0);
	assert_int_equal(unet_pool_completed(&p, a), 0);
	assert_int_equal(p.nfree, 3);
	/* a receive buffer (RX) is no completion */
	assert_int_equal(unet_pool_completed(&p, c), -EINVAL);
	unet_pool_fini(&p);
}

/* A frame on a FILL ring and one on a TX ring are told apart: a
 * completion never takes a FILL frame, and the receive path (FILL -> RX)
 * never a frame on its way out, such as a kept send buffer. */
static void test_fill_and_tx_apart(void **state)
{
	struct unet_pool p = { 0 };
	uint64_t f, t;

	(void)state;
	assert_int_equal(unet_pool_init(&p, 4, 2048), 0);
	f = unet_pool_get(&p, UNET_FRAME_FILL);
	t = unet_pool_get(&p, UNET_FRAME_APP);
	assert_int_equal(unet_pool_keep(&p, t), 0);
	assert_int_equal(unet_pool_move(&p, t, UNET_FRAME_APP, UNET_FRAME_TX), 0);
	assert_int_equal(unet_pool_completed(&p, f), -EINVAL);
	assert_int_equal(p.owner[f / 2048], UNET_FRAME_FILL);
	assert_int_equal(unet_pool_move(&p, t, UNET_FRAME_FILL, UNET_FRAME_RX), -EINVAL);
	assert_int_equal(p.owner[t / 2048], UNET_FRAME_TX);
	assert_int_equal(unet_pool_move(&p, f, UNET_FRAME_FILL, UNET_FRAME_RX), 0);
	assert_int_equal(unet_pool_completed(&p, t), 1); /* kept: back to APP */
	assert_int_equal(unet_pool_unkeep(&p, t), 0);
	assert_int_equal(unet_pool_put(&p, f, UNET_FRAME_RX), 0);
	assert_int_equal(p.nfree, 4);
	unet_pool_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_rejects_bad_sizes),
		cmocka_unit_test(test_get_every_frame_once),
		cmocka_unit_test(test_put_checks_owner),
		cmocka_unit_test(test_move_and_index),
		cmocka_unit_test(test_keep),
		cmocka_unit_test(test_fill_and_tx_apart),
	};
	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
