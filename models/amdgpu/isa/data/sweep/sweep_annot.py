#!/usr/bin/env python3
"""Probe LLVM's 'Invalid register' / 'Invalid immediate' annotations per operand: for
every opcode's probe word, put a misaligned register tuple, an SGPR, and an inline
constant in each register operand field. Adds 'annot' probes to raw.json.
Run after sweep.py: python3 sweep_annot.py"""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from sweep import FAMILIES, TARGETS, setf
from oracle import run

REGF = ('src0', 'src1', 'src2', 'vdst', 'vsrc1', 'addr', 'data', 'data0', 'data1', 'vaddr', 'vdata',
        'ssrc0', 'ssrc1', 'sdst', 'sdata', 'sbase', 'srsrc', 'saddr', 'soffset')

def probes(fam, f):
    name, w, lo, width, v = f
    out = {'odd': v + 1}
    if name in ('src0', 'src1', 'src2'):
        out['sgpr'] = 20
        out['imm'] = 133
    if name in ('ssrc0', 'ssrc1', 'sdst', 'sdata', 'saddr', 'soffset'):
        out['vcc'] = 106
        if name in ('ssrc0', 'ssrc1'):
            out['imm'] = 133
    return out

def main():
    path = os.path.join(here, 'raw.json')
    D = json.load(open(path))
    for t in TARGETS:
        d = D[t]
        keys, cases = [], []
        for fam, (base, _, _, fields) in FAMILIES.items():
            for op, e in d[fam].items():
                if 'all' not in e or e['all'][1] is None: continue
                for f in fields:
                    if f[0] not in e['live'] or f[0] not in REGF: continue
                    for pname, val in probes(fam, f).items():
                        keys.append((fam, op, f[0], pname)); cases.append(setf(e['all'][0], f, val))
                    # the same misaligned tuple with the AGPR-selecting bits cleared
                    w = setf(e['all'][0], f, f[4] + 1)
                    for g in fields:
                        if g[0] == 'acc' or (fam == 'VOP3P' and g[0] in ('clamp', 'opsel_hi')):
                            w = setf(w, g, 0)
                    keys.append((fam, op, f[0], 'oddv')); cases.append(w)
        res = run(t, cases)
        for (fam, op, fname, pname), c, r in zip(keys, cases, res):
            d[fam][op].setdefault('annot', {})['%s:%s' % (fname, pname)] = [c, r[0], r[1]]
        print(t, len(cases), file=sys.stderr)
    json.dump(D, open(path, 'w'))

if __name__ == '__main__':
    main()
