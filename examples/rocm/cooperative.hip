// Cooperative launch and grid-wide synchronization (cooperative groups' grid sync, which
// ROCm's device library implements with the GPU's global wave sync, ds_gws_barrier).
//
// - hipDeviceAttributeCooperativeLaunch must be 1.
// - A cooperative kernel on the largest grid HIP allows (every block co-resident) runs
//   PHASES phases; each phase's values depend on the totals of every block's results of
//   the phase before, which only a grid-wide sync between phases makes visible. The
//   totals are checked against the host.
// - A grid one block larger is refused with hipErrorCooperativeLaunchTooLarge (it would
//   deadlock at the first grid sync if it were launched).
// - A multi-device cooperative launch on this one GPU runs (multi-grid sync), and one on
//   more GPUs than the machine has is refused.
// Integer arithmetic modulo 2^64, so results are exact in any order.
//
// `cooperative plain` launches the grid-syncing kernel with an ordinary launch instead:
// its queue holds no GWS resources, so the grid sync faults the dispatch (the simulator
// names the instruction and the reason) and the runtime aborts the program.
#include "check.h"

#include <hip/hip_cooperative_groups.h>
#include <string.h>

namespace cg = cooperative_groups;

#define THREADS 256
#define PHASES 4
#define PER_THREAD 2

typedef unsigned long long u64;

// The value of element i in phase p, given the previous phase's grid total.
__host__ __device__ static inline u64 element(u64 x, int p, u64 prev) {
    return x * (2 * (prev % 1000003) + 1) + (u64)p * 0x9e3779b97f4a7c15ull + (prev >> 7);
}

// Sums the block's values in shared memory; thread 0 gets the total.
__device__ static u64 block_sum(u64 v, u64 *scratch) {
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            scratch[threadIdx.x] += scratch[threadIdx.x + stride];
        }
        __syncthreads();
    }
    u64 total = scratch[0];
    __syncthreads();
    return total;
}

// Phase p: every block reads all partial sums of phase p - 1 (written by every block
// before the grid sync), derives the previous total, transforms its elements with it,
// and publishes its own partial sum of phase p. totals[p] is the grid total of phase p.
__global__ void phases(const u64 *x, int n, u64 *partials, u64 *totals) {
    __shared__ u64 scratch[THREADS];
    cg::grid_group grid = cg::this_grid();
    int blocks = gridDim.x;
    u64 prev = 0;
    for (int p = 0; p < PHASES; p++) {
        u64 mine = 0;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blocks * blockDim.x) {
            mine += element(x[i], p, prev);
        }
        u64 sum = block_sum(mine, scratch);
        if (threadIdx.x == 0) {
            partials[(size_t)p * blocks + blockIdx.x] = sum;
        }
        grid.sync();
        // Every block now sees every block's partial sum of this phase.
        u64 total = 0;
        for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
            total += partials[(size_t)p * blocks + b];
        }
        total = block_sum(total, scratch);
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            totals[p] = total;
        }
        prev = total;
    }
}

// The multi-grid flavour: one phase, a multi-grid sync, then block 0 sums the partials.
__global__ void multi(const u64 *x, int n, u64 *partials, u64 *total) {
    __shared__ u64 scratch[THREADS];
    cg::multi_grid_group mgrid = cg::this_multi_grid();
    u64 mine = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        mine += element(x[i], 0, 0);
    }
    u64 sum = block_sum(mine, scratch);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
    }
    mgrid.sync();
    if (blockIdx.x == 0) {
        u64 t = 0;
        for (int b = threadIdx.x; b < (int)gridDim.x; b += blockDim.x) {
            t += partials[b];
        }
        t = block_sum(t, scratch);
        if (threadIdx.x == 0) {
            *total = t;
        }
    }
}

