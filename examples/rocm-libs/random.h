// Shared by the random-number programs (rocrand.hip, hiprand.hip): rocRAND's device
// API compiled for the host as well (the host reference), and the element-by-element
// check of generated numbers.
#pragma once
#include <hip/hip_runtime.h>
// Device API functions become host functions too: the host computes the sequences.
#define FQUALIFIERS __forceinline__ __device__ __host__
#include <rocrand/rocrand_kernel.h>
#include <rocrand/rocrand_sobol32_precomputed.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../rocm/check.h"

static int failures = 0;

// Distance in units in the last place between two finite floats.
static uint32_t ulps(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    int64_t d = (int64_t)ia - (int64_t)ib;
    return (uint32_t)std::min<int64_t>(d < 0 ? -d : d, UINT32_MAX);
}

// Compares element by element (`max_ulps` 0 asks for equal bits); prints `name ok` or
// `name FAIL` and counts a failure.
template <class T>
static void expect(const char *name, const std::vector<T> &got, const std::vector<T> &want, uint32_t max_ulps) {
    int bad = 0;
    for (size_t i = 0; i < want.size(); i++) {
        bool same;
        if constexpr (std::is_same_v<T, float>)
            same = ulps(got[i], want[i]) <= max_ulps;
        else
            same = got[i] == want[i];
        if (!same && bad++ < 4) fprintf(stderr, "%s[%zu]: got %.9g, want %.9g\n", name, i, (double)got[i], (double)want[i]);
    }
    printf("%s %s\n", name, bad ? "FAIL" : "ok");
    failures += bad != 0;
}

// Compares floats within the absolute tolerance `tol`; prints `name ok` or `name FAIL`.
// For normal draws: the device's Box-Muller goes through the GPU's fast log and its
// sin/cos in revolutions (the angle rounded twice on the way), the host's through libm,
// so values near zero differ by far more ULPs than their size suggests, while the
// absolute difference stays a few 2^-20 of the distribution's scale.
static void expect_near(const char *name, const std::vector<float> &got, const std::vector<float> &want, float tol) {
    int bad = 0;
    for (size_t i = 0; i < want.size(); i++) {
        bool same = std::fabs(got[i] - want[i]) <= tol;
        if (!same && bad++ < 4) fprintf(stderr, "%s[%zu]: got %.9g, want %.9g\n", name, i, (double)got[i], (double)want[i]);
    }
    printf("%s %s\n", name, bad ? "FAIL" : "ok");
    failures += bad != 0;
}

// The tolerance of normal draws with `mean` and `stddev`: 2^-18 of |mean| + 4 stddev.
static float normal_tolerance(float mean, float stddev) {
    return std::ldexp(std::fabs(mean) + 4.0f * stddev, -18);
}

// Sobol32 dimension 0's point j, as the host API's element j.
static rocrand_state_sobol32 sobol_point(size_t j) {
    rocrand_state_sobol32 s;
    rocrand_init(h_sobol32_direction_vectors, (unsigned)j, &s);
    return s;
}
