/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of the SO_REUSEPORT group table's rules (lib/inet/port_group.c,
 * bpf/unet_abi.h "SO_REUSEPORT groups"): who may join, which place a
 * member takes and keeps, what a dead or leaving member leaves behind,
 * and the flow hash the XDP program and unetd choose members by. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "inet/port_group.h"
#include "fuzz.h"

#define UID 1000
#define TOKEN(slot) (0x70ce000000000000ull | (slot))

/* Members alive unless their slot's bit is set in *dead. */
static bool alive_unless(void *ctx, uint32_t slot, uint64_t token)
{
	const uint32_t *dead = ctx;

	return token == TOKEN(slot) && !(*dead & (1u << slot));
}

static void test_init(void **state)
{
	struct unet_group_val g;

	(void)state;
	memset(&g, 0xee, sizeof(g));
	unet_group_init(&g, UID, 3, TOKEN(3), 42);
	assert_int_equal(g.uid, UID);
	assert_int_equal(g.count, 1);
	assert_int_equal(g.m[0].endpoint, 3);
	assert_true(g.m[0].token == TOKEN(3));
	assert_int_equal(g.m[0].pid, 42);
	assert_true(g.m[0].delivered == 0);
	for (int i = 1; i < UNET_PORT_GROUP_MAX; i++)
		assert_true(g.m[i].token == 0);
}

/* Another user never joins, whatever else is true; the group is left as
 * it was. */
static void test_other_user_refused(void **state)
{
	struct unet_group_val g, before;

	(void)state;
	unet_group_init(&g, UID, 3, TOKEN(3), 42);
	before = g;
	assert_int_equal(unet_group_add(&g, UID + 1, 4, TOKEN(4), 43), -EACCES);
	assert_int_equal(unet_group_add(&g, 0, 4, TOKEN(4), 43), -EACCES);
	/* checked before the slot: a member's slot asked by another user */
	assert_int_equal(unet_group_add(&g, UID + 1, 3, TOKEN(3), 43), -EACCES);
	assert_memory_equal(&g, &before, sizeof(g));
}

static void test_slot_once(void **state)
{
	struct unet_group_val g;

	(void)state;
	unet_group_init(&g, UID, 3, TOKEN(3), 42);
	assert_int_equal(unet_group_add(&g, UID, 3, TOKEN(3), 43), -EEXIST);
	assert_int_equal(g.count, 1);
}

static void test_bounded(void **state)
{
	struct unet_group_val g;

	(void)state;
	unet_group_init(&g, UID, 0, TOKEN(0), 1);
	for (uint32_t s = 1; s < UNET_PORT_GROUP_MAX; s++)
		assert_int_equal(unet_group_add(&g, UID, s, TOKEN(s), 1), 0);
	assert_int_equal(g.count, UNET_PORT_GROUP_MAX);
	assert_int_equal(unet_group_add(&g, UID, 20, TOKEN(20), 1), -ENOSPC);
	/* A value with a count past the array (the map is root's, but a bad
	 * one must not make us write past it). */
	g.count = UNET_PORT_GROUP_MAX + 5;
	assert_int_equal(unet_group_add(&g, UID, 21, TOKEN(21), 1), -EINVAL);
}

/* A member that leaves or dies frees its place and nobody else's moves:
 * the others keep their flows.  Free places at the end go. */
static void test_places_kept(void **state)
{
	struct unet_group_val g;
	uint32_t dead = 0;

	(void)state;
	unet_group_init(&g, UID, 0, TOKEN(0), 1);
	assert_int_equal(unet_group_add(&g, UID, 1, TOKEN(1), 1), 0);
	assert_int_equal(unet_group_add(&g, UID, 2, TOKEN(2), 1), 0);
	assert_int_equal(unet_group_add(&g, UID, 3, TOKEN(3), 1), 0);
	dead = 1u << 1;
	assert_int_equal(unet_group_prune(&g, alive_unless, &dead, 0), 3);
	assert_int_equal(g.count, 4);
	assert_true(g.m[1].token == 0);
	assert_int_equal(g.m[2].endpoint, 2);
	assert_int_equal(g.m[3].endpoint, 3);
	/* slot 3 leaves: its place, the last, goes; the free one before a live member stays */
	dead = 0;
	assert_int_equal(unet_group_prune(&g, alive_unless, &dead, TOKEN(3)), 2);
	assert_int_equal(g.count, 3);
	/* a newcomer takes the first free place, not a new one */
	assert_int_equal(unet_group_add(&g, UID, 5, TOKEN(5), 1), 0);
	assert_int_equal(g.count, 3);
	assert_int_equal(g.m[1].endpoint, 5);
	/* all gone: nothing left, count 0 */
	dead = ~0u;
	assert_int_equal(unet_group_prune(&g, alive_unless, &dead, 0), 0);
	assert_int_equal(g.count, 0);
	assert_int_equal(unet_group_heir(&g), -1);
}

/* A member whose slot another incarnation holds now (another token) is
 * dead to the group: never kept, never an heir. */
static void test_stale_token(void **state)
{
	struct unet_group_val g;
	uint32_t dead = 0;

	(void)state;
	unet_group_init(&g, UID, 0, TOKEN(0) ^ 1, 1); /* not slot 0's token */
	assert_int_equal(unet_group_add(&g, UID, 1, TOKEN(1), 1), 0);
	assert_int_equal(unet_group_prune(&g, alive_unless, &dead, 0), 1);
	assert_int_equal(unet_group_heir(&g), 1);
	assert_int_equal(g.count, 2);
}

static void test_prune_clamps_count(void **state)
{
	struct unet_group_val g;
	uint32_t dead = 0;

	(void)state;
	unet_group_init(&g, UID, 0, TOKEN(0), 1);
	g.count = 1000;
	assert_int_equal(unet_group_prune(&g, alive_unless, &dead, 0), 1);
	assert_int_equal(g.count, 1);
}

