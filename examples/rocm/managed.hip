// Managed (SVM) memory: hipMallocManaged written by the host, updated by kernels and read
// back; hipMemPrefetchAsync to the device and back; hipMemAdvise (read-mostly, preferred
// location, accessed-by) checked with hipMemRangeGetAttribute; an allocation larger than
// the driver's largest range (1 GiB) touched at every MiB; host and kernel taking turns
// on one range; and, when the device can access pageable memory (XNACK on:
// HSA_XNACK=1), a kernel on plain malloc memory. Without SVM (the device reports no
// managed memory, as under `dojo run --daemon`) HIP backs hipMallocManaged with pinned
// host memory: the data checks still run, the SVM-only ones are skipped.
//
// `managed malloc` runs only a kernel on plain malloc memory, whatever the device says:
// with XNACK on it passes; with XNACK off the memory is neither mapped for the GPU nor
// registered with SVM, so the runtime must report a GPU memory access fault and abort.
// `managed readonly` stores from a kernel into read-only (PROT_READ) memory: with XNACK
// on, the runtime must report a write access to a read-only page and abort.
// `managed freed` (XNACK on) runs a kernel on a large malloc block, frees it and runs the
// kernel on it again: the second run must be a memory access fault (page not present).
#include "check.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

__global__ void add_index(int *a, long n, int k) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = a[i] * 2 + (int)(i % 1000) + k;
    }
}

// One int in each MiB of a large range.
__global__ void touch_every_mib(int *base, long mibs, int tag) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < mibs) {
        int *p = base + i * (1L << 20) / (long)sizeof(int);
        *p = *p + (int)i + tag;
    }
}

static void launch_add(int *a, long n, int k, hipStream_t s) {
    const int threads = 256;
    hipLaunchKernelGGL(add_index, dim3((unsigned)((n + threads - 1) / threads)), dim3(threads), 0, s,
                       a, n, k);
}

static int host_then_kernel(int *failures) {
    const long n = 100000;  // not a multiple of the page size
    int *a;
    HIP_CHECK(hipMallocManaged((void **)&a, n * sizeof(int), hipMemAttachGlobal));
    for (long i = 0; i < n; i++) a[i] = (int)(i % 77);
    launch_add(a, n, 5, 0);
    LAUNCH_CHECK();
    long sum = 0;
    for (long i = 0; i < n; i++) {
        int want = (int)(i % 77) * 2 + (int)(i % 1000) + 5;
        if (a[i] != want) report_mismatch(failures, "managed", i, a[i], want);
        sum += a[i];
    }
    printf("host -> kernel -> host: %ld ints, sum %ld\n", n, sum);
    HIP_CHECK(hipFree(a));
    return 0;
}

static void prefetch_round_trip(int *failures, int svm) {
    const long n = 1L << 18;  // 1 MiB
    int *a;
    HIP_CHECK(hipMallocManaged((void **)&a, n * sizeof(int), hipMemAttachGlobal));
    for (long i = 0; i < n; i++) a[i] = (int)i;
    hipStream_t s;
    HIP_CHECK(hipStreamCreate(&s));
    HIP_CHECK(hipMemPrefetchAsync(a, n * sizeof(int), 0, s));
    launch_add(a, n, 1, s);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipMemPrefetchAsync(a, n * sizeof(int), hipCpuDeviceId, s));
    HIP_CHECK(hipStreamSynchronize(s));
    int where = -7;
    if (svm) {
        HIP_CHECK(hipMemRangeGetAttribute(&where, sizeof(where),
                                          hipMemRangeAttributeLastPrefetchLocation, a, n * sizeof(int)));
    }
    for (long i = 0; i < n; i++) {
        int want = (int)i * 2 + (int)(i % 1000) + 1;
        if (a[i] != want) report_mismatch(failures, "prefetched", i, a[i], want);
    }
    printf("prefetch to device and back: last prefetch location %s\n",
           where == hipCpuDeviceId ? "cpu" : where == 0 ? "device 0" : "not recorded");
    HIP_CHECK(hipStreamDestroy(s));
    HIP_CHECK(hipFree(a));
}

