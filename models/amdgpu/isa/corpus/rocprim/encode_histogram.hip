// rocPRIM device run-length encode (all runs and non-trivial runs) for int and float,
// and histogram with even and with explicit (range) bin levels for 8-bit and float
// samples; compiled for gfx90a by tests/rocm_corpus.rs, which checks every instruction
// of the code object.
#include <rocprim/rocprim.hpp>

template <class T>
hipError_t encode(void* temp, size_t& bytes, T* input, T* unique, unsigned int* counts, unsigned int* offsets,
                  unsigned int* runs, unsigned int n, hipStream_t stream) {
    hipError_t all = rocprim::run_length_encode(temp, bytes, input, n, unique, counts, runs, stream);
    hipError_t non_trivial =
        rocprim::run_length_encode_non_trivial_runs(temp, bytes, input, n, offsets, counts, runs, stream);
    return all != hipSuccess ? all : non_trivial;
}

template <class Sample, class Level>
hipError_t histogram(void* temp, size_t& bytes, Sample* samples, unsigned int* bins, Level* levels,
                     unsigned int n, hipStream_t stream) {
    hipError_t even =
        rocprim::histogram_even(temp, bytes, samples, n, bins, 65, Level(0), Level(200), stream);
    hipError_t range = rocprim::histogram_range(temp, bytes, samples, n, bins, 65, levels, stream);
    return even != hipSuccess ? even : range;
}

template hipError_t encode<int>(void*, size_t&, int*, int*, unsigned int*, unsigned int*, unsigned int*,
                                unsigned int, hipStream_t);
template hipError_t encode<float>(void*, size_t&, float*, float*, unsigned int*, unsigned int*, unsigned int*,
                                  unsigned int, hipStream_t);
template hipError_t histogram<unsigned char, int>(void*, size_t&, unsigned char*, unsigned int*, int*,
                                                  unsigned int, hipStream_t);
template hipError_t histogram<float, float>(void*, size_t&, float*, unsigned int*, float*, unsigned int,
                                            hipStream_t);
