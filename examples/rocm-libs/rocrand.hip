// Debian's rocRAND host API on the simulated GPU: XORWOW, MRG32k3a, Philox-4x32-10 and
// Sobol32 generators fill device buffers (rocrand_generate, _uniform, _normal,
// _log_normal, _poisson), and the host recomputes the same numbers with rocRAND's own
// device API headers compiled for the host (FQUALIFIERS gains __host__):
// - raw 32-bit values bit for bit, uniform floats within 1 ULP, normal floats within
//   2^-18 of the distribution's scale and log-normal within a few ULP (libm vs the
//   device's fast math: see expect_near);
// - Poisson by its moments (the library uses alias tables the device API does not).
//
// Where each value comes from (rocRAND's generator kernels): XORWOW and MRG32k3a run
// one engine per thread, engine k = rocrand_init(seed, subsequence k, offset), writing
// element k first (so with n below the thread count element k is engine k's first
// draw, or its first two for a normal pair); Philox is one stream whose j-th value is
// element j; Sobol32 element j is point `offset + j` of dimension 0.
//
// argv[1] (optional): element count (default 4096, even; at most one per thread).
#include "random.h"

#include <rocrand/rocrand.h>

#include <cmath>
#include <functional>
#include <string>

#define ROCRAND_CHECK(expr)                                                          \
    do {                                                                             \
        rocrand_status check_status_ = (expr);                                       \
        if (check_status_ != ROCRAND_STATUS_SUCCESS) {                               \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #expr,     \
                    (int)check_status_);                                             \
            printf("FAIL\n");                                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static const unsigned long long SEED = 0x5eed1234abcdull;



// Runs `fill` on a fresh generator of `type` (seed SEED) into a device buffer of n T.
template <class T>
static std::vector<T> generate(rocrand_rng_type type, size_t n, const std::function<rocrand_status(rocrand_generator, T *)> &fill) {
    rocrand_generator gen;
    ROCRAND_CHECK(rocrand_create_generator(&gen, type));
    if (type != ROCRAND_RNG_QUASI_SOBOL32) ROCRAND_CHECK(rocrand_set_seed(gen, SEED));
    T *d = nullptr;
    HIP_CHECK(hipMalloc(&d, n * sizeof(T)));
    ROCRAND_CHECK(fill(gen, d));
    HIP_CHECK(hipDeviceSynchronize());
    std::vector<T> h(n);
    HIP_CHECK(hipMemcpy(h.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d));
    ROCRAND_CHECK(rocrand_destroy_generator(gen));
    return h;
}

// The host reference of a generator: `group(k, out)` writes element group k (one value,
// or a pair for normal distributions) computed with the device API on the host.
template <class T> using Group = std::function<void(size_t k, T *out)>;

template <class T> static std::vector<T> reference(size_t n, unsigned width, const Group<T> &group) {
    std::vector<T> v(n);
    for (size_t k = 0; k * width < n; k++) group(k, &v[k * width]);
    return v;
}

// Engine k of a per-thread-engine generator (XORWOW, MRG32k3a) as the library seeds it.
template <class State> static State engine(size_t k) {
    State s;
    rocrand_init(SEED, k, 0, &s);
    return s;
}

// The u32 and uniform checks of a per-thread-engine generator: element k is engine k's
// first value.
template <class State>
static void per_thread_uniform(const char *name, rocrand_rng_type type, size_t n) {
    std::string base(name);
    expect((base + ".u32").c_str(),
           generate<unsigned>(type, n, [&](auto g, auto d) { return rocrand_generate(g, d, n); }),
           reference<unsigned>(n, 1, [&](size_t k, unsigned *o) { auto s = engine<State>(k); o[0] = rocrand(&s); }), 0);
    expect((base + ".uniform").c_str(),
           generate<float>(type, n, [&](auto g, auto d) { return rocrand_generate_uniform(g, d, n); }),
           reference<float>(n, 1, [&](size_t k, float *o) { auto s = engine<State>(k); o[0] = rocrand_uniform(&s); }), 1);
}

// The normal and log-normal checks of a per-thread-engine generator: element pair k
// comes from engine k's first two values.
template <class State>
static void per_thread_normal(const char *name, rocrand_rng_type type, size_t n) {
    std::string base(name);
    expect_near((base + ".normal").c_str(),
           generate<float>(type, n, [&](auto g, auto d) { return rocrand_generate_normal(g, d, n, 1.5f, 2.0f); }),
           reference<float>(n, 2, [&](size_t k, float *o) {
               auto s = engine<State>(k);
               float2 v = rocrand_normal2(&s);
               o[0] = 1.5f + v.x * 2.0f;
               o[1] = 1.5f + v.y * 2.0f;
           }), normal_tolerance(1.5f, 2.0f));
    expect((base + ".log_normal").c_str(),
           generate<float>(type, n, [&](auto g, auto d) { return rocrand_generate_log_normal(g, d, n, 0.25f, 0.5f); }),
           reference<float>(n, 2, [&](size_t k, float *o) {
               auto s = engine<State>(k);
               float2 v = rocrand_log_normal2(&s, 0.25f, 0.5f);
               o[0] = v.x;
               o[1] = v.y;
           }), 8);
}

// Poisson: mean and variance of n draws within 5% of lambda.
static void poisson(const char *name, rocrand_rng_type type, size_t n, double lambda) {
    auto v = generate<unsigned>(type, n, [&](auto g, auto d) { return rocrand_generate_poisson(g, d, n, lambda); });
    double sum = 0, sq = 0;
    for (auto x : v) sum += x;
    double mean = sum / n;
    for (auto x : v) sq += (x - mean) * (x - mean);
    double var = sq / (n - 1);
    bool ok = fabs(mean - lambda) < 0.05 * lambda && fabs(var - lambda) < 0.1 * lambda;
    if (!ok) fprintf(stderr, "%s: mean %g, variance %g, want %g\n", name, mean, var, lambda);
    printf("%s %s\n", name, ok ? "ok" : "FAIL");
    failures += !ok;
}

int main(int argc, char **argv) {
    const size_t n = argc > 1 ? strtoul(argv[1], nullptr, 10) & ~size_t(1) : 4096;
    // Line-buffered: the lines so far survive a GPU fault's abort.
    setvbuf(stdout, nullptr, _IOLBF, 0);

    // Integer and uniform outputs first, then Poisson, then the distributions that need
    // sin/cos/log/exp on the device (Box-Muller).
    rocrand_state_philox4x32_10 philox;
    auto restart = [&] { rocrand_init(SEED, 0, 0, &philox); };
    const auto PHILOX = ROCRAND_RNG_PSEUDO_PHILOX4_32_10;
    {  // Philox: one stream in order.
        restart();
        expect("philox.u32", generate<unsigned>(PHILOX, n, [&](auto g, auto d) { return rocrand_generate(g, d, n); }),
               reference<unsigned>(n, 1, [&](size_t, unsigned *o) { o[0] = rocrand(&philox); }), 0);
        restart();
        expect("philox.uniform", generate<float>(PHILOX, n, [&](auto g, auto d) { return rocrand_generate_uniform(g, d, n); }),
               reference<float>(n, 1, [&](size_t, float *o) { o[0] = rocrand_uniform(&philox); }), 1);
    }
    {  // Sobol32: dimension 0, point j for element j.
        const auto type = ROCRAND_RNG_QUASI_SOBOL32;
        expect("sobol32.u32", generate<unsigned>(type, n, [&](auto g, auto d) { return rocrand_generate(g, d, n); }),
               reference<unsigned>(n, 1, [&](size_t j, unsigned *o) { auto s = sobol_point(j); o[0] = rocrand(&s); }), 0);
        expect("sobol32.uniform", generate<float>(type, n, [&](auto g, auto d) { return rocrand_generate_uniform(g, d, n); }),
               reference<float>(n, 1, [&](size_t j, float *o) { auto s = sobol_point(j); o[0] = rocrand_uniform(&s); }), 1);
    }
    per_thread_uniform<rocrand_state_mrg32k3a>("mrg32k3a", ROCRAND_RNG_PSEUDO_MRG32K3A, n);
    per_thread_uniform<rocrand_state_xorwow>("xorwow", ROCRAND_RNG_PSEUDO_XORWOW, n);

    poisson("philox.poisson(4)", PHILOX, n, 4.0);
    poisson("philox.poisson(300)", PHILOX, n, 300.0);

    restart();
    expect_near("philox.normal",
           generate<float>(PHILOX, n, [&](auto g, auto d) { return rocrand_generate_normal(g, d, n, -1.0f, 0.5f); }),
           reference<float>(n, 2, [&](size_t, float *o) {
               unsigned a = rocrand(&philox), b = rocrand(&philox);
               float2 v = rocrand_device::detail::normal_distribution2(a, b);
               o[0] = -1.0f + v.x * 0.5f;
               o[1] = -1.0f + v.y * 0.5f;
           }), normal_tolerance(-1.0f, 0.5f));
    per_thread_normal<rocrand_state_mrg32k3a>("mrg32k3a", ROCRAND_RNG_PSEUDO_MRG32K3A, n);
    per_thread_normal<rocrand_state_xorwow>("xorwow", ROCRAND_RNG_PSEUDO_XORWOW, n);
    return verdict(failures);
}
