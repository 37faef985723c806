// rocPRIM device radix sort, keys only and key-value pairs, instantiated for two key
// types (32-bit unsigned, double) and two value types; compiled for gfx90a by
// tests/rocm_corpus.rs, which checks every instruction of the code object.
#include <rocprim/rocprim.hpp>

template <class Key, class Value>
hipError_t sort(void* temp, size_t& bytes, Key* keys, Key* keys_out, Value* values, Value* values_out,
                unsigned int n, hipStream_t stream) {
    hipError_t keys_only = rocprim::radix_sort_keys(temp, bytes, keys, keys_out, n, 0, 8 * sizeof(Key), stream);
    hipError_t descending =
        rocprim::radix_sort_keys_desc(temp, bytes, keys, keys_out, n, 0, 8 * sizeof(Key), stream);
    hipError_t pairs = rocprim::radix_sort_pairs(temp, bytes, keys, keys_out, values, values_out, n, 0,
                                                 8 * sizeof(Key), stream);
    return keys_only != hipSuccess ? keys_only : descending != hipSuccess ? descending : pairs;
}

template hipError_t sort<unsigned int, float>(void*, size_t&, unsigned int*, unsigned int*, float*, float*,
                                              unsigned int, hipStream_t);
template hipError_t sort<double, int>(void*, size_t&, double*, double*, int*, int*, unsigned int, hipStream_t);
