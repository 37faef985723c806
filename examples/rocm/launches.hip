// 200 back-to-back launches of a small kernel on the null stream, each adding its
// launch number to every element, with one synchronization at the end.
#include "check.h"

#define LAUNCHES 200
#define N 1024

__global__ void accumulate(int *v, int launch) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) v[i] += launch + i;
}

int main() {
    int *dv;
    HIP_CHECK(hipMalloc(&dv, N * sizeof(int)));
    HIP_CHECK(hipMemset(dv, 0, N * sizeof(int)));
    for (int k = 0; k < LAUNCHES; k++) {
        hipLaunchKernelGGL(accumulate, dim3(N / 256), dim3(256), 0, 0, dv, k);
        HIP_CHECK(hipGetLastError());
    }
    HIP_CHECK(hipDeviceSynchronize());
    int v[N];
    HIP_CHECK(hipMemcpy(v, dv, sizeof v, hipMemcpyDeviceToHost));
    int failures = 0;
    for (int i = 0; i < N; i++) {
        int want = LAUNCHES * (LAUNCHES - 1) / 2 + LAUNCHES * i;
        if (v[i] != want) report_mismatch(&failures, "v", i, v[i], want);
    }
    printf("launches: %d kernels\n", LAUNCHES);
    HIP_CHECK(hipFree(dv));
    return verdict(failures);
}
