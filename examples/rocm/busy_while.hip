// Keeps the GPU and its memory busy while another program looks at it: launches a
// workgroup of four waves per compute unit, which stream through a 64 MiB device
// buffer (eight times the L2) until the host sets a flag in pinned host memory; waits
// until the first wave has started
// (it says so through the same memory) and then MS milliseconds more (first argument,
// default 300: a few refreshes of the driver's activity figures), runs the command
// given as the remaining arguments through system() while the wave still spins (e.g.
// `rocm-smi --showuse --showmemuse`, which must see a busy GPU), then releases the
// waves, waits for them and ends with PASS if the command exited 0 and the first wave
// saw the flag.
#include "check.h"
#include <string.h>
#include <unistd.h>
#include <string>

// flags[0]: set by the host to stop; flags[1]: set by the first wave when it starts,
// and to 2 when it saw the stop flag. System-scope atomics, so each side sees the other's
// store while the kernel runs.
#define WORDS (16u << 20)
__global__ void spin(unsigned *flags, const unsigned *buffer, unsigned *sum) {
    unsigned id = blockIdx.x * blockDim.x + threadIdx.x, i = id, total = 0;
    bool first = id == 0;
    if (first) __hip_atomic_store(&flags[1], 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
    while (__hip_atomic_load(&flags[0], __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) == 0) {
        total += buffer[i];
        i = (i + gridDim.x * blockDim.x) % WORDS;
    }
    sum[id] = total;
    if (first) __hip_atomic_store(&flags[1], 2u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}

int main(int argc, char **argv) {
    unsigned ms = argc > 1 ? strtoul(argv[1], NULL, 10) : 300;
    unsigned *flags;
    HIP_CHECK(hipHostMalloc((void **)&flags, 2 * sizeof(unsigned), hipHostMallocCoherent));
    flags[0] = flags[1] = 0;
    unsigned *buffer, *sum;
    HIP_CHECK(hipMalloc(&buffer, WORDS * sizeof(unsigned)));
    hipDeviceProp_t props;
    HIP_CHECK(hipGetDeviceProperties(&props, 0));
    unsigned blocks = props.multiProcessorCount, threads = 256;
    HIP_CHECK(hipMalloc(&sum, blocks * threads * sizeof(unsigned)));
    hipLaunchKernelGGL(spin, dim3(blocks), dim3(threads), 0, 0, flags, buffer, sum);
    HIP_CHECK(hipGetLastError());
    while (__atomic_load_n(&flags[1], __ATOMIC_ACQUIRE) == 0) {
        usleep(1000);
    }
    usleep(ms * 1000);
    std::string command;
    for (int i = 2; i < argc; i++) {
        command += i > 2 ? " " : "";
        command += argv[i];
    }
    int failures = 0;
    if (!command.empty()) {
        fflush(stdout);
        int status = system(command.c_str());
        if (status != 0) report_mismatch(&failures, "command status", 0, status, 0);
    }
    __atomic_store_n(&flags[0], 1u, __ATOMIC_RELEASE);
    HIP_CHECK(hipDeviceSynchronize());
    if (flags[1] != 2) report_mismatch(&failures, "the wave's state", 1, flags[1], 2);
    HIP_CHECK(hipHostFree(flags));
    HIP_CHECK(hipFree(buffer));
    HIP_CHECK(hipFree(sum));
    return verdict(failures);
}
