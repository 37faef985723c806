// Debian's rocPRIM device algorithms on the simulated GPU, each checked against a host
// computation: radix sort (keys, pairs, segmented), merge sort, reduce, reduce by key,
// inclusive and exclusive scan, select (flags, predicate), unique, partition,
// run-length encode, segmented reduce, histogram (even, range). Every algorithm prints
// one `name ok` / `name FAIL` line; the program ends with PASS or FAIL.
//
// argv[1] (optional): element count (default 100000; odd sizes exercise partial tiles).
#include <rocprim/rocprim.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

#include "../rocm/check.h"

static int failures = 0;

// Allocates device memory for `n` elements of T.
template <class T> static T *dev(size_t n) {
    T *p = nullptr;
    HIP_CHECK(hipMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)));
    return p;
}

template <class T> static T *upload(const std::vector<T> &v) {
    T *p = dev<T>(v.size());
    HIP_CHECK(hipMemcpy(p, v.data(), v.size() * sizeof(T), hipMemcpyHostToDevice));
    return p;
}

template <class T> static std::vector<T> download(const T *p, size_t n) {
    std::vector<T> v(n);
    HIP_CHECK(hipMemcpy(v.data(), p, n * sizeof(T), hipMemcpyDeviceToHost));
    return v;
}

// Temporary storage for one call: ask for its size, allocate, call again.
struct Temp {
    void *ptr = nullptr;
    size_t bytes = 0;
    void alloc() { HIP_CHECK(hipMalloc(&ptr, std::max<size_t>(bytes, 1))); }
    ~Temp() { (void)hipFree(ptr); }
};

template <class T> static void expect(const char *name, const std::vector<T> &got, const std::vector<T> &want) {
    int bad = 0;
    if (got.size() != want.size()) {
        fprintf(stderr, "%s: %zu elements, want %zu\n", name, got.size(), want.size());
        bad = 1;
    }
    for (size_t i = 0; i < std::min(got.size(), want.size()); i++) {
        if (!(got[i] == want[i])) {
            if (bad < 4) fprintf(stderr, "%s[%zu]: got %.17g, want %.17g\n", name, i, (double)got[i], (double)want[i]);
            bad++;
        }
    }
    printf("%s %s\n", name, bad ? "FAIL" : "ok");
    failures += bad != 0;
}

// A deterministic pseudo-random sequence (the same on every run and machine).
static std::vector<uint32_t> sequence(size_t n, uint32_t seed, uint32_t range) {
    std::vector<uint32_t> v(n);
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (auto &e : v) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        e = (uint32_t)(x % range);
    }
    return v;
}

