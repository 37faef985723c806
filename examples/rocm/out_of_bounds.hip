// A kernel that stores far outside any allocation (0x7000_0000_0000). On a GPU the
// runtime reports "Memory access fault by GPU node-N ... on address 0x700000000000"
// and aborts the process; if the program gets past the synchronization, it fails.
#include "check.h"

#define WILD_ADDRESS 0x700000000000ull

__global__ void wild_store(int value) {
    int *p = (int *)(WILD_ADDRESS + 4096ull * threadIdx.x);
    *p = value;
}

int main() {
    hipLaunchKernelGGL(wild_store, dim3(1), dim3(64), 0, 0, 42);
    hipError_t launch = hipGetLastError();
    hipError_t sync = hipDeviceSynchronize();
    // Reached only if the runtime did not abort on the fault.
    fprintf(stderr, "out_of_bounds: launch: %s, synchronize: %s\n", hipGetErrorString(launch),
            hipGetErrorString(sync));
    printf("FAIL (the wild store did not fault)\n");
    return 1;
}
