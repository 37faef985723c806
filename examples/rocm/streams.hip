// Four streams, each copying its chunk from pinned host memory (hipHostMalloc),
// transforming it and copying it back with hipMemcpyAsync, timed by events; then
// stream 0 waits on the other streams' events and combines all chunks.
#include "check.h"

#define STREAMS 4
#define CHUNK (16 * 1024)

__global__ void transform(const float *in, float *out, int n, float scale, float offset) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * scale + offset;
}

__global__ void combine(float *const *chunks, float *total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float sum = 0.0f;
        for (int s = 0; s < STREAMS; s++) sum += chunks[s][i];
        total[i] = sum;
    }
}

static float input_of(int s, int i) { return (float)((s * 131 + i) % 509); }

int main() {
    hipStream_t streams[STREAMS];
    hipEvent_t start[STREAMS], stop[STREAMS];
    float *host_in[STREAMS], *host_out[STREAMS], *dev_in[STREAMS], *dev_out[STREAMS];
    size_t bytes = CHUNK * sizeof(float);
    for (int s = 0; s < STREAMS; s++) {
        HIP_CHECK(hipStreamCreate(&streams[s]));
        HIP_CHECK(hipEventCreate(&start[s]));
        HIP_CHECK(hipEventCreate(&stop[s]));
        HIP_CHECK(hipHostMalloc((void **)&host_in[s], bytes, hipHostMallocDefault));
        HIP_CHECK(hipHostMalloc((void **)&host_out[s], bytes, hipHostMallocDefault));
        HIP_CHECK(hipMalloc(&dev_in[s], bytes));
        HIP_CHECK(hipMalloc(&dev_out[s], bytes));
        for (int i = 0; i < CHUNK; i++) host_in[s][i] = input_of(s, i);
    }
    const int threads = 256, blocks = CHUNK / threads;
    for (int s = 0; s < STREAMS; s++) {
        HIP_CHECK(hipEventRecord(start[s], streams[s]));
        HIP_CHECK(hipMemcpyAsync(dev_in[s], host_in[s], bytes, hipMemcpyHostToDevice, streams[s]));
        hipLaunchKernelGGL(transform, dim3(blocks), dim3(threads), 0, streams[s], dev_in[s],
                           dev_out[s], CHUNK, (float)(s + 2), (float)s);
        HIP_CHECK(hipGetLastError());
        HIP_CHECK(hipMemcpyAsync(host_out[s], dev_out[s], bytes, hipMemcpyDeviceToHost, streams[s]));
        HIP_CHECK(hipEventRecord(stop[s], streams[s]));
    }

    // Stream 0 combines the chunks once every stream's work is done.
    float **dev_chunks, *dev_total, *host_total;
    HIP_CHECK(hipMalloc(&dev_chunks, sizeof dev_out));
    HIP_CHECK(hipMalloc(&dev_total, bytes));
    HIP_CHECK(hipHostMalloc((void **)&host_total, bytes, hipHostMallocDefault));
    HIP_CHECK(hipMemcpyAsync(dev_chunks, dev_out, sizeof dev_out, hipMemcpyHostToDevice, streams[0]));
    for (int s = 1; s < STREAMS; s++) HIP_CHECK(hipStreamWaitEvent(streams[0], stop[s], 0));
    hipLaunchKernelGGL(combine, dim3(blocks), dim3(threads), 0, streams[0], dev_chunks, dev_total, CHUNK);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemcpyAsync(host_total, dev_total, bytes, hipMemcpyDeviceToHost, streams[0]));

    int failures = 0;
    for (int s = 0; s < STREAMS; s++) {
        HIP_CHECK(hipEventSynchronize(stop[s]));
        HIP_CHECK(hipEventQuery(stop[s]));
        float ms = -1.0f;
        HIP_CHECK(hipEventElapsedTime(&ms, start[s], stop[s]));
        if (!(ms >= 0.0f)) report_mismatch(&failures, "elapsed_ms", s, ms, 0.0);
        for (int i = 0; i < CHUNK; i++) {
            float want = input_of(s, i) * (float)(s + 2) + (float)s;
            if (host_out[s][i] != want) report_mismatch(&failures, "chunk", (long)s * CHUNK + i, host_out[s][i], want);
        }
    }
    HIP_CHECK(hipStreamSynchronize(streams[0]));
    for (int i = 0; i < CHUNK; i++) {
        float want = 0.0f;
        for (int s = 0; s < STREAMS; s++) want += input_of(s, i) * (float)(s + 2) + (float)s;
        if (host_total[i] != want) report_mismatch(&failures, "total", i, host_total[i], want);
    }
    printf("streams: %d streams of %d floats\n", STREAMS, CHUNK);
    for (int s = 0; s < STREAMS; s++) {
        HIP_CHECK(hipStreamDestroy(streams[s]));
        HIP_CHECK(hipEventDestroy(start[s]));
        HIP_CHECK(hipEventDestroy(stop[s]));
        HIP_CHECK(hipHostFree(host_in[s]));
        HIP_CHECK(hipHostFree(host_out[s]));
        HIP_CHECK(hipFree(dev_in[s]));
        HIP_CHECK(hipFree(dev_out[s]));
    }
    HIP_CHECK(hipFree(dev_chunks));
    HIP_CHECK(hipFree(dev_total));
    HIP_CHECK(hipHostFree(host_total));
    return verdict(failures);
}
