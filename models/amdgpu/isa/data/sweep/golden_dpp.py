#!/usr/bin/env python3
"""Append DPP and SDWA golden cases (from llvm-objdump) to tests/data/TARGET.txt: random
control words on every opcode's DPP/SDWA probe word (fixed seed). Run after golden.py."""
import json, os, random, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from sweep import TARGETS
from oracle import run

DPP_CTRLS = list(range(0, 256, 7)) + list(range(0x101, 0x110)) + list(range(0x111, 0x120)) + \
    list(range(0x121, 0x130)) + [0x130, 0x134, 0x138, 0x13c, 0x140, 0x141, 0x142, 0x143]

def main():
    rng = random.Random(0xd99)
    D = json.load(open(os.path.join(here, 'raw.json')))
    for t in TARGETS:
        cases = []
        for sec in ('DPP_VOP1', 'DPP_VOP2', 'DPP_VOPC', 'SDWA_VOP1', 'SDWA_VOP2', 'SDWA_VOPC'):
            for op, e in D[t].get(sec, {}).items():
                w0, w1 = e['base'][0]
                cases.append([w0, w1])
                for k in range(6):
                    a = w0
                    if not sec.endswith('VOPC'): a = (a & ~(0xff << 17)) | (rng.randrange(256) << 17)
                    if not sec.endswith('VOP1'): a = (a & ~(0xff << 9)) | (rng.randrange(256) << 9)
                    if sec.startswith('DPP'):
                        b = rng.randrange(256) | (rng.choice(DPP_CTRLS) << 8) | (rng.randrange(64) << 18) | (rng.randrange(256) << 24)
                    else:
                        b = rng.randrange(256) | (rng.randrange(7) << 8) | (rng.randrange(3) << 11) | (rng.randrange(8) << 13) \
                            | (rng.randrange(7) << 16) | (rng.randrange(32) << 19) | (rng.randrange(7) << 24) | (rng.randrange(32) << 27)
                        if rng.random() < 0.7: b &= ~((1 << 23) | (1 << 31))
                        if rng.random() < 0.5: b &= ~(0x3f << 19) & ~(0x1f << 27)
                    cases.append([a, b])
        res = run(t, cases)
        path = os.path.join(here, '..', '..', 'tests', 'data', t + '.txt')
        have = set(l.split('\t')[0] for l in open(path))
        n = 0
        with open(path, 'a') as f:
            for c, (txt, nw) in zip(cases, res):
                if txt is None: continue
                hexw = ' '.join('%08x' % x for x in c[:nw])
                if hexw in have: continue
                have.add(hexw)
                f.write(hexw + '\t' + txt + '\n')
                n += 1
        print(t, n, 'dpp/sdwa cases', file=sys.stderr)

if __name__ == '__main__':
    main()
