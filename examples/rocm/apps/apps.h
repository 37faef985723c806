// Shared by the benchmark applications (`dojo bench apps`): check.h's checks, verdict
// and digest, and the deterministic inputs every program draws from.
#pragma once
#include "../check.h"

// A well-mixed 32-bit value for index `i` of the sequence `seed` (the MurmurHash3
// finalizer): the same inputs on every machine and every run, with no generator state.
static inline unsigned mix32(unsigned long long i, unsigned seed) {
    unsigned long long x = i * 0x9e3779b97f4a7c15ull + seed;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (unsigned)x;
}
