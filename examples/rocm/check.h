// Shared by the HIP examples: error checks that stop the program with FAIL, and the
// PASS/FAIL verdict every program ends with (exit status 0 or 1).
#pragma once
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define HIP_CHECK(expr)                                                              \
    do {                                                                             \
        hipError_t check_err_ = (expr);                                              \
        if (check_err_ != hipSuccess) {                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,            \
                    hipGetErrorString(check_err_));                                  \
            printf("FAIL\n");                                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

// Launches, then checks both the launch and the kernel's completion.
#define LAUNCH_CHECK()                                                               \
    do {                                                                             \
        HIP_CHECK(hipGetLastError());                                                \
        HIP_CHECK(hipDeviceSynchronize());                                           \
    } while (0)

// Counts a failed check, printing the first few.
static inline int report_mismatch(int *failures, const char *what, long index, double got,
                                  double want) {
    if (*failures < 8) {
        fprintf(stderr, "%s[%ld]: got %.17g, want %.17g\n", what, index, got, want);
    }
    return ++*failures;
}

// FNV-1a (64-bit) over `bytes` bytes at `data`, continuing from `hash` (start with
// DIGEST_START): a fingerprint of a program's output, which runs on other simulator
// versions or worker counts must reproduce bit for bit.
#define DIGEST_START 0xcbf29ce484222325ull
static inline unsigned long long digest_bytes(unsigned long long hash, const void *data, size_t bytes) {
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < bytes; i++) {
        hash = (hash ^ p[i]) * 0x100000001b3ull;
    }
    return hash;
}

// Prints `digest <16 hex digits>`, the line `dojo bench apps` reads.
static inline void print_digest(unsigned long long hash) {
    printf("digest %016llx\n", hash);
}

// Prints the verdict and returns the exit status.
static inline int verdict(int failures) {
    if (failures == 0) {
        printf("PASS\n");
        return 0;
    }
    printf("FAIL (%d mismatches)\n", failures);
    return 1;
}
