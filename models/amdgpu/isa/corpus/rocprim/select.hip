// rocPRIM device select (by flag and by predicate), unique and partition (by flag and by
// predicate) for int and float; compiled for gfx90a by tests/rocm_corpus.rs, which
// checks every instruction of the code object.
#include <rocprim/rocprim.hpp>

template <class T>
struct Positive {
    __host__ __device__ bool operator()(const T& value) const { return value > T(0); }
};

template <class T>
hipError_t select_all(void* temp, size_t& bytes, T* input, unsigned char* flags, T* output,
                      unsigned int* count, size_t n, hipStream_t stream) {
    hipError_t errors[] = {
        rocprim::select(temp, bytes, input, flags, output, count, n, stream),
        rocprim::select(temp, bytes, input, output, count, n, Positive<T>(), stream),
        rocprim::unique(temp, bytes, input, output, count, n, rocprim::equal_to<T>(), stream),
        rocprim::partition(temp, bytes, input, flags, output, count, n, stream),
        rocprim::partition(temp, bytes, input, output, count, n, Positive<T>(), stream),
    };
    for (hipError_t error : errors) {
        if (error != hipSuccess) return error;
    }
    return hipSuccess;
}

template hipError_t select_all<int>(void*, size_t&, int*, unsigned char*, int*, unsigned int*, size_t,
                                    hipStream_t);
template hipError_t select_all<float>(void*, size_t&, float*, unsigned char*, float*, unsigned int*, size_t,
                                      hipStream_t);
