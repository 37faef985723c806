#!/usr/bin/env python3
"""Probe llvm-objdump for every opcode of every encoding family, per target.

For each (family, opcode): a zero word (opcode only), one probe per operand field set to a
distinctive value, a probe with all live fields set, and one probe per non-opcode bit
flipped on top of that word (to learn which bits must be zero). Output: raw.json, read by
build_isa.py which writes ../isa.txt (the committed source of truth).
Run: python3 sweep.py   (needs llvm-mc-19, llvm-objdump-19, llvm-mc-22, llvm-objdump-22)"""
import json, sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import run

def run_one(t, w):
    return run(t, [w])[0][0]

TARGETS = ['gfx90a', 'gfx942', 'gfx950']

# family: (base words, opcode (word, lo, width), nops, fields [(name, word, lo, width, probe)])
SRC = lambda n, w, lo, v: (n, w, lo, 9, v)
FAMILIES = {
 'SOP2': ([0x80000000], (0, 23, 7), 0x60, [('sdst', 0, 16, 7, 16), ('ssrc1', 0, 8, 8, 64), ('ssrc0', 0, 0, 8, 32)]),
 'SOPK': ([0xB0000000], (0, 23, 5), 0x1d, [('sdst', 0, 16, 7, 16), ('simm16', 0, 0, 16, 0x1234)]),
 'SOP1': ([0xBE800000], (0, 8, 8), 256, [('sdst', 0, 16, 7, 16), ('ssrc0', 0, 0, 8, 32)]),
 'SOPC': ([0xBF000000], (0, 16, 7), 128, [('ssrc1', 0, 8, 8, 64), ('ssrc0', 0, 0, 8, 32)]),
 'SOPP': ([0xBF800000], (0, 16, 7), 128, [('simm16', 0, 0, 16, 0x1234)]),
 'SMEM': ([0xC0000000, 0], (0, 18, 8), 256, [('sbase', 0, 0, 6, 20), ('sdata', 0, 6, 7, 16), ('soe', 0, 14, 1, 1),
          ('nv', 0, 15, 1, 1), ('glc', 0, 16, 1, 1), ('imm', 0, 17, 1, 1), ('offset', 1, 0, 21, 0x40), ('soffset', 1, 25, 7, 30)]),
 'VOP2': ([0x00000000], (0, 25, 6), 0x3e, [SRC('src0', 0, 0, 0x120), ('vsrc1', 0, 9, 8, 64), ('vdst', 0, 17, 8, 16)]),
 'VOP1': ([0x7E000000], (0, 9, 8), 256, [SRC('src0', 0, 0, 0x120), ('vdst', 0, 17, 8, 16)]),
 'VOPC': ([0x7C000000], (0, 17, 8), 256, [SRC('src0', 0, 0, 0x120), ('vsrc1', 0, 9, 8, 64)]),
 'VOP3': ([0xD0000000, 0], (0, 16, 10), 1024, [('sdst', 0, 8, 7, 40), ('vdst', 0, 0, 8, 16), ('abs', 0, 8, 3, 7),
          ('opsel', 0, 11, 4, 15), ('clamp', 0, 15, 1, 1), SRC('src0', 1, 0, 0x120), SRC('src1', 1, 9, 0x140),
          SRC('src2', 1, 18, 0x180), ('omod', 1, 27, 2, 1), ('neg', 1, 29, 3, 7)]),
 'VOP3P': ([0xD3800000, 0], (0, 16, 7), 128, [('vdst', 0, 0, 8, 16), ('neg_hi', 0, 8, 3, 7), ('opsel', 0, 11, 3, 7),
          ('opsel_hi2', 0, 14, 1, 1), ('clamp', 0, 15, 1, 1), SRC('src0', 1, 0, 0x120), SRC('src1', 1, 9, 0x140),
          SRC('src2', 1, 18, 0x180), ('opsel_hi', 1, 27, 2, 3), ('neg_lo', 1, 29, 3, 7)]),
 'DS': ([0xD8000000, 0], (0, 17, 8), 256, [('offset0', 0, 0, 8, 4), ('offset1', 0, 8, 8, 8), ('gds', 0, 16, 1, 1),
        ('addr', 1, 0, 8, 32), ('data0', 1, 8, 8, 64), ('data1', 1, 16, 8, 128), ('acc', 0, 25, 1, 1), ('vdst', 1, 24, 8, 16)]),
 'MUBUF': ([0xE0000000, 0x80000000], (0, 18, 7), 128, [('offset', 0, 0, 12, 16), ('offen', 0, 12, 1, 1), ('idxen', 0, 13, 1, 1),
        ('glc', 0, 14, 1, 1), ('b15', 0, 15, 1, 1), ('lds', 0, 16, 1, 1), ('slc', 0, 17, 1, 1), ('vaddr', 1, 0, 8, 32),
        ('vdata', 1, 8, 8, 64), ('srsrc', 1, 16, 5, 4), ('acc', 1, 23, 1, 1), ('soffset', 1, 24, 8, 20)]),
 'MTBUF': ([0xE8000000, 0x80000000], (0, 15, 4), 16, [('offset', 0, 0, 12, 16), ('offen', 0, 12, 1, 1), ('idxen', 0, 13, 1, 1),
        ('glc', 0, 14, 1, 1), ('dfmt', 0, 19, 4, 3), ('nfmt', 0, 23, 3, 2), ('vaddr', 1, 0, 8, 32),
        ('vdata', 1, 8, 8, 64), ('srsrc', 1, 16, 5, 4), ('slc', 1, 22, 1, 1), ('acc', 1, 23, 1, 1), ('soffset', 1, 24, 8, 20)]),
}
for seg, name in ((0, 'FLAT'), (1, 'SCRATCH'), (2, 'GLOBAL')):
    FAMILIES[name] = ([0xDC000000 | (seg << 14), 0x7f0000 if seg else 0], (0, 18, 7), 128,
        [('offset', 0, 0, 13, 40), ('lds', 0, 13, 1, 1), ('glc', 0, 16, 1, 1), ('slc', 0, 17, 1, 1), ('b25', 0, 25, 1, 1),
         ('addr', 1, 0, 8, 32), ('data', 1, 8, 8, 64), ('saddr', 1, 16, 7, 4), ('acc', 1, 23, 1, 1), ('vdst', 1, 24, 8, 16)])

