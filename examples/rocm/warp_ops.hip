// Cross-lane operations on 64-lane waves: __shfl, __shfl_xor, __shfl_up, __shfl_down,
// __ballot, __any, __all and a butterfly sum, each checked lane by lane.
#include "check.h"

#define WAVE 64
#define THREADS 128
#define BLOCKS 2
#define N (THREADS * BLOCKS)
#define WAVES (N / WAVE)

struct LaneResults {
    int shfl[N];
    int shfl_xor[N];
    int up[N];
    int down[N];
    int wave_sum[N];
};

struct WaveResults {
    unsigned long long ballot[WAVES];
    int any_odd_last[WAVES];
    int all_positive[WAVES];
    int all_even[WAVES];
    int warp_size;
};

__device__ int value_of(int t) { return t * 3 + 1; }

__global__ void warp_ops(LaneResults *lanes, WaveResults *waves) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    int wave = t / warpSize;
    int v = value_of(t);
    lanes->shfl[t] = __shfl(v, (lane + 5) % warpSize);
    lanes->shfl_xor[t] = __shfl_xor(v, 13);
    lanes->up[t] = __shfl_up(v, 3);
    lanes->down[t] = __shfl_down(v, 7);
    int sum = v;
    for (int mask = warpSize / 2; mask > 0; mask /= 2) {
        sum += __shfl_xor(sum, mask);
    }
    lanes->wave_sum[t] = sum;
    unsigned long long ballot = __ballot(v % 3 == 1 && (t % 5) != 0);
    // __any and __all return non-zero for true: normalized to 1.
    int any = __any(lane == warpSize - 1 && (wave % 2) == 1) != 0;
    int all_positive = __all(v > 0) != 0;
    int all_even = __all(v % 2 == 0) != 0;
    if (lane == 0) {
        waves->ballot[wave] = ballot;
        waves->any_odd_last[wave] = any;
        waves->all_positive[wave] = all_positive;
        waves->all_even[wave] = all_even;
    }
    if (t == 0) {
        waves->warp_size = warpSize;
    }
}

static int host_value(int t) { return t * 3 + 1; }

int main() {
    LaneResults *dlanes;
    WaveResults *dwaves;
    HIP_CHECK(hipMalloc(&dlanes, sizeof(LaneResults)));
    HIP_CHECK(hipMalloc(&dwaves, sizeof(WaveResults)));
    HIP_CHECK(hipMemset(dlanes, 0, sizeof(LaneResults)));
    HIP_CHECK(hipMemset(dwaves, 0, sizeof(WaveResults)));
    hipLaunchKernelGGL(warp_ops, dim3(BLOCKS), dim3(THREADS), 0, 0, dlanes, dwaves);
    LAUNCH_CHECK();
    static LaneResults lanes;
    static WaveResults waves;
    HIP_CHECK(hipMemcpy(&lanes, dlanes, sizeof lanes, hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(&waves, dwaves, sizeof waves, hipMemcpyDeviceToHost));

    int failures = 0;
    if (waves.warp_size != WAVE) report_mismatch(&failures, "warpSize", 0, waves.warp_size, WAVE);
    for (int t = 0; t < N; t++) {
        int lane = t % WAVE, base = t - lane;
        int want_shfl = host_value(base + (lane + 5) % WAVE);
        int want_xor = host_value(base + (lane ^ 13));
        int want_up = lane >= 3 ? host_value(t - 3) : host_value(t);
        int want_down = lane + 7 < WAVE ? host_value(t + 7) : host_value(t);
        int want_sum = 0;
        for (int l = 0; l < WAVE; l++) want_sum += host_value(base + l);
        if (lanes.shfl[t] != want_shfl) report_mismatch(&failures, "shfl", t, lanes.shfl[t], want_shfl);
        if (lanes.shfl_xor[t] != want_xor) report_mismatch(&failures, "shfl_xor", t, lanes.shfl_xor[t], want_xor);
        if (lanes.up[t] != want_up) report_mismatch(&failures, "shfl_up", t, lanes.up[t], want_up);
        if (lanes.down[t] != want_down) report_mismatch(&failures, "shfl_down", t, lanes.down[t], want_down);
        if (lanes.wave_sum[t] != want_sum) report_mismatch(&failures, "wave_sum", t, lanes.wave_sum[t], want_sum);
    }
    for (int w = 0; w < WAVES; w++) {
        unsigned long long want_ballot = 0;
        for (int l = 0; l < WAVE; l++) {
            int t = w * WAVE + l;
            if (host_value(t) % 3 == 1 && t % 5 != 0) want_ballot |= 1ull << l;
        }
        int want_any = w % 2 == 1;
        if (waves.ballot[w] != want_ballot) {
            fprintf(stderr, "ballot[%d]: got %016llx, want %016llx\n", w, waves.ballot[w], want_ballot);
            failures++;
        }
        if (waves.any_odd_last[w] != want_any) report_mismatch(&failures, "any", w, waves.any_odd_last[w], want_any);
        if (waves.all_positive[w] != 1) report_mismatch(&failures, "all_positive", w, waves.all_positive[w], 1);
        if (waves.all_even[w] != 0) report_mismatch(&failures, "all_even", w, waves.all_even[w], 0);
    }
    printf("warp_ops: %d waves of %d lanes, ballot[0] %016llx\n", WAVES, waves.warp_size, waves.ballot[0]);
    HIP_CHECK(hipFree(dlanes));
    HIP_CHECK(hipFree(dwaves));
    return verdict(failures);
}
