/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz.h - what the seeded fuzzers share: the generator and the seed.
 *
 * Every fuzz run has a fixed default seed, so a failure repeats; the seed
 * is printed, and UNET_FUZZ_SEED (any strtoull base: 0x... works)
 * replaces it to explore further or to replay a run from elsewhere.
 * UNET_FUZZ_COUNT scales the input count the same way (a soak: larger;
 * the default is sized for a few seconds under ASan).  One header
 * included by one test file each: its static functions are that file's.
 */
#ifndef UNET_TEST_FUZZ_H
#define UNET_TEST_FUZZ_H

#include <stdint.h>
#include <stdlib.h>

/* xorshift64*: small, fast, and the same sequence on every machine. */
static inline uint64_t fuzz_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

/* A number from the environment variable name, or dflt if unset/empty. */
static inline uint64_t fuzz_env(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);
	char *end;
	uint64_t v;

	if (!s || !*s)
		return dflt;
	v = strtoull(s, &end, 0);
	return *end ? dflt : v;
}

/* The run's seed: UNET_FUZZ_SEED or dflt; never 0 (xorshift stays 0). */
static inline uint64_t fuzz_seed(uint64_t dflt)
{
	uint64_t s = fuzz_env("UNET_FUZZ_SEED", dflt);

	return s ? s : dflt;
}

/* The run's input count: UNET_FUZZ_COUNT or dflt (at least 1). */
static inline uint64_t fuzz_count(uint64_t dflt)
{
	uint64_t n = fuzz_env("UNET_FUZZ_COUNT", dflt);

	return n ? n : 1;
}

#endif /* UNET_TEST_FUZZ_H */
