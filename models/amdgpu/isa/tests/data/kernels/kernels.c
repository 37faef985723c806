// Small freestanding kernels compiled by tests/disasm_kernels.rs (clang, -nogpulib).
typedef float float4 __attribute__((ext_vector_type(4)));
typedef _Float16 half4 __attribute__((ext_vector_type(4)));

__attribute__((amdgpu_kernel)) void saxpy(float *y, const float *x, float a, int n) {
    int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
    if (i < n) y[i] = a * x[i] + y[i];
}

__attribute__((amdgpu_kernel)) void reduce(int *out, const int *in, int n) {
    __attribute__((address_space(3), loader_uninitialized)) static int tile[256];
    int t = __builtin_amdgcn_workitem_id_x();
    int s = 0;
    for (int i = t; i < n; i += 256) s += in[i] ^ (in[i] >> 3);
    tile[t] = s;
    __builtin_amdgcn_s_barrier();
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) tile[t] += tile[t + w];
        __builtin_amdgcn_s_barrier();
    }
    if (t == 0) __atomic_fetch_add(out, tile[0], __ATOMIC_RELAXED);
}

__attribute__((amdgpu_kernel)) void dmath(double *p, long *q, unsigned n) {
    unsigned i = __builtin_amdgcn_workitem_id_x();
    double v = p[i];
    for (unsigned k = 0; k < n; k++) v = v * 1.5 + (double)q[k] / (v + 2.0);
    p[i] = v;
    q[i] = (long)v << 3;
}

__attribute__((amdgpu_kernel)) void halfs(_Float16 *h, short *s) {
    int i = __builtin_amdgcn_workitem_id_x();
    h[i] = h[i] * (_Float16)0.5 + h[i + 1];
    s[i] = (short)(s[i] * 3 - s[i + 2]);
}

__attribute__((amdgpu_kernel)) void mfma(float4 *c, const half4 *a, const half4 *b) {
    int i = __builtin_amdgcn_workitem_id_x();
    c[i] = __builtin_amdgcn_mfma_f32_16x16x16f16(a[i], b[i], c[i], 0, 0, 0);
}

__attribute__((amdgpu_kernel)) void atomics(unsigned *u, float *f, double *d, long *l) {
    int i = __builtin_amdgcn_workitem_id_x();
    unsigned old = __atomic_fetch_max(&u[i & 7], (unsigned)i, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&f[i & 3], 1.0f, __ATOMIC_RELAXED);
    __atomic_fetch_add(&d[i & 3], 2.0, __ATOMIC_RELAXED);
    long e = 0;
    __atomic_compare_exchange_n(&l[i], &e, (long)old, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

__attribute__((amdgpu_kernel)) void wave(int *p) {
    int i = __builtin_amdgcn_workitem_id_x();
    int v = p[i];
    v += __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, 0);
    v += __builtin_amdgcn_update_dpp(0, v, 0x142, 0xa, 0xf, 1);
    v += __builtin_amdgcn_ds_swizzle(v, 0x041f);
    v += __builtin_amdgcn_readfirstlane(v);
    v = __builtin_amdgcn_ds_bpermute(i * 4, v);
    unsigned long long b = __builtin_amdgcn_ballot_w64(v > 3);
    p[i] = v + __builtin_popcountll(b) + __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0));
}

__attribute__((amdgpu_kernel)) void bytes(unsigned char *c, unsigned short *s, int n) {
    int i = __builtin_amdgcn_workitem_id_x();
    unsigned char x = c[i];
    unsigned short y = s[i];
    c[i] = (unsigned char)(x * 3 + (y >> 8));
    s[i] = (unsigned short)(y * x + (y >> 3) * (x & 7));
    if (n > 100) __builtin_amdgcn_s_sleep(2);
    __builtin_amdgcn_s_waitcnt(0);
}

__attribute__((amdgpu_kernel)) void scratch(float *out, int k) {
    float tmp[64];
    int i = __builtin_amdgcn_workitem_id_x();
    for (int j = 0; j < 64; j++) tmp[j] = (float)(j * i);
    out[i] = tmp[(k + i) & 63] + tmp[k & 63];
}
