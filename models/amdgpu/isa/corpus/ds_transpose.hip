// ds_transpose: the gfx950 transposing LDS loads through clang's builtins. The work-group
// (one wave) copies 64 x 16 bytes of `in` to LDS; lane l then runs ds_read_b64_tr_b4,
// _b8 and _b16 on the 8-byte block p = (13 l + 5) mod 64 and ds_read_b96_tr_b6 on the
// 16-byte slot p, and writes the nine result dwords to out[9 l ..].
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define LOCAL __attribute__((address_space(3)))

typedef int v2i __attribute__((ext_vector_type(2)));
typedef int v3i __attribute__((ext_vector_type(3)));
typedef short v4s __attribute__((ext_vector_type(4)));

extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(64, 64)))
void ds_transpose(const unsigned *in, unsigned *out) {
    __shared__ unsigned lds[256];
    unsigned l = __builtin_amdgcn_workitem_id_x();
    for (unsigned i = 0; i < 4; i++)
        lds[4 * l + i] = in[4 * l + i];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    unsigned p = (13u * l + 5u) & 63u;
    v2i b4 = __builtin_amdgcn_ds_read_tr4_b64_v2i32((LOCAL v2i *)&lds[2 * p]);
    v2i b8 = __builtin_amdgcn_ds_read_tr8_b64_v2i32((LOCAL v2i *)&lds[2 * p]);
    v4s b16 = __builtin_amdgcn_ds_read_tr16_b64_v4i16((LOCAL v4s *)&lds[2 * p]);
    v3i b6 = __builtin_amdgcn_ds_read_tr6_b96_v3i32((LOCAL v3i *)&lds[4 * p]);
    unsigned *o = out + 9 * l;
    o[0] = b4.x;
    o[1] = b4.y;
    o[2] = b8.x;
    o[3] = b8.y;
    o[4] = (unsigned short)b16.x | (unsigned)(unsigned short)b16.y << 16;
    o[5] = (unsigned short)b16.z | (unsigned)(unsigned short)b16.w << 16;
    o[6] = b6.x;
    o[7] = b6.y;
    o[8] = b6.z;
}
