#!/usr/bin/env python3
"""Probe the MIMG (image) encoding of every target: which opcodes LLVM's disassembler
prints, which bits must be zero and which print modifiers, how many data registers it
prints per dmask and d16, and which resource/sampler register values it accepts. Also
asks LLVM's assembler which image mnemonics each target accepts (the evidence that
gfx942 and gfx950 have no image instructions). Adds 'MIMG' and 'MIMG_ASM' sections to
raw.json. Run after sweep.py: python3 sweep_mimg.py

MIMG layout (gfx9): w0 [0] opcode bit 7, [7] scc, [11:8] dmask, [12] unorm, [13] glc,
[14] da, [15] a16, [16] acc (gfx90a), [17] lwe, [24:18] opcode bits 6:0, [25] slc,
[31:26] 0b111100; w1 [7:0] vaddr, [15:8] vdata, [20:16] srsrc / 4, [25:21] ssamp / 4,
[31] d16."""
import json, os, re, subprocess, sys, tempfile
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from sweep import TARGETS
from oracle import run

# The probe word's operand fields: vaddr v4, vdata v8, srsrc s[8:15], ssamp s[12:15].
VADDR, VDATA, SRSRC, SSAMP = 4, 8, 2, 3

def word(op, dmask=1, vdata=VDATA, srsrc=SRSRC, ssamp=0, d16=0, bits0=0):
    w0 = 0xF0000000 | ((op & 0x7f) << 18) | (op >> 7) | (dmask << 8) | bits0
    w1 = (d16 << 31) | (ssamp << 21) | (srsrc << 16) | (vdata << 8) | VADDR
    return [w0, w1]

OPCODE_BITS = set(range(18, 25)) | {0}

def count_regs(text):
    """Number of registers of the first operand of a printed instruction."""
    m = re.match(r'\S+ [av](?:(\d+)|\[(\d+):(\d+)\])', text)
    if not m: return None
    return 1 if m.group(1) is not None else int(m.group(3)) - int(m.group(2)) + 1

