// rocPRIM device merge sort, keys only and key-value pairs, for int and float keys;
// compiled for gfx90a by tests/rocm_corpus.rs, which checks every instruction of the
// code object.
#include <rocprim/rocprim.hpp>

template <class Key, class Value>
hipError_t sort(void* temp, size_t& bytes, Key* keys, Key* keys_out, Value* values, Value* values_out,
                size_t n, hipStream_t stream) {
    hipError_t keys_only = rocprim::merge_sort(temp, bytes, keys, keys_out, n, rocprim::less<Key>(), stream);
    hipError_t pairs = rocprim::merge_sort(temp, bytes, keys, keys_out, values, values_out, n,
                                           rocprim::less<Key>(), stream);
    return keys_only != hipSuccess ? keys_only : pairs;
}

template hipError_t sort<int, float>(void*, size_t&, int*, int*, float*, float*, size_t, hipStream_t);
template hipError_t sort<float, int>(void*, size_t&, float*, float*, int*, int*, size_t, hipStream_t);
