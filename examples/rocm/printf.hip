// Device-side printf: a few work-items of two blocks print integers, a float, a
// string and a pointer-sized hex value; the test checks the text.
#include "check.h"

__global__ void hello(int tag) {
    int t = threadIdx.x;
    if (t % 32 == 0) {
        printf("block %d thread %d tag %d value %.2f %s 0x%llx\n", (int)blockIdx.x, t, tag,
               (double)t * 0.25, "text", 0xabcdef12345ull + t);
    }
}

int main() {
    hipLaunchKernelGGL(hello, dim3(2), dim3(64), 0, 0, 7);
    LAUNCH_CHECK();
    // Four lines above; the host's own line comes after the device's have been flushed.
    printf("printf: launched 2 blocks of 64\n");
    return verdict(0);
}