def setf(words, f, v):
    name, w, lo, width, _ = f
    words = list(words)
    mask = ((1 << width) - 1) << lo
    words[w] = (words[w] & ~mask) | ((v << lo) & mask)
    return words

def main():
    out = {}
    for t in TARGETS:
        # stage 1: zero + per-field probes
        cases, keys = [], []
        for fam, (base, (ow, olo, owid), nops, fields) in FAMILIES.items():
            for op in range(nops):
                z = list(base); z[ow] |= op << olo
                cases.append(z); keys.append((fam, op, 'zero'))
                for f in fields:
                    cases.append(setf(z, f, f[4])); keys.append((fam, op, f[0]))
        res = run(t, cases)
        d = {}
        for (fam, op, p), w, r in zip(keys, cases, res):
            d.setdefault(fam, {}).setdefault(op, {})[p] = [w, r[0], r[1]]
        # stage 2: add live fields one at a time (kept only if the word stays valid)
        state = {}
        for fam, (base, (ow, olo, owid), nops, fields) in FAMILIES.items():
            for op in range(nops):
                e = d[fam][op]
                if e['zero'][1] is not None:
                    state[(fam, op)] = (e['zero'][0], [])
        for fi in range(max(len(f[3]) for f in FAMILIES.values())):
            trials = []
            for (fam, op), (allw, live) in state.items():
                fields = FAMILIES[fam][3]
                if fi >= len(fields): continue
                f = fields[fi]
                e = d[fam][op]
                r = e[f[0]]
                if r[1] is None or r[1] == e['zero'][1]: continue
                if fam == 'VOP3' and f[0] == 'sdst' and 's[40:41]' not in r[1]: continue
                if f[0] == 'lds' and fam in ('FLAT', 'GLOBAL', 'SCRATCH', 'MUBUF'): continue
                if fam == 'VOP3' and f[0] in ('abs', 'opsel') and 'sdst' in live: continue
                trials.append(((fam, op), setf(allw, f, f[4]), f[0]))
            res = run(t, [w for _, w, _ in trials])
            for (k, w, fname), (txt, n) in zip(trials, res):
                if txt is not None:
                    state[k] = (w, state[k][1] + [fname])
        cases, keys = [], []
        for (fam, op), (allw, live) in state.items():
            base, (ow, olo, owid), nops, fields = FAMILIES[fam]
            d[fam][op]['live'] = live
            cases.append(allw); keys.append((fam, op, 'all'))
            opmask = ((1 << owid) - 1) << olo
            for wi in range(len(allw)):
                for b in range(32):
                    if wi == ow and (opmask >> b) & 1: continue
                    ww = list(allw); ww[wi] ^= 1 << b
                    cases.append(ww); keys.append((fam, op, 'bit%d' % (wi * 32 + b)))
        res = run(t, cases)
        for (fam, op, p), w, r in zip(keys, cases, res):
            d[fam][op][p] = [w, r[0], r[1]]
        out[t] = {fam: {str(op): e for op, e in ops.items()} for fam, ops in d.items()}
        # symbolic immediates: hwreg ids (s_getreg_b32) and sendmsg (s_sendmsg)
        hw = run(t, [[0xB8800000 | i] for i in range(64)])
        out[t]['hwreg'] = {str(i): r[0] for i, r in enumerate(hw)}
        sm = run(t, [[0xBF900000 | i] for i in range(1024)])
        out[t]['sendmsg'] = {str(i): r[0] for i, r in enumerate(sm)}
        print(t, len(cases), file=sys.stderr)
    json.dump(out, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'raw.json'), 'w'))

if __name__ == '__main__':
    main()
