#!/usr/bin/env python3
"""Probe the DPP and SDWA forms of every VOP1/VOP2/VOPC opcode (src0 = 0xfa / 0xf9 with a
second control word). Reads raw.json (from sweep.py) for the valid opcodes and adds
'DPP'/'SDWA' sections to it. Run after sweep.py: python3 sweep_dpp.py"""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from sweep import TARGETS
from oracle import run

def w0_for(fam, op, src0):
    if fam == 'VOP1': return (0x3F << 25) | (16 << 17) | (op << 9) | src0
    if fam == 'VOP2': return (op << 25) | (16 << 17) | (64 << 9) | src0
    return (0x3E << 25) | (op << 17) | (64 << 9) | src0

DPP_BASE = 0xff00e420          # row_mask 0xf, bank_mask 0xf, quad_perm identity, src0 v32
SDWA_BASES = [0x06060620, 0x00060620, 0x06060020, 0x00000020, 0x00060020]

def main():
    path = os.path.join(here, 'raw.json')
    D = json.load(open(path))
    for t in TARGETS:
        d = D[t]
        keys, cases = [], []
        for fam in ('VOP1', 'VOP2', 'VOPC'):
            for op, e in d[fam].items():
                if e['zero'][1] is None: continue
                o = int(op)
                keys.append((fam, op, 'DPP', DPP_BASE)); cases.append([w0_for(fam, o, 0xfa), DPP_BASE])
                for b in SDWA_BASES:
                    keys.append((fam, op, 'SDWA', b)); cases.append([w0_for(fam, o, 0xf9), b])
        res = run(t, cases)
        base = {}
        for (fam, op, kind, b), (txt, n) in zip(keys, res):
            if txt is not None and (fam, op, kind) not in base:
                base[(fam, op, kind)] = (b, txt)
        keys, cases = [], []
        for (fam, op, kind), (b, txt) in base.items():
            w0 = w0_for(fam, int(op), 0xfa if kind == 'DPP' else 0xf9)
            for bit in range(8, 32):
                nb = b ^ (1 << bit)
                if kind == 'SDWA' and (any((nb >> sh) & 7 == 7 for sh in (8, 16, 24)) or (nb >> 11) & 3 == 3):
                    continue  # llvm-objdump crashes on these reserved selector values
                keys.append((fam, op, kind, bit)); cases.append([w0, nb])
            for bit in range(0, 32):
                if fam == 'VOP2' and bit >= 25: continue
                if bit < 9 and True: continue
                keys.append((fam, op, kind, 32 + bit)); cases.append([w0 ^ (1 << bit), b])
        res = run(t, cases)
        out = {}
        for (fam, op, kind), (b, txt) in base.items():
            out.setdefault(kind + '_' + fam, {})[op] = {'base': [[w0_for(fam, int(op), 0xfa if kind == 'DPP' else 0xf9), b], txt, 2]}
        for (fam, op, kind, bit), c, r in zip(keys, cases, res):
            out[kind + '_' + fam][op]['bit%d' % bit] = [c, r[0], r[1]]
        d.update(out)
        print(t, sum(len(v) for v in out.values()), 'dpp/sdwa forms', file=sys.stderr)
    json.dump(D, open(path, 'w'))

if __name__ == '__main__':
    main()