int main(int argc, char **argv) {
    bool plain = argc > 1 && strcmp(argv[1], "plain") == 0;
    int failures = 0;
    int device = 0;
    HIP_CHECK(hipSetDevice(device));
    int coop = 0, coop_multi = 0, cus = 0;
    HIP_CHECK(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, device));
    HIP_CHECK(hipDeviceGetAttribute(&coop_multi, hipDeviceAttributeCooperativeMultiDeviceLaunch, device));
    HIP_CHECK(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, device));
    printf("cooperative launch: %d, multi-device: %d\n", coop, coop_multi);
    if (coop != 1) {
        fprintf(stderr, "hipDeviceAttributeCooperativeLaunch is %d\n", coop);
        return verdict(1);
    }

    int per_cu = 0;
    HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, phases, THREADS, 0));
    int blocks = per_cu * cus;
    if (blocks <= 0) {
        fprintf(stderr, "occupancy: %d blocks per CU\n", per_cu);
        return verdict(1);
    }
    int n = blocks * THREADS * PER_THREAD;
    printf("grid: %d blocks of %d threads (%d per compute unit), %d elements\n", blocks,
           THREADS, per_cu, n);

    u64 *x = (u64 *)malloc(n * sizeof(u64));
    for (int i = 0; i < n; i++) {
        x[i] = (u64)i * 2654435761ull + 12345;
    }
    u64 want[PHASES];
    u64 prev = 0;
    for (int p = 0; p < PHASES; p++) {
        u64 t = 0;
        for (int i = 0; i < n; i++) {
            t += element(x[i], p, prev);
        }
        want[p] = t;
        prev = t;
    }

    u64 *dx, *dpartials, *dtotals;
    HIP_CHECK(hipMalloc(&dx, n * sizeof(u64)));
    HIP_CHECK(hipMalloc(&dpartials, (size_t)PHASES * blocks * sizeof(u64)));
    HIP_CHECK(hipMalloc(&dtotals, PHASES * sizeof(u64)));
    HIP_CHECK(hipMemcpy(dx, x, n * sizeof(u64), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemset(dtotals, 0, PHASES * sizeof(u64)));

    void *args[] = {&dx, &n, &dpartials, &dtotals};
    if (plain) {
        hipLaunchKernelGGL(phases, dim3(blocks), dim3(THREADS), 0, 0, dx, n, dpartials, dtotals);
        LAUNCH_CHECK();
        printf("a grid sync in an ordinary launch did not fault\n");
        return verdict(1);
    }
    HIP_CHECK(hipLaunchCooperativeKernel((const void *)phases, dim3(blocks), dim3(THREADS), args, 0, 0));
    LAUNCH_CHECK();
    u64 got[PHASES];
    HIP_CHECK(hipMemcpy(got, dtotals, sizeof(got), hipMemcpyDeviceToHost));
    for (int p = 0; p < PHASES; p++) {
        printf("phase %d: total %llu\n", p, got[p]);
        if (got[p] != want[p]) {
            report_mismatch(&failures, "phase total", p, (double)got[p], (double)want[p]);
        }
    }

    // One block more than can be resident at once: refused, not launched.
    int too_many = blocks + 1;
    hipError_t e = hipLaunchCooperativeKernel((const void *)phases, dim3(too_many), dim3(THREADS), args, 0, 0);
    printf("%d blocks: %s\n", too_many, hipGetErrorName(e));
    if (e != hipErrorCooperativeLaunchTooLarge) {
        fprintf(stderr, "a cooperative grid of %d blocks gave %s\n", too_many, hipGetErrorName(e));
        failures++;
    }
    (void)hipGetLastError();

    // Multi-device cooperative launch on the one GPU.
    if (coop_multi) {
        u64 *dtotal;
        HIP_CHECK(hipMalloc(&dtotal, sizeof(u64)));
        HIP_CHECK(hipMemset(dtotal, 0, sizeof(u64)));
        hipStream_t stream;
        HIP_CHECK(hipStreamCreate(&stream));
        void *margs[] = {&dx, &n, &dpartials, &dtotal};
        hipLaunchParams launch;
        launch.func = (void *)multi;
        launch.gridDim = dim3(blocks);
        launch.blockDim = dim3(THREADS);
        launch.args = margs;
        launch.sharedMem = 0;
        launch.stream = stream;
        HIP_CHECK(hipLaunchCooperativeKernelMultiDevice(&launch, 1, 0));
        HIP_CHECK(hipStreamSynchronize(stream));
        u64 total = 0;
        HIP_CHECK(hipMemcpy(&total, dtotal, sizeof(u64), hipMemcpyDeviceToHost));
        u64 want_multi = 0;
        for (int i = 0; i < n; i++) {
            want_multi += element(x[i], 0, 0);
        }
        printf("multi-device launch on 1 GPU: total %llu\n", total);
        if (total != want_multi) {
            report_mismatch(&failures, "multi-grid total", 0, (double)total, (double)want_multi);
        }
        // Two launch entries but one GPU: refused before anything runs.
        hipLaunchParams two[2] = {launch, launch};
        e = hipLaunchCooperativeKernelMultiDevice(two, 2, 0);
        printf("multi-device launch on 2 GPUs: %s\n", hipGetErrorName(e));
        if (e == hipSuccess) {
            fprintf(stderr, "a multi-device launch on 2 GPUs of a 1-GPU machine succeeded\n");
            failures++;
        }
        (void)hipGetLastError();
        HIP_CHECK(hipStreamDestroy(stream));
        HIP_CHECK(hipFree(dtotal));
    }

    HIP_CHECK(hipFree(dx));
    HIP_CHECK(hipFree(dpartials));
    HIP_CHECK(hipFree(dtotals));
    free(x);
    return verdict(failures);
}