int main(int argc, char **argv) {
    const size_t n = argc > 1 ? strtoul(argv[1], nullptr, 10) : 100000;
    // Line-buffered: the lines so far survive a GPU fault's abort.
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const auto keys = sequence(n, 1, 1u << 30);
    const auto small = sequence(n, 2, 64);

    {  // radix sort keys (u32) and pairs (u32 -> u32), ascending and descending.
        uint32_t *in = upload(keys), *out = dev<uint32_t>(n);
        Temp t;
        HIP_CHECK(rocprim::radix_sort_keys(t.ptr, t.bytes, in, out, n));
        t.alloc();
        HIP_CHECK(rocprim::radix_sort_keys(t.ptr, t.bytes, in, out, n));
        auto want = keys;
        std::sort(want.begin(), want.end());
        expect("radix_sort_keys", download(out, n), want);

        std::vector<uint32_t> idx(n);
        std::iota(idx.begin(), idx.end(), 0u);
        uint32_t *vin = upload(idx), *kout = dev<uint32_t>(n), *vout = dev<uint32_t>(n);
        Temp t2;
        HIP_CHECK(rocprim::radix_sort_pairs_desc(t2.ptr, t2.bytes, in, kout, vin, vout, n));
        t2.alloc();
        HIP_CHECK(rocprim::radix_sort_pairs_desc(t2.ptr, t2.bytes, in, kout, vin, vout, n));
        std::vector<uint32_t> order(idx);
        std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] > keys[b]; });
        std::vector<uint32_t> want_k(n);
        for (size_t i = 0; i < n; i++) want_k[i] = keys[order[i]];
        expect("radix_sort_pairs_desc.keys", download(kout, n), want_k);
        expect("radix_sort_pairs_desc.values", download(vout, n), order);
        HIP_CHECK(hipFree(in)); HIP_CHECK(hipFree(out)); HIP_CHECK(hipFree(vin));
        HIP_CHECK(hipFree(kout)); HIP_CHECK(hipFree(vout));
    }
    {  // radix sort of floats (sign handling) and 64-bit keys.
        std::vector<float> f(n);
        for (size_t i = 0; i < n; i++) f[i] = ((int)keys[i] - (1 << 29)) * 0.125f;
        float *in = upload(f), *out = dev<float>(n);
        Temp t;
        HIP_CHECK(rocprim::radix_sort_keys(t.ptr, t.bytes, in, out, n));
        t.alloc();
        HIP_CHECK(rocprim::radix_sort_keys(t.ptr, t.bytes, in, out, n));
        auto want = f;
        std::sort(want.begin(), want.end());
        expect("radix_sort_keys.f32", download(out, n), want);
        std::vector<uint64_t> k64(n);
        for (size_t i = 0; i < n; i++) k64[i] = ((uint64_t)keys[i] << 33) ^ small[i];
        uint64_t *in64 = upload(k64), *out64 = dev<uint64_t>(n);
        Temp t2;
        HIP_CHECK(rocprim::radix_sort_keys(t2.ptr, t2.bytes, in64, out64, n));
        t2.alloc();
        HIP_CHECK(rocprim::radix_sort_keys(t2.ptr, t2.bytes, in64, out64, n));
        std::sort(k64.begin(), k64.end());
        expect("radix_sort_keys.u64", download(out64, n), k64);
        HIP_CHECK(hipFree(in)); HIP_CHECK(hipFree(out)); HIP_CHECK(hipFree(in64)); HIP_CHECK(hipFree(out64));
    }
    {  // merge sort with a custom comparator.
        uint32_t *in = upload(keys), *out = dev<uint32_t>(n);
        auto cmp = [] __host__ __device__(uint32_t a, uint32_t b) { return (a % 1000) < (b % 1000); };
        Temp t;
        HIP_CHECK(rocprim::merge_sort(t.ptr, t.bytes, in, out, n, cmp));
        t.alloc();
        HIP_CHECK(rocprim::merge_sort(t.ptr, t.bytes, in, out, n, cmp));
        auto got = download(out, n);
        // merge_sort is stable.
        auto want = keys;
        std::stable_sort(want.begin(), want.end(), cmp);
        expect("merge_sort", got, want);
        HIP_CHECK(hipFree(in)); HIP_CHECK(hipFree(out));
    }
    {  // reduce (sum of u64, max of u32).
        std::vector<uint64_t> wide(keys.begin(), keys.end());
        uint64_t *in = upload(wide), *out = dev<uint64_t>(1);
        Temp t;
        HIP_CHECK(rocprim::reduce(t.ptr, t.bytes, in, out, uint64_t(0), n, rocprim::plus<uint64_t>()));
        t.alloc();
        HIP_CHECK(rocprim::reduce(t.ptr, t.bytes, in, out, uint64_t(0), n, rocprim::plus<uint64_t>()));
        expect("reduce.sum", download(out, 1), {std::accumulate(wide.begin(), wide.end(), uint64_t(0))});
        uint32_t *kin = upload(keys), *kmax = dev<uint32_t>(1);
        Temp t2;
        HIP_CHECK(rocprim::reduce(t2.ptr, t2.bytes, kin, kmax, n, rocprim::maximum<uint32_t>()));
        t2.alloc();
        HIP_CHECK(rocprim::reduce(t2.ptr, t2.bytes, kin, kmax, n, rocprim::maximum<uint32_t>()));
        expect("reduce.max", download(kmax, 1), {*std::max_element(keys.begin(), keys.end())});
        HIP_CHECK(hipFree(in)); HIP_CHECK(hipFree(out)); HIP_CHECK(hipFree(kin)); HIP_CHECK(hipFree(kmax));
    }
    {  // segmented reduce and segmented radix sort over uneven segments.
        std::vector<uint32_t> offsets{0};
        while (offsets.back() < n) offsets.push_back(std::min<uint32_t>(offsets.back() + 1 + small[offsets.size() % n] * 37, n));
        const unsigned segments = offsets.size() - 1;
        uint32_t *in = upload(small), *off = upload(offsets), *out = dev<uint32_t>(segments);
        Temp t;
        HIP_CHECK(rocprim::segmented_reduce(t.ptr, t.bytes, in, out, segments, off, off + 1, rocprim::plus<uint32_t>(), 0u));
        t.alloc();
        HIP_CHECK(rocprim::segmented_reduce(t.ptr, t.bytes, in, out, segments, off, off + 1, rocprim::plus<uint32_t>(), 0u));
        std::vector<uint32_t> want(segments);
        for (unsigned s = 0; s < segments; s++)
            want[s] = std::accumulate(small.begin() + offsets[s], small.begin() + offsets[s + 1], 0u);
        expect("segmented_reduce", download(out, segments), want);

        uint32_t *kin = upload(keys), *kout = dev<uint32_t>(n);
        Temp t2;
        HIP_CHECK(rocprim::segmented_radix_sort_keys(t2.ptr, t2.bytes, kin, kout, n, segments, off, off + 1));
        t2.alloc();
        HIP_CHECK(rocprim::segmented_radix_sort_keys(t2.ptr, t2.bytes, kin, kout, n, segments, off, off + 1));
        auto want_k = keys;
        for (unsigned s = 0; s < segments; s++) std::sort(want_k.begin() + offsets[s], want_k.begin() + offsets[s + 1]);
        expect("segmented_radix_sort_keys", download(kout, n), want_k);
        HIP_CHECK(hipFree(in)); HIP_CHECK(hipFree(off)); HIP_CHECK(hipFree(out)); HIP_CHECK(hipFree(kin)); HIP_CHECK(hipFree(kout));
    }
    {  // histograms: 64 even bins over [0, 1<<30), and bins at explicit levels.
        uint32_t *in = upload(keys), *hist = dev<uint32_t>(64);
        Temp t;
        HIP_CHECK(rocprim::histogram_even(t.ptr, t.bytes, in, (unsigned)n, hist, 65u, 0u, 1u << 30));
        t.alloc();
        HIP_CHECK(rocprim::histogram_even(t.ptr, t.bytes, in, (unsigned)n, hist, 65u, 0u, 1u << 30));
        std::vector<uint32_t> want(64, 0);
        for (auto k : keys) want[k / ((1u << 30) / 64)]++;
        expect("histogram_even", download(hist, 64), want);

        std::vector<uint32_t> levels{0, 10, 100, 1000, 10000, 100000, 1000000, 1u << 30};
        uint32_t *lv = upload(levels);
        Temp t2;
        HIP_CHECK(rocprim::histogram_range(t2.ptr, t2.bytes, in, (unsigned)n, hist, (unsigned)levels.size(), lv));
        t2.alloc();
        HIP_CHECK(rocprim::histogram_range(t2.ptr, t2.bytes, in, (unsigned)n, hist, (unsigned)levels.size(), lv));
        std::vector<uint32_t> want_r(levels.size() - 1, 0);
        for (auto k : keys)
            for (size_t b = 0; b + 1 < levels.size(); b++)
                if (k >= levels[b] && k < levels[b + 1]) want_r[b]++;
        expect("histogram_range", download(hist, levels.size() - 1), want_r);
        HIP_CHECK(hipFree(in)); HIP_CHECK(hipFree(hist)); HIP_CHECK(hipFree(lv));
    }
    // The algorithms built on the decoupled-lookback scan come last.
    {  // inclusive and exclusive scan (u32 sums, wrapping like the host).
        uint32_t *in = upload(small), *out = dev<uint32_t>(n);
        Temp t;
        HIP_CHECK(rocprim::inclusive_scan(t.ptr, t.bytes, in, out, n, rocprim::plus<uint32_t>()));
        t.alloc();
        HIP_CHECK(rocprim::inclusive_scan(t.ptr, t.bytes, in, out, n, rocprim::plus<uint32_t>()));
        std::vector<uint32_t> want(n);
        std::partial_sum(small.begin(), small.end(), want.begin());
        expect("inclusive_scan", download(out, n), want);
        Temp t2;
        HIP_CHECK(rocprim::exclusive_scan(t2.ptr, t2.bytes, in, out, 7u, n, rocprim::plus<uint32_t>()));
        t2.alloc();
        HIP_CHECK(rocprim::exclusive_scan(t2.ptr, t2.bytes, in, out, 7u, n, rocprim::plus<uint32_t>()));
        uint32_t acc = 7;
        for (size_t i = 0; i < n; i++) {
            want[i] = acc;
            acc += small[i];
        }
        expect("exclusive_scan", download(out, n), want);
        HIP_CHECK(hipFree(in)); HIP_CHECK(hipFree(out));
    }
    {  // select with flags and with a predicate; partition.
        std::vector<uint8_t> flags(n);
        for (size_t i = 0; i < n; i++) flags[i] = small[i] % 3 == 0;
        uint32_t *in = upload(keys), *out = dev<uint32_t>(n), *count = dev<uint32_t>(1);
        uint8_t *fl = upload(flags);
        Temp t;
        HIP_CHECK(rocprim::select(t.ptr, t.bytes, in, fl, out, count, n));
        t.alloc();
        HIP_CHECK(rocprim::select(t.ptr, t.bytes, in, fl, out, count, n));
        std::vector<uint32_t> want;
        for (size_t i = 0; i < n; i++)
            if (flags[i]) want.push_back(keys[i]);
        uint32_t got_n = download(count, 1)[0];
        expect("select.flags", download(out, std::min<size_t>(got_n, n)), want);

        auto pred = [] __host__ __device__(uint32_t x) { return (x & 7) == 3; };
        Temp t2;
        HIP_CHECK(rocprim::select(t2.ptr, t2.bytes, in, out, count, n, pred));
        t2.alloc();
        HIP_CHECK(rocprim::select(t2.ptr, t2.bytes, in, out, count, n, pred));
        want.clear();
        for (auto k : keys)
            if (pred(k)) want.push_back(k);
        got_n = download(count, 1)[0];
        expect("select.predicate", download(out, std::min<size_t>(got_n, n)), want);

        Temp t3;
        HIP_CHECK(rocprim::partition(t3.ptr, t3.bytes, in, out, count, n, pred));
        t3.alloc();
        HIP_CHECK(rocprim::partition(t3.ptr, t3.bytes, in, out, count, n, pred));
        // Selected first in order, then the rejected ones in reverse order.
        std::vector<uint32_t> rejected;
        for (auto k : keys)
            if (!pred(k)) rejected.push_back(k);
        std::vector<uint32_t> part = want;
        part.insert(part.end(), rejected.rbegin(), rejected.rend());
        expect("partition", download(out, n), part);
        HIP_CHECK(hipFree(in)); HIP_CHECK(hipFree(out)); HIP_CHECK(hipFree(count)); HIP_CHECK(hipFree(fl));
    }
    {  // unique and run-length encode over runs of small values.
        std::vector<uint32_t> runs(n);
        for (size_t i = 0; i < n; i++) runs[i] = (uint32_t)(i / (1 + small[i / 64] % 9)) % 50;
        uint32_t *in = upload(runs), *out = dev<uint32_t>(n), *count = dev<uint32_t>(1), *lens = dev<uint32_t>(n);
        Temp t;
        HIP_CHECK(rocprim::unique(t.ptr, t.bytes, in, out, count, n));
        t.alloc();
        HIP_CHECK(rocprim::unique(t.ptr, t.bytes, in, out, count, n));
        std::vector<uint32_t> want(runs);
        want.erase(std::unique(want.begin(), want.end()), want.end());
        uint32_t got_n = download(count, 1)[0];
        expect("unique", download(out, std::min<size_t>(got_n, n)), want);

        Temp t2;
        HIP_CHECK(rocprim::run_length_encode(t2.ptr, t2.bytes, in, n, out, lens, count));
        t2.alloc();
        HIP_CHECK(rocprim::run_length_encode(t2.ptr, t2.bytes, in, n, out, lens, count));
        std::vector<uint32_t> want_len;
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j < n && runs[j] == runs[i]) j++;
            want_len.push_back((uint32_t)(j - i));
            i = j;
        }
        got_n = download(count, 1)[0];
        expect("run_length_encode.values", download(out, std::min<size_t>(got_n, n)), want);
        expect("run_length_encode.lengths", download(lens, std::min<size_t>(got_n, n)), want_len);

        // reduce_by_key: sums of `small` per run of equal keys.
        uint32_t *vals = upload(small), *sums = dev<uint32_t>(n);
        Temp t3;
        HIP_CHECK(rocprim::reduce_by_key(t3.ptr, t3.bytes, in, vals, n, out, sums, count, rocprim::plus<uint32_t>()));
        t3.alloc();
        HIP_CHECK(rocprim::reduce_by_key(t3.ptr, t3.bytes, in, vals, n, out, sums, count, rocprim::plus<uint32_t>()));
        std::vector<uint32_t> want_sums;
        for (size_t i = 0; i < n;) {
            size_t j = i;
            uint32_t s = 0;
            while (j < n && runs[j] == runs[i]) s += small[j++];
            want_sums.push_back(s);
            i = j;
        }
        got_n = download(count, 1)[0];
        expect("reduce_by_key", download(sums, std::min<size_t>(got_n, n)), want_sums);
        HIP_CHECK(hipFree(in)); HIP_CHECK(hipFree(out)); HIP_CHECK(hipFree(count)); HIP_CHECK(hipFree(lens));
        HIP_CHECK(hipFree(vals)); HIP_CHECK(hipFree(sums));
    }
    return verdict(failures);
}