def probe_target(t):
    zero = run(t, [word(op) for op in range(256)])
    ops = [op for op in range(256) if zero[op][0] is not None]
    out = {}
    for op in ops:
        sampler = run(t, [word(op, ssamp=SSAMP)])[0][0] is not None
        base = word(op, ssamp=SSAMP if sampler else 0)
        e = {'zero': [word(op), zero[op][0]], 'sampler': sampler, 'base': [base, run(t, [base])[0][0]]}
        keys, cases = [], []
        for b in range(64):
            if b in OPCODE_BITS: continue
            w = list(base); w[b // 32] ^= 1 << (b % 32)
            keys.append(('bit%d' % b,)); cases.append(w)
        for d16 in (0, 1):
            for dmask in range(16):
                keys.append(('vsize', d16, dmask)); cases.append(word(op, dmask=dmask, d16=d16, ssamp=base[1] >> 21 & 31))
        for v in range(32):
            keys.append(('srsrc', v)); cases.append(word(op, srsrc=v, ssamp=base[1] >> 21 & 31))
            if sampler:
                keys.append(('ssamp', v)); cases.append(word(op, ssamp=v))
        for vd in range(248, 256):
            for dmask in (1, 3, 7, 15):
                keys.append(('vdata_hi', vd, dmask)); cases.append(word(op, dmask=dmask, vdata=vd, ssamp=base[1] >> 21 & 31))
        res = run(t, cases)
        e['vsize'] = [[None] * 16, [None] * 16]
        e['srsrc'] = [None] * 32
        e['ssamp'] = [None] * 32
        e['vdata_hi'] = {}
        for k, c, (txt, _) in zip(keys, cases, res):
            if k[0].startswith('bit'):
                e[k[0]] = [c, txt]
            elif k[0] == 'vsize':
                e['vsize'][k[1]][k[2]] = count_regs(txt) if txt else None
            elif k[0] in ('srsrc', 'ssamp'):
                e[k[0]][k[1]] = txt
            else:
                e['vdata_hi']['%d:%d' % (k[1], k[2])] = txt
        # every printed modifier bit set at once, with dmask 0xf (the printing order)
        mods = [b for b in range(64) if b not in OPCODE_BITS and not 8 <= b < 12
                and e['bit%d' % b][1] not in (None, e['base'][1]) and not 32 <= b < 64 - 1]
        w = word(op, dmask=15, ssamp=base[1] >> 21 & 31)
        for b in mods:
            w[b // 32] |= 1 << (b % 32)
        d16_ok = e['bit63'][1] is not None
        if d16_ok: w[1] |= 1 << 31
        e['all'] = [w, run(t, [w])[0][0]]
        out[str(op)] = e
    return out

# Every image mnemonic of LLVM's GFX6-9 MIMG definitions (and the gfx9 additions), for
# the assembler evidence.
SAMPLE_SUFFIXES = ['', '_cl', '_d', '_d_cl', '_l', '_b', '_b_cl', '_lz', '_c', '_c_cl', '_c_d', '_c_d_cl', '_c_l',
                   '_c_b', '_c_b_cl', '_c_lz', '_o', '_cl_o', '_d_o', '_d_cl_o', '_l_o', '_b_o', '_b_cl_o', '_lz_o',
                   '_c_o', '_c_cl_o', '_c_d_o', '_c_d_cl_o', '_c_l_o', '_c_b_o', '_c_b_cl_o', '_c_lz_o']
GATHER_SUFFIXES = ['', '_cl', '_l', '_b', '_b_cl', '_lz', '_c', '_c_cl', '_c_l', '_c_b', '_c_b_cl', '_c_lz', '_o', '_cl_o',
                   '_l_o', '_b_o', '_b_cl_o', '_lz_o', '_c_o', '_c_cl_o', '_c_l_o', '_c_b_o', '_c_b_cl_o', '_c_lz_o']
CD_NAMES = ['image_sample_cd', 'image_sample_cd_cl', 'image_sample_c_cd', 'image_sample_c_cd_cl', 'image_sample_cd_o',
            'image_sample_cd_cl_o', 'image_sample_c_cd_o', 'image_sample_c_cd_cl_o']
NOSAMP = ['image_load', 'image_load_mip', 'image_load_pck', 'image_load_pck_sgn', 'image_load_mip_pck',
          'image_load_mip_pck_sgn', 'image_store', 'image_store_mip', 'image_store_pck', 'image_store_mip_pck',
          'image_get_resinfo'] + ['image_atomic_' + a for a in (
              'swap', 'cmpswap', 'add', 'sub', 'rsub', 'smin', 'umin', 'smax', 'umax', 'and', 'or', 'xor', 'inc', 'dec',
              'fcmpswap', 'fmin', 'fmax')]
SAMP = (['image_sample' + s for s in SAMPLE_SUFFIXES] + ['image_gather4' + s for s in GATHER_SUFFIXES]
        + ['image_gather4h', 'image_gather4h_pck', 'image_gather8h_pck', 'image_get_lod'] + CD_NAMES)

def assemble(cpu, lines):
    """llvm-mc's verdict per line: 'ok', or its first error message."""
    v = '22' if cpu == 'gfx950' else '19'
    with tempfile.TemporaryDirectory() as tmp:
        s = os.path.join(tmp, 'a.s')
        open(s, 'w').write('\n'.join(lines) + '\n')
        p = subprocess.run(['llvm-mc-' + v, '-triple=amdgcn-amd-amdhsa', '-mcpu=' + cpu, '-show-encoding', s],
                           capture_output=True, text=True)
    errors = {}
    for m in re.finditer(r'a\.s:(\d+):\d+: error: (.*)', p.stderr):
        errors.setdefault(int(m.group(1)), m.group(2))
    return ['ok' if i + 1 not in errors else errors[i + 1] for i in range(len(lines))]

def assembler_evidence(t):
    out = {}
    for mn in NOSAMP + SAMP:
        sampler = mn in SAMP
        shapes = ['%s v[0:3], v[0:3], s[0:7], s[8:11] dmask:0xf' % mn] if sampler else \
                 ['%s v[0:3], v[0:3], s[0:7] dmask:0xf' % mn, '%s v[0:1], v[0:3], s[0:7] dmask:0x3' % mn,
                  '%s v0, v[0:3], s[0:7] dmask:0x1' % mn]
        verdicts = assemble(t, shapes)
        ok = 'ok' in verdicts
        out[mn] = 'ok' if ok else verdicts[0]
    return out

def main():
    path = os.path.join(here, 'raw.json')
    D = json.load(open(path))
    for t in TARGETS:
        D[t]['MIMG'] = probe_target(t)
        D[t]['MIMG_ASM'] = assembler_evidence(t)
        accepted = sorted(m for m, v in D[t]['MIMG_ASM'].items() if v == 'ok')
        print(t, len(D[t]['MIMG']), 'opcodes decode;', len(accepted), 'mnemonics assemble', file=sys.stderr)
    json.dump(D, open(path, 'w'))

if __name__ == '__main__':
    main()