static void advice(int *failures, int svm) {
    const long n = 3 * 4096;
    int *a;
    HIP_CHECK(hipMallocManaged((void **)&a, n * sizeof(int), hipMemAttachGlobal));
    const size_t bytes = n * sizeof(int);
    if (!svm) {
        // HIP ignores advice without SVM; the range queries have nothing to report.
        for (long i = 0; i < n; i++) a[i] = 1;
        launch_add(a, n, 0, 0);
        LAUNCH_CHECK();
        for (long i = 0; i < n; i++) {
            int want = 2 + (int)(i % 1000);
            if (a[i] != want) report_mismatch(failures, "advised", i, a[i], want);
        }
        printf("advice: skipped (no SVM)\n");
        HIP_CHECK(hipFree(a));
        return;
    }
    HIP_CHECK(hipMemAdvise(a, bytes, hipMemAdviseSetReadMostly, 0));
    HIP_CHECK(hipMemAdvise(a, bytes, hipMemAdviseSetPreferredLocation, 0));
    HIP_CHECK(hipMemAdvise(a, bytes, hipMemAdviseSetAccessedBy, 0));
    int read_mostly = -1, preferred = -7;
    HIP_CHECK(hipMemRangeGetAttribute(&read_mostly, sizeof(read_mostly),
                                      hipMemRangeAttributeReadMostly, a, bytes));
    HIP_CHECK(hipMemRangeGetAttribute(&preferred, sizeof(preferred),
                                      hipMemRangeAttributePreferredLocation, a, bytes));
    int accessed_by[4] = {-7, -7, -7, -7};
    HIP_CHECK(hipMemRangeGetAttribute(accessed_by, sizeof(accessed_by),
                                      hipMemRangeAttributeAccessedBy, a, bytes));
    printf("advice: read-mostly %d, preferred location %s, accessed by device 0 %s\n",
           read_mostly != 0, preferred == 0 ? "device 0" : "other",
           accessed_by[0] == 0 ? "yes" : "no");
    if (read_mostly == 0) report_mismatch(failures, "read_mostly", 0, read_mostly, 1);
    if (preferred != 0) report_mismatch(failures, "preferred", 0, preferred, 0);
    if (accessed_by[0] != 0) report_mismatch(failures, "accessed_by", 0, accessed_by[0], 0);
    for (long i = 0; i < n; i++) a[i] = 1;
    launch_add(a, n, 0, 0);
    LAUNCH_CHECK();
    // Advice on part of the range splits it; the kernel still sees all of it.
    HIP_CHECK(hipMemAdvise(a + 4096, 4096 * sizeof(int), hipMemAdviseUnsetReadMostly, 0));
    HIP_CHECK(hipMemAdvise(a + 4096, 4096 * sizeof(int), hipMemAdviseSetPreferredLocation,
                           hipCpuDeviceId));
    HIP_CHECK(hipMemRangeGetAttribute(&read_mostly, sizeof(read_mostly),
                                      hipMemRangeAttributeReadMostly, a, bytes));
    HIP_CHECK(hipMemRangeGetAttribute(&preferred, sizeof(preferred),
                                      hipMemRangeAttributePreferredLocation, a, bytes));
    printf("after partial advice: read-mostly over all %d, preferred over all %s\n",
           read_mostly != 0, preferred == hipInvalidDeviceId ? "mixed" : "same");
    if (read_mostly != 0) report_mismatch(failures, "read_mostly after", 0, read_mostly, 0);
    if (preferred != hipInvalidDeviceId)
        report_mismatch(failures, "preferred after", 0, preferred, hipInvalidDeviceId);
    launch_add(a, n, 0, 0);
    LAUNCH_CHECK();
    for (long i = 0; i < n; i++) {
        int want = (2 + (int)(i % 1000)) * 2 + (int)(i % 1000);
        if (a[i] != want) report_mismatch(failures, "advised", i, a[i], want);
    }
    HIP_CHECK(hipFree(a));
}

static void large(int *failures) {
    const long mibs = 1280;  // 1.25 GiB: more than one driver range
    int *base;
    HIP_CHECK(hipMallocManaged((void **)&base, (size_t)mibs << 20, hipMemAttachGlobal));
    for (long i = 0; i < mibs; i++) base[i * (1L << 18)] = (int)(i * 3);
    hipLaunchKernelGGL(touch_every_mib, dim3((unsigned)((mibs + 127) / 128)), dim3(128), 0, 0, base,
                       mibs, 11);
    LAUNCH_CHECK();
    for (long i = 0; i < mibs; i++) {
        int want = (int)(i * 3) + (int)i + 11;
        if (base[i * (1L << 18)] != want) report_mismatch(failures, "large", i, base[i * (1L << 18)], want);
    }
    printf("large: %ld MiB, one int per MiB\n", mibs);
    HIP_CHECK(hipFree(base));
}

