// Sorts N key-value pairs (32-bit keys, the values their original positions) with
// Debian's rocPRIM device radix sort, checked against a stable sort on the host (a
// radix sort is stable, so the values' order is defined too).
//
// argv[1]: N (default 4 Mi).
#include <rocprim/rocprim.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

#include "apps.h"

int main(int argc, char **argv) {
    const long n = argc > 1 ? atol(argv[1]) : 4L << 20;
    if (n <= 0 || n > 1L << 28) {
        fprintf(stderr, "usage: %s [N]\n", argv[0]);
        return 2;
    }
    std::vector<unsigned> keys(n), values(n);
    for (long i = 0; i < n; i++) {
        // Keys below 2^24 with repeats, so stability shows in the values.
        keys[i] = mix32(i, 8) >> 8;
        values[i] = (unsigned)i;
    }
    const size_t bytes = n * sizeof(unsigned);
    unsigned *keys_in, *keys_out, *values_in, *values_out;
    HIP_CHECK(hipMalloc(&keys_in, bytes));
    HIP_CHECK(hipMalloc(&keys_out, bytes));
    HIP_CHECK(hipMalloc(&values_in, bytes));
    HIP_CHECK(hipMalloc(&values_out, bytes));
    HIP_CHECK(hipMemcpy(keys_in, keys.data(), bytes, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(values_in, values.data(), bytes, hipMemcpyHostToDevice));
    size_t temp_bytes = 0;
    HIP_CHECK(rocprim::radix_sort_pairs(nullptr, temp_bytes, keys_in, keys_out, values_in, values_out, (size_t)n));
    void *temp;
    HIP_CHECK(hipMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
    HIP_CHECK(rocprim::radix_sort_pairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, (size_t)n));
    HIP_CHECK(hipDeviceSynchronize());
    std::vector<unsigned> got_keys(n), got_values(n);
    HIP_CHECK(hipMemcpy(got_keys.data(), keys_out, bytes, hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(got_values.data(), values_out, bytes, hipMemcpyDeviceToHost));

    std::vector<unsigned> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](unsigned x, unsigned y) { return keys[x] < keys[y]; });
    int failures = 0;
    for (long i = 0; i < n; i++) {
        if (got_keys[i] != keys[order[i]]) report_mismatch(&failures, "keys", i, got_keys[i], keys[order[i]]);
        if (got_values[i] != order[i]) report_mismatch(&failures, "values", i, got_values[i], order[i]);
    }
    printf("rocprim_sort: %ld pairs, %zu bytes of temporary storage\n", n, temp_bytes);
    unsigned long long hash = digest_bytes(DIGEST_START, got_keys.data(), bytes);
    print_digest(digest_bytes(hash, got_values.data(), bytes));
    for (void *p : {(void *)keys_in, (void *)keys_out, (void *)values_in, (void *)values_out, temp}) {
        HIP_CHECK(hipFree(p));
    }
    return verdict(failures);
}