/* The flow hash: one value per source, and sources spread over places. */
static void test_hash_spreads(void **state)
{
	uint32_t hits[UNET_PORT_GROUP_MAX] = { 0 };
	uint32_t a = htonl(0x0ac90001);

	(void)state;
	assert_true(unet_port_group_hash(a, htons(7880)) == unet_port_group_hash(a, htons(7880)));
	assert_true(unet_port_group_hash(a, htons(7880)) != unet_port_group_hash(a, htons(7881)));
	assert_true(unet_port_group_hash(a, htons(7880)) !=
		    unet_port_group_hash(htonl(0x0ac90002), htons(7880)));
	for (uint32_t p = 40000; p < 40000 + 800; p++)
		hits[unet_port_group_hash(a, htons((uint16_t)p)) % UNET_PORT_GROUP_MAX]++;
	/* 100 expected per place: far from none and from all */
	for (int i = 0; i < UNET_PORT_GROUP_MAX; i++)
		assert_in_range(hits[i], 50, 150);
}

/*
 * Seeded fuzz: group values of any content (as a bad or hostile map
 * value could be) through prune, add and heir, with members alive or
 * not at random.  After every step: the count within the places, no
 * live member past it, another user's add refused and nothing changed,
 * a slot never in two places, the heir a live place.
 */
static bool alive_bits(void *ctx, uint32_t slot, uint64_t token)
{
	(void)token;
	return (*(const uint64_t *)ctx >> (slot % 64)) & 1;
}

static void check_group(const struct unet_group_val *g)
{
	int heir = unet_group_heir(g);

	assert_true(g->count <= UNET_PORT_GROUP_MAX);
	for (uint32_t i = 0; i < g->count; i++)
		for (uint32_t j = i + 1; j < g->count; j++)
			assert_false(g->m[i].token && g->m[j].token &&
				     g->m[i].endpoint == g->m[j].endpoint);
	for (uint32_t i = g->count; i < UNET_PORT_GROUP_MAX; i++)
		assert_true(g->m[i].token == 0);
	if (heir >= 0)
		assert_true((uint32_t)heir < g->count && g->m[heir].token);
	assert_true(g->count == 0 || g->m[g->count - 1].token);
}

static void test_fuzz(void **state)
{
	uint64_t seed = fuzz_seed(0x9e0f5eedull), rng = seed, n = fuzz_count(20000);

	(void)state;
	print_message("port_group fuzz: seed %#llx, %llu groups\n", (unsigned long long)seed,
		      (unsigned long long)n);
	for (uint64_t r = 0; r < n; r++) {
		struct unet_group_val g, before;
		uint64_t alive = fuzz_next(&rng);

		for (size_t i = 0; i < sizeof(g); i += 8) {
			uint64_t x = fuzz_next(&rng);

			memcpy((uint8_t *)&g + i, &x, sizeof(g) - i < 8 ? sizeof(g) - i : 8);
		}
		g.uid %= 3;
		for (int i = 0; i < UNET_PORT_GROUP_MAX; i++) {
			g.m[i].endpoint %= 12;
			if (fuzz_next(&rng) % 3 == 0)
				g.m[i].token = 0;
		}
		if (fuzz_next(&rng) % 2)
			g.count %= UNET_PORT_GROUP_MAX + 2;
		unet_group_prune(&g, alive_bits, &alive, fuzz_next(&rng) % 2 ? g.m[0].token : 0);
		/* a value that had one slot in two places keeps them: only a
		 * group made by the rules is checked for that */
		for (int k = 0; k < 4; k++) {
			uint32_t uid = (uint32_t)(fuzz_next(&rng) % 3);
			uint32_t slot = (uint32_t)(fuzz_next(&rng) % 12);
			int err;

			before = g;
			err = unet_group_add(&g, uid, slot, fuzz_next(&rng) | 1, 1);
			if (uid != g.uid) {
				assert_int_equal(err, -EACCES);
				assert_memory_equal(&g, &before, sizeof(g));
			} else if (err) {
				assert_true(err == -EEXIST || err == -ENOSPC || err == -EINVAL);
				assert_memory_equal(&g, &before, sizeof(g));
			}
			assert_true(g.count <= UNET_PORT_GROUP_MAX);
		}
		unet_group_prune(&g, alive_bits, &alive, 0);
		assert_true(g.count <= UNET_PORT_GROUP_MAX);
		assert_true(g.count == 0 || g.m[g.count - 1].token);
	}
	/* groups made only by the rules keep every invariant */
	for (uint64_t r = 0; r < n / 4; r++) {
		struct unet_group_val g;
		uint64_t alive = ~0ull;

		unet_group_init(&g, 1, (uint32_t)(fuzz_next(&rng) % 12), 7, 1);
		for (int k = 0; k < 24; k++) {
			uint32_t slot = (uint32_t)(fuzz_next(&rng) % 12);

			if (fuzz_next(&rng) % 3 == 0)
				alive &= ~(1ull << slot);
			else if (fuzz_next(&rng) % 2)
				alive |= 1ull << slot;
			if (fuzz_next(&rng) % 2)
				unet_group_prune(&g, alive_bits, &alive, 0);
			if (alive_bits(&alive, slot, 0))
				unet_group_add(&g, 1, slot, 7, 1);
			check_group(&g);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_other_user_refused),
		cmocka_unit_test(test_slot_once),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_places_kept),
		cmocka_unit_test(test_stale_token),
		cmocka_unit_test(test_prune_clamps_count),
		cmocka_unit_test(test_hash_spreads),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests_name("port_group", tests, NULL, NULL);
}
