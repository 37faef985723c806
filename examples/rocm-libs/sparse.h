// Shared by the sparse programs (rocsparse.hip, hipsparse.hip): random CSR matrices,
// host reference computations, device transfers and the per-routine checks.
#pragma once
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../rocm/check.h"

static int failures = 0;

// A square CSR matrix with zero-based indices, columns sorted within each row.
struct Csr {
    int m;
    std::vector<int> ptr, col;
    std::vector<double> val;
};

// A deterministic xorshift sequence in [0, 1).
struct Random {
    uint64_t x;
    explicit Random(uint64_t seed) : x(seed * 0x9e3779b97f4a7c15ull + 1) {}
    double next() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return (double)(x >> 11) / (double)(1ull << 53);
    }
};

// An m x m matrix with about 8 entries per row (rows of 0 to 16 entries) plus a
// dominant diagonal.
static Csr random_csr(int m, uint64_t seed) {
    Random r(seed);
    Csr a{m, {0}, {}, {}};
    for (int i = 0; i < m; i++) {
        std::vector<int> cols{i};
        int count = (int)(r.next() * 17);
        for (int k = 0; k < count; k++) cols.push_back((int)(r.next() * m));
        std::sort(cols.begin(), cols.end());
        cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
        for (int c : cols) {
            a.col.push_back(c);
            a.val.push_back(c == i ? 20.0 + r.next() : r.next() * 2 - 1);
        }
        a.ptr.push_back((int)a.col.size());
    }
    return a;
}

// The entries of `a` on or below the diagonal.
static Csr lower_triangle(const Csr &a) {
    Csr l{a.m, {0}, {}, {}};
    for (int i = 0; i < a.m; i++) {
        for (int k = a.ptr[i]; k < a.ptr[i + 1]; k++) {
            if (a.col[k] <= i) {
                l.col.push_back(a.col[k]);
                l.val.push_back(a.val[k]);
            }
        }
        l.ptr.push_back((int)l.col.size());
    }
    return l;
}

static std::vector<double> random_vector(int n, uint64_t seed) {
    Random r(seed);
    std::vector<double> v(n);
    for (auto &e : v) e = r.next() * 2 - 1;
    return v;
}

// alpha * A * x + beta * y.
static std::vector<double> host_csrmv(const Csr &a, double alpha, const std::vector<double> &x, double beta,
                                      const std::vector<double> &y) {
    std::vector<double> out(a.m);
    for (int i = 0; i < a.m; i++) {
        double s = 0;
        for (int k = a.ptr[i]; k < a.ptr[i + 1]; k++) s += a.val[k] * x[a.col[k]];
        out[i] = alpha * s + beta * y[i];
    }
    return out;
}

// y with L y = alpha x, by forward substitution.
static std::vector<double> host_lower_solve(const Csr &l, double alpha, const std::vector<double> &x) {
    std::vector<double> y(l.m);
    for (int i = 0; i < l.m; i++) {
        double s = alpha * x[i], diag = 1;
        for (int k = l.ptr[i]; k < l.ptr[i + 1]; k++) {
            if (l.col[k] == i)
                diag = l.val[k];
            else
                s -= l.val[k] * y[l.col[k]];
        }
        y[i] = s / diag;
    }
    return y;
}

// The row index of every entry (COO rows).
static std::vector<int> coo_rows(const Csr &a) {
    std::vector<int> rows;
    for (int i = 0; i < a.m; i++)
        for (int k = a.ptr[i]; k < a.ptr[i + 1]; k++) rows.push_back(i);
    return rows;
}

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

static void report(const char *name, int bad) {
    printf("%s %s\n", name, bad ? "FAIL" : "ok");
    failures += bad != 0;
}

// Equal within 1e-12 relative to the vector's largest magnitude (summation order differs).
static void expect_close(const char *name, const std::vector<double> &got, const std::vector<double> &want) {
    double scale = 1;
    for (double w : want) scale = std::max(scale, std::fabs(w));
    int bad = 0;
    for (size_t i = 0; i < want.size(); i++)
        if (!(std::fabs(got[i] - want[i]) <= 1e-12 * scale)) report_mismatch(&bad, name, (long)i, got[i], want[i]);
    report(name, bad);
}

static void expect_equal(const char *name, const std::vector<int> &got, const std::vector<int> &want) {
    int bad = 0;
    for (size_t i = 0; i < want.size(); i++)
        if (got[i] != want[i]) report_mismatch(&bad, name, (long)i, got[i], want[i]);
    report(name, bad);
}
