// GPU time through HIP events: a kernel between two hipEventRecord calls, two
// back-to-back kernels with an event before, between and after them, and
// hipExtLaunchKernelGGL with profiling events. Prints each hipEventElapsedTime in
// milliseconds (`NAME_ms VALUE`, in launch order of the `spin` kernels, so a test can
// compare them with the simulator's per-kernel statistics), checks that the kernels
// computed what they should and that the events are ordered, and ends with PASS.
#include "check.h"
#include <hip/hip_ext.h>

// Each thread runs ITERS dependent fused multiply-adds, so the kernel takes simulated
// time proportional to its argument.
__global__ void spin(float *out, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)i;
    for (int k = 0; k < iters; k++) x = x * 0.5f + 1.0f;
    out[i] = x;
}

#define THREADS 256
#define BLOCKS 8

static float elapsed(hipEvent_t a, hipEvent_t b) {
    float ms = -1.0f;
    HIP_CHECK(hipEventElapsedTime(&ms, a, b));
    return ms;
}

int main() {
    float *out, host[THREADS * BLOCKS];
    HIP_CHECK(hipMalloc(&out, sizeof host));
    hipEvent_t e[3];
    for (int i = 0; i < 3; i++) HIP_CHECK(hipEventCreate(&e[i]));
    int failures = 0;

    // 1. One kernel between two records.
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipEventRecord(e[0], 0));
    hipLaunchKernelGGL(spin, dim3(BLOCKS), dim3(THREADS), 0, 0, out, 200);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipEventRecord(e[1], 0));
    HIP_CHECK(hipEventSynchronize(e[1]));
    float single = elapsed(e[0], e[1]);
    printf("single_ms %.9f\n", single);

    // 2. Back to back: e0 spin(100) e1 spin(300) e2, one synchronization.
    HIP_CHECK(hipEventRecord(e[0], 0));
    hipLaunchKernelGGL(spin, dim3(BLOCKS), dim3(THREADS), 0, 0, out, 100);
    HIP_CHECK(hipEventRecord(e[1], 0));
    hipLaunchKernelGGL(spin, dim3(BLOCKS), dim3(THREADS), 0, 0, out, 300);
    HIP_CHECK(hipEventRecord(e[2], 0));
    HIP_CHECK(hipEventSynchronize(e[2]));
    float first = elapsed(e[0], e[1]), second = elapsed(e[1], e[2]), both = elapsed(e[0], e[2]);
    printf("first_ms %.9f\nsecond_ms %.9f\nboth_ms %.9f\n", first, second, both);
    if (!(first > 0.0f && second > first)) report_mismatch(&failures, "ordered, 300 > 100 iterations", 0, second, first);
    float sum = first + second;
    if (both < sum * 0.999f || both > sum * 1.001f) report_mismatch(&failures, "e0..e2 = e0..e1 + e1..e2", 0, both, sum);

    // 3. hipExtLaunchKernelGGL with profiling events.
    hipExtLaunchKernelGGL(spin, dim3(BLOCKS), dim3(THREADS), 0, 0, e[0], e[1], 0, out, 200);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipEventSynchronize(e[1]));
    float ext = elapsed(e[0], e[1]);
    printf("ext_ms %.9f\n", ext);
    if (!(ext > 0.0f)) report_mismatch(&failures, "ext launch time", 0, ext, 0);

    HIP_CHECK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
    for (int i = 0; i < THREADS * BLOCKS; i++) {
        float want = (float)i;
        for (int k = 0; k < 200; k++) want = want * 0.5f + 1.0f;
        if (host[i] != want) report_mismatch(&failures, "out", i, host[i], want);
    }
    return verdict(failures);
}
