// Prints texel addresses of gfx9 image layouts as ROCr's image code computes them, through
// AMD's addrlib (ROCR-Runtime runtime/hsa-runtime/image/addrlib), set up as ROCr's
// ImageManagerKv does for a gfx9 agent (FAMILY_AI, chip revision 0) and with the
// GB_ADDR_CONFIG the simulated GPU reports (0). The output is the oracle of
// tests/exec_image_layout.rs; layout_oracle.sh builds and runs this file.
//
// Output: per surface a line `S type bpp mode width height slices levels pitch`, then
// lines `P level x y slice address` (type 1 = 1D, 2 = 2D, 3 = 3D; mode = AddrSwizzleMode;
// pitch = level 0's pitch in elements; slice = array slice or 3D depth slice).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "addrinterface.h"

using namespace rocr;

static void* ADDR_API alloc_sys_mem(const ADDR_ALLOCSYSMEM_INPUT* in) { return malloc(in->sizeInBytes); }
static ADDR_E_RETURNCODE ADDR_API free_sys_mem(const ADDR_FREESYSMEM_INPUT* in) {
    free(in->pVirtAddr);
    return ADDR_OK;
}

// The gfx9 ("Arctic Islands") engine id of addrlib's core/addrlib.h.
static const unsigned kArcticIslandEngine = 0xD;

// A small deterministic generator (xorshift).
static unsigned long long state = 0x9e3779b97f4a7c15ull;
static unsigned next(unsigned bound) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (unsigned)((state >> 16) % bound);
}

int main() {
    ADDR_CREATE_INPUT create = {};
    ADDR_CREATE_OUTPUT created = {};
    create.size = sizeof(create);
    created.size = sizeof(created);
    create.chipEngine = kArcticIslandEngine;
    create.chipFamily = 0x8D;  // FAMILY_AI
    create.chipRevision = 0;
    create.createFlags.useTileIndex = 1;
    create.callbacks.allocSysMem = alloc_sys_mem;
    create.callbacks.freeSysMem = free_sys_mem;
    create.regValue.gbAddrConfig = 0;
    if (AddrCreate(&create, &created) != ADDR_OK) {
        fprintf(stderr, "AddrCreate failed\n");
        return 1;
    }
    ADDR_HANDLE lib = created.hLib;
    struct Size { unsigned w, h, slices; };
    const Size sizes2d[] = {{1, 1, 1}, {7, 3, 1}, {64, 8, 1}, {100, 37, 1}, {300, 200, 1}, {1000, 1000, 1},
                            {33, 65, 3}, {256, 256, 2}, {5, 900, 1}, {2048, 16, 1}};
    const Size sizes3d[] = {{4, 4, 4}, {7, 5, 3}, {64, 64, 64}, {33, 17, 9}, {128, 8, 40}};
    const unsigned bpps[] = {8, 16, 32, 64, 128};
    for (int type = 1; type <= 3; type++) {
        for (unsigned mode = 0; mode < 28; mode++) {
            if (mode >= 12 && mode <= 15) continue;  // variable-block modes
            if (type == 1 && mode != 0) continue;    // gfx9 1D is linear only
            for (unsigned bpp : bpps) {
                const Size* sizes = type == 3 ? sizes3d : sizes2d;
                unsigned nsizes = type == 3 ? 5 : 10;
                for (unsigned si = 0; si < nsizes; si++) {
                    Size s = sizes[si];
                    if (type == 1) s.h = 1;
                    for (int mipped = 0; mipped < 2; mipped++) {
                        unsigned maxdim = s.w > s.h ? s.w : s.h;
                        if (type == 3 && s.slices > maxdim) maxdim = s.slices;
                        unsigned levels = 1;
                        if (mipped) {
                            while ((1u << levels) <= maxdim) levels++;
                        }
                        if (mipped && levels == 1) continue;
                        ADDR2_COMPUTE_SURFACE_INFO_INPUT in = {};
                        ADDR2_COMPUTE_SURFACE_INFO_OUTPUT out = {};
                        in.size = sizeof(in);
                        out.size = sizeof(out);
                        in.swizzleMode = (AddrSwizzleMode)mode;
                        in.resourceType = type == 1 ? ADDR_RSRC_TEX_1D : type == 2 ? ADDR_RSRC_TEX_2D : ADDR_RSRC_TEX_3D;
                        in.format = ADDR_FMT_INVALID;
                        in.bpp = bpp;
                        in.width = s.w;
                        in.height = s.h;
                        in.numSlices = s.slices;
                        in.numMipLevels = levels;
                        in.numSamples = 1;
                        in.numFrags = 1;
                        in.flags.texture = 1;
                        if (Addr2ComputeSurfaceInfo(lib, &in, &out) != ADDR_OK || out.surfSize == 0) continue;
                        printf("S %d %u %u %u %u %u %u %u\n", type, bpp, mode, s.w, s.h, s.slices, levels, out.pitch);
                        for (unsigned level = 0; level < levels; level++) {
                            unsigned lw = s.w >> level ? s.w >> level : 1;
                            unsigned lh = s.h >> level ? s.h >> level : 1;
                            unsigned ld = type == 3 ? (s.slices >> level ? s.slices >> level : 1) : s.slices;
                            for (int k = 0; k < 4; k++) {
                                ADDR2_COMPUTE_SURFACE_ADDRFROMCOORD_INPUT ain = {};
                                ADDR2_COMPUTE_SURFACE_ADDRFROMCOORD_OUTPUT aout = {};
                                ain.size = sizeof(ain);
                                aout.size = sizeof(aout);
                                ain.x = k == 0 ? 0 : k == 1 ? lw - 1 : next(lw);
                                ain.y = k == 0 ? 0 : k == 1 ? lh - 1 : next(lh);
                                ain.slice = k == 0 ? 0 : k == 1 ? ld - 1 : next(ld);
                                ain.mipId = level;
                                ain.unalignedWidth = s.w;
                                ain.unalignedHeight = s.h;
                                ain.numSlices = s.slices;
                                ain.numMipLevels = levels;
                                ain.numSamples = 1;
                                ain.numFrags = 1;
                                ain.swizzleMode = (AddrSwizzleMode)mode;
                                ain.resourceType = in.resourceType;
                                ain.bpp = bpp;
                                ain.flags.texture = 1;
                                if (Addr2ComputeSurfaceAddrFromCoord(lib, &ain, &aout) != ADDR_OK) continue;
                                printf("P %u %u %u %u %llu\n", level, ain.x, ain.y, ain.slice, (unsigned long long)aout.addr);
                            }
                        }
                    }
                }
            }
        }
    }
    AddrDestroy(lib);
    return 0;
}
