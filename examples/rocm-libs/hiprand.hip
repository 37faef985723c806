// Debian's hipRAND (the cuRAND-style wrapper over rocRAND) on the simulated GPU:
// Philox-4x32-10 and Sobol32 generators fill device buffers through hiprandGenerate,
// hiprandGenerateUniform and hiprandGenerateNormal, and the host recomputes the same
// numbers with rocRAND's device API headers compiled for the host (see rocrand.hip for
// the layouts): raw values bit for bit, uniform floats within 1 ULP, normal floats
// within 4 ULP. The program ends with PASS or FAIL.
//
// argv[1] (optional): element count (default 4096, even).
#include "random.h"

#include <hiprand/hiprand.h>

#define HIPRAND_CHECK(expr)                                                          \
    do {                                                                             \
        hiprandStatus_t check_status_ = (expr);                                      \
        if (check_status_ != HIPRAND_STATUS_SUCCESS) {                               \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #expr,     \
                    (int)check_status_);                                             \
            printf("FAIL\n");                                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static const unsigned long long SEED = 42;



// A fresh generator of `type` fills n T through `fill`.
template <class T, class Fill> static std::vector<T> generate(hiprandRngType_t type, size_t n, Fill fill) {
    hiprandGenerator_t gen;
    HIPRAND_CHECK(hiprandCreateGenerator(&gen, type));
    if (type != HIPRAND_RNG_QUASI_SOBOL32) HIPRAND_CHECK(hiprandSetPseudoRandomGeneratorSeed(gen, SEED));
    T *d = nullptr;
    HIP_CHECK(hipMalloc(&d, n * sizeof(T)));
    HIPRAND_CHECK(fill(gen, d));
    HIP_CHECK(hipDeviceSynchronize());
    std::vector<T> h(n);
    HIP_CHECK(hipMemcpy(h.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d));
    HIPRAND_CHECK(hiprandDestroyGenerator(gen));
    return h;
}

int main(int argc, char **argv) {
    const size_t n = argc > 1 ? strtoul(argv[1], nullptr, 10) & ~size_t(1) : 4096;
    // Line-buffered: the lines so far survive a GPU fault's abort.
    setvbuf(stdout, nullptr, _IOLBF, 0);
    {  // Philox: element j is the stream's j-th value.
        const auto type = HIPRAND_RNG_PSEUDO_PHILOX4_32_10;
        rocrand_state_philox4x32_10 s;
        std::vector<unsigned> raw(n);
        std::vector<float> uni(n), nor(n);
        rocrand_init(SEED, 0, 0, &s);
        for (auto &v : raw) v = rocrand(&s);
        for (size_t j = 0; j < n; j++) uni[j] = rocrand_device::detail::uniform_distribution(raw[j]);
        for (size_t j = 0; j < n; j += 2) {
            float2 v = rocrand_device::detail::normal_distribution2(raw[j], raw[j + 1]);
            nor[j] = 3.0f + v.x * 0.25f;
            nor[j + 1] = 3.0f + v.y * 0.25f;
        }
        expect("philox.u32", generate<unsigned>(type, n, [&](auto g, auto d) { return hiprandGenerate(g, d, n); }), raw, 0);
        expect("philox.uniform", generate<float>(type, n, [&](auto g, auto d) { return hiprandGenerateUniform(g, d, n); }), uni, 1);
        expect("philox.normal",
               generate<float>(type, n, [&](auto g, auto d) { return hiprandGenerateNormal(g, d, n, 3.0f, 0.25f); }), nor, 4);
    }
    {  // Sobol32, dimension 0: element j is point j.
        const auto type = HIPRAND_RNG_QUASI_SOBOL32;
        std::vector<unsigned> raw(n);
        std::vector<float> uni(n);
        for (size_t j = 0; j < n; j++) {
            auto s = sobol_point(j);
            raw[j] = rocrand(&s);
            uni[j] = rocrand_device::detail::uniform_distribution(raw[j]);
        }
        expect("sobol32.u32", generate<unsigned>(type, n, [&](auto g, auto d) { return hiprandGenerate(g, d, n); }), raw, 0);
        expect("sobol32.uniform", generate<float>(type, n, [&](auto g, auto d) { return hiprandGenerateUniform(g, d, n); }), uni, 1);
    }
    return verdict(failures);
}
