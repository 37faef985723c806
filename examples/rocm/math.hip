// Float and double math on the device (sin, cos, exp, log, sqrt, fma, pow, tanh,
// atan2, erf, cbrt), each compared with the host's libm: fma exactly, the others
// within a few units in the last place.
#include <math.h>

#include "check.h"

#define N 1024
#define FLOAT_FUNCS 9
#define DOUBLE_FUNCS 9

static const char *float_names[FLOAT_FUNCS] = {"sinf", "cosf", "expf", "logf", "sqrtf",
                                               "fmaf", "powf", "tanhf", "atan2f"};
static const char *double_names[DOUBLE_FUNCS] = {"sin", "cos", "exp", "log", "sqrt",
                                                 "fma", "pow", "erf", "cbrt"};

__host__ __device__ float input_f(int i) { return -8.0f + 16.0f * (float)i / (float)N + 0.0013f; }
__host__ __device__ double input_d(int i) { return -8.0 + 16.0 * (double)i / (double)N + 0.00071; }

__host__ __device__ void float_funcs(int i, float *out) {
    float x = input_f(i), y = fabsf(x) + 0.1f, z = input_f((i * 7) % N);
    out[0] = sinf(x);
    out[1] = cosf(x);
    out[2] = expf(x);
    out[3] = logf(y);
    out[4] = sqrtf(y);
    out[5] = fmaf(x, z, 0.3f);
    out[6] = powf(y, 1.7f);
    out[7] = tanhf(x);
    out[8] = atan2f(x, z);
}

__host__ __device__ void double_funcs(int i, double *out) {
    double x = input_d(i), y = fabs(x) + 0.1, z = input_d((i * 7) % N);
    out[0] = sin(x);
    out[1] = cos(x);
    out[2] = exp(x);
    out[3] = log(y);
    out[4] = sqrt(y);
    out[5] = fma(x, z, 0.3);
    out[6] = pow(y, 1.7);
    out[7] = erf(x);
    out[8] = cbrt(x);
}

__global__ void compute(float *f, double *d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float_funcs(i, f + i * FLOAT_FUNCS);
        double_funcs(i, d + i * DOUBLE_FUNCS);
    }
}

// Within `ulps` units in the last place of the reference (at least of its magnitude's ulp).
static int close_enough(double got, double want, double ulp, double ulps) {
    double tolerance = ulps * ulp * fmax(fabs(want), 1e-3);
    return fabs(got - want) <= tolerance;
}

int main() {
    static float f[N * FLOAT_FUNCS];
    static double d[N * DOUBLE_FUNCS];
    float *df;
    double *dd;
    HIP_CHECK(hipMalloc(&df, sizeof f));
    HIP_CHECK(hipMalloc(&dd, sizeof d));
    hipLaunchKernelGGL(compute, dim3(N / 128), dim3(128), 0, 0, df, dd);
    LAUNCH_CHECK();
    HIP_CHECK(hipMemcpy(f, df, sizeof f, hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(d, dd, sizeof d, hipMemcpyDeviceToHost));
    int failures = 0;
    const double float_ulp = 1.0 / (1 << 23), double_ulp = 1.0 / (1ull << 52);
    for (int i = 0; i < N; i++) {
        float wf[FLOAT_FUNCS];
        double wd[DOUBLE_FUNCS];
        float_funcs(i, wf);
        double_funcs(i, wd);
        for (int k = 0; k < FLOAT_FUNCS; k++) {
            float got = f[i * FLOAT_FUNCS + k];
            int ok = k == 5 ? got == wf[k] : close_enough(got, wf[k], float_ulp, 8.0);
            if (!ok) report_mismatch(&failures, float_names[k], i, got, wf[k]);
        }
        for (int k = 0; k < DOUBLE_FUNCS; k++) {
            double got = d[i * DOUBLE_FUNCS + k];
            int ok = k == 5 ? got == wd[k] : close_enough(got, wd[k], double_ulp, 8.0);
            if (!ok) report_mismatch(&failures, double_names[k], i, got, wd[k]);
        }
    }
    printf("math: %d inputs, %d float and %d double functions\n", N, FLOAT_FUNCS, DOUBLE_FUNCS);
    HIP_CHECK(hipFree(df));
    HIP_CHECK(hipFree(dd));
    return verdict(failures);
}
