// collatz: data-dependent loop trip counts and if/else divergence inside a wavefront.
//   steps[i] = number of Collatz steps from start[i] down to 1 (capped at 1000);
//   parity[i] = odd work-item index ? steps * 3 : steps ^ 0x55.
// The work-group size comes from the dispatch (packet in v4, hidden argument in v5+).

__attribute__((amdgpu_kernel))
void collatz(const unsigned *start, unsigned *steps, unsigned *parity, unsigned n) {
    unsigned block = __builtin_amdgcn_workgroup_size_x();
    unsigned i = __builtin_amdgcn_workgroup_id_x() * block + __builtin_amdgcn_workitem_id_x();
    if (i >= n)
        return;
    unsigned x = start[i];
    unsigned count = 0;
    while (x > 1u && count < 1000u) {
        x = (x & 1u) ? 3u * x + 1u : x >> 1;
        ++count;
    }
    steps[i] = count;
    if (i & 1u)
        parity[i] = count * 3u;
    else
        parity[i] = count ^ 0x55u;
}
