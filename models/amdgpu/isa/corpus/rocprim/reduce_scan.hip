// rocPRIM device reduce, segmented reduce, inclusive and exclusive scan for int and
// float; compiled for gfx90a by tests/rocm_corpus.rs, which checks every instruction of
// the code object.
#include <rocprim/rocprim.hpp>

template <class T>
hipError_t reduce_and_scan(void* temp, size_t& bytes, T* input, T* output, unsigned int* offsets,
                           unsigned int segments, size_t n, hipStream_t stream) {
    hipError_t errors[] = {
        rocprim::reduce(temp, bytes, input, output, T(0), n, rocprim::plus<T>(), stream),
        rocprim::reduce(temp, bytes, input, output, T(0), n, rocprim::maximum<T>(), stream),
        rocprim::segmented_reduce(temp, bytes, input, output, segments, offsets, offsets + 1,
                                  rocprim::plus<T>(), T(0), stream),
        rocprim::inclusive_scan(temp, bytes, input, output, n, rocprim::plus<T>(), stream),
        rocprim::exclusive_scan(temp, bytes, input, output, T(0), n, rocprim::plus<T>(), stream),
    };
    for (hipError_t error : errors) {
        if (error != hipSuccess) return error;
    }
    return hipSuccess;
}

template hipError_t reduce_and_scan<int>(void*, size_t&, int*, int*, unsigned int*, unsigned int, size_t,
                                         hipStream_t);
template hipError_t reduce_and_scan<float>(void*, size_t&, float*, float*, unsigned int*, unsigned int, size_t,
                                           hipStream_t);