static void alternate(int *failures) {
    const long n = 5000;
    int *a;
    HIP_CHECK(hipMallocManaged((void **)&a, n * sizeof(int), hipMemAttachGlobal));
    int *want = (int *)malloc(n * sizeof(int));
    for (long i = 0; i < n; i++) a[i] = want[i] = (int)i;
    for (int round = 0; round < 6; round++) {
        launch_add(a, n, round, 0);
        LAUNCH_CHECK();
        for (long i = 0; i < n; i++) {
            want[i] = want[i] * 2 + (int)(i % 1000) + round;
            if (a[i] != want[i]) report_mismatch(failures, "alternate", i, a[i], want[i]);
            a[i] -= (int)(i % 3);  // the host's turn
            want[i] -= (int)(i % 3);
        }
    }
    long sum = 0;
    for (long i = 0; i < n; i++) sum += a[i];
    printf("alternating host and kernel: 6 rounds, sum %ld\n", sum);
    free(want);
    HIP_CHECK(hipFree(a));
}

static void on_malloc_memory(int *failures) {
    const long n = 70000;
    int *a = (int *)malloc(n * sizeof(int));
    for (long i = 0; i < n; i++) a[i] = (int)(i % 5);
    launch_add(a, n, 3, 0);
    LAUNCH_CHECK();
    for (long i = 0; i < n; i++) {
        int want = (int)(i % 5) * 2 + (int)(i % 1000) + 3;
        if (a[i] != want) report_mismatch(failures, "malloc", i, a[i], want);
    }
    printf("kernel on malloc memory: %ld ints\n", n);
    free(a);
    // A small allocation, from the initial heap (brk) rather than its own mapping.
    const long m = 1000;
    int *b = (int *)malloc(m * sizeof(int));
    for (long i = 0; i < m; i++) b[i] = (int)i;
    launch_add(b, m, 4, 0);
    LAUNCH_CHECK();
    long sum = 0;
    for (long i = 0; i < m; i++) {
        int want = (int)i * 3 + 4;
        if (b[i] != want) report_mismatch(failures, "small malloc", i, b[i], want);
        sum += b[i];
    }
    printf("kernel on a small malloc: %ld ints, sum %ld\n", m, sum);
    free(b);
}

static void pageable(int *failures) {
    int pageable = 0;
    HIP_CHECK(hipDeviceGetAttribute(&pageable, hipDeviceAttributePageableMemoryAccess, 0));
    printf("pageable memory access: %s\n", pageable ? "yes" : "no");
    if (pageable) on_malloc_memory(failures);
}

// Stores into memory the host mapped read-only: the kernel must fault.
static void store_to_read_only(void) {
    const long n = 1024;
    int *a = (int *)mmap(NULL, n * sizeof(int), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) {
        printf("FAIL (mmap)\n");
        exit(1);
    }
    launch_add(a, n, 1, 0);
    hipError_t sync = hipDeviceSynchronize();
    // Reached only if the runtime did not abort on the fault.
    fprintf(stderr, "managed readonly: synchronize: %s\n", hipGetErrorString(sync));
    printf("FAIL (the store to read-only memory did not fault)\n");
    exit(1);
}

// A kernel on a freed malloc block (its own mapping, which free unmaps): must fault.
static void use_after_free(void) {
    const long n = 1L << 20;  // 4 MiB
    int *a = (int *)malloc(n * sizeof(int));
    for (long i = 0; i < n; i++) a[i] = 0;
    launch_add(a, n, 1, 0);
    LAUNCH_CHECK();
    printf("kernel on the block: a[7] = %d\n", a[7]);
    fflush(stdout);
    free(a);
    launch_add(a, n, 1, 0);
    hipError_t sync = hipDeviceSynchronize();
    // Reached only if the runtime did not abort on the fault.
    fprintf(stderr, "managed freed: synchronize: %s\n", hipGetErrorString(sync));
    printf("FAIL (the kernel on freed memory did not fault)\n");
    exit(1);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "malloc") == 0) {
        int failures = 0;
        on_malloc_memory(&failures);
        return verdict(failures);
    }
    if (argc > 1 && strcmp(argv[1], "readonly") == 0) store_to_read_only();
    if (argc > 1 && strcmp(argv[1], "freed") == 0) use_after_free();
    int managed = 0;
    HIP_CHECK(hipDeviceGetAttribute(&managed, hipDeviceAttributeManagedMemory, 0));
    printf("managed memory: %s\n", managed ? "yes" : "no");
    int failures = 0;
    host_then_kernel(&failures);
    prefetch_round_trip(&failures, managed);
    advice(&failures, managed);
    if (managed) large(&failures);
    alternate(&failures);
    pageable(&failures);
    return verdict(failures);
}
