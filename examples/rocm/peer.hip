// Peer-to-peer on a multi-GPU node (run on topologies/mi210x4.toml): every GPU is
// visible, peers can access each other, a kernel on GPU 0 reads GPU 1's memory and
// writes GPU 2's, and hipMemcpyPeer copies GPU 2's buffer to GPU 3; all checked on the
// host. N from argv[1] (default 64 Ki ints).
#include "check.h"

__global__ void fill(int *p, long n, int scale) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i] = (int)(i % 1009) * scale + 1;
    }
}

// Runs on one GPU; `src` and `dst` live on two others.
__global__ void scale_across(const int *src, int *dst, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = src[i] * 2 + 5;
    }
}

static dim3 grid_of(long n) { return dim3((unsigned)((n + 255) / 256)); }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 64L * 1024;
    if (n <= 0) {
        fprintf(stderr, "usage: %s [N > 0]\n", argv[0]);
        return 2;
    }
    size_t bytes = (size_t)n * sizeof(int);
    int failures = 0;

    int devices = 0;
    HIP_CHECK(hipGetDeviceCount(&devices));
    printf("devices: %d\n", devices);
    if (devices < 4) {
        fprintf(stderr, "need 4 GPUs, have %d\n", devices);
        return verdict(1);
    }
    for (int a = 0; a < 4; a++) {
        for (int b = 0; b < 4; b++) {
            if (a == b) {
                continue;
            }
            int can = 0;
            HIP_CHECK(hipDeviceCanAccessPeer(&can, a, b));
            if (!can) {
                fprintf(stderr, "GPU %d cannot access GPU %d\n", a, b);
                failures++;
            }
        }
    }

    // Each GPU's buffer, allocated with that GPU current.
    int *buf[4];
    for (int d = 0; d < 4; d++) {
        HIP_CHECK(hipSetDevice(d));
        HIP_CHECK(hipMalloc(&buf[d], bytes));
        HIP_CHECK(hipMemset(buf[d], 0, bytes));
    }
    HIP_CHECK(hipSetDevice(1));
    hipLaunchKernelGGL(fill, grid_of(n), dim3(256), 0, 0, buf[1], n, 3);
    LAUNCH_CHECK();

    // GPU 0 reads GPU 1's memory and writes GPU 2's, over the XGMI links.
    HIP_CHECK(hipSetDevice(0));
    HIP_CHECK(hipDeviceEnablePeerAccess(1, 0));
    HIP_CHECK(hipDeviceEnablePeerAccess(2, 0));
    hipLaunchKernelGGL(scale_across, grid_of(n), dim3(256), 0, 0, buf[1], buf[2], n);
    LAUNCH_CHECK();

    // GPU 2 -> GPU 3.
    HIP_CHECK(hipMemcpyPeer(buf[3], 3, buf[2], 2, bytes));
    HIP_CHECK(hipSetDevice(3));
    HIP_CHECK(hipDeviceSynchronize());

    int *host = (int *)malloc(bytes);
    if (!host) {
        fprintf(stderr, "out of host memory\n");
        return 2;
    }
    HIP_CHECK(hipMemcpy(host, buf[3], bytes, hipMemcpyDeviceToHost));
    long long sum = 0;
    for (long i = 0; i < n; i++) {
        int want = ((int)(i % 1009) * 3 + 1) * 2 + 5;
        if (host[i] != want) {
            report_mismatch(&failures, "gpu3", i, host[i], want);
        }
        sum += host[i];
    }
    printf("peer: %ld ints, checksum %lld\n", n, sum);
    for (int d = 0; d < 4; d++) {
        HIP_CHECK(hipSetDevice(d));
        HIP_CHECK(hipFree(buf[d]));
    }
    free(host);
    return verdict(failures);
}
