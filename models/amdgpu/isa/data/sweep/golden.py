#!/usr/bin/env python3
"""Generate golden decode cases per target from llvm-objdump: tests/data/TARGET.txt,
one line per case `HEX_WORDS<TAB>LLVM TEXT`. Words are derived from each opcode's probe
word (raw.json) with randomised operand fields, modifier bits and literals (fixed seed).
The golden test splits them into TARGET.txt (must match) and TARGET.pending.txt."""
import json, os, random, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from sweep import FAMILIES, TARGETS, setf
from oracle import run

SRC_CHOICES = list(range(0, 102)) + [102, 104, 106, 107, 124, 126, 127] + list(range(108, 124)) + \
    list(range(128, 209)) + list(range(235, 249)) + [251, 252, 253] + list(range(256, 512)) * 2
LITS = [0x3f800000, 0xbf000000, 0x3e22f983, 0x00000005, 0xfffffff0, 0x12345678, 0x3c00, 0x3118, 0x40000000,
        0x3ff00000, 0xffffffff, 0x41, 0x7fffffff, 0x80000000]

def rand_field(rng, fam, f):
    name, w, lo, width, probe = f
    if name in ('src0', 'src1', 'src2'):
        v = rng.choice(SRC_CHOICES)
        if fam in ('VOP1', 'VOP2', 'VOPC', 'VOP3', 'VOP3P') and v == 255: v = 256
        return v
    if name in ('ssrc0', 'ssrc1'):
        return rng.choice(list(range(0, 102)) + [106, 107, 124, 126, 127] + list(range(108, 124)) + list(range(128, 209)) + list(range(240, 249)) + [255] * 8)
    if name in ('sdst', 'sdata'):
        return rng.choice(list(range(0, 102)) + [106, 107, 124, 126, 127] + list(range(108, 124)))
    if name == 'sbase': return rng.randrange(0, 51)
    if name == 'srsrc': return rng.randrange(0, 26)
    if name == 'soffset': return rng.choice(list(range(0, 102)) + [124, 128, 129, 193])
    if name == 'saddr': return rng.choice(list(range(0, 100, 2)) + [0x7f] * 30)
    if name == 'simm16': return rng.choice([0, 1, 3, 5, 64, 65, 0x1234, 0xffff, 0xfffe, 0x8000, rng.randrange(0, 65536)])
    return rng.randrange(0, 1 << width)

def main():
    rng = random.Random(0x5eed)
    D = json.load(open(os.path.join(here, 'raw.json')))
    for t in TARGETS:
        d = D[t]
        cases = []
        for fam, (base, (ow, olo, owid), nops, fields) in FAMILIES.items():
            for op, e in d[fam].items():
                if 'all' not in e or e['all'][1] is None: continue
                if fam == 'VOP3' and int(op) >= 0x380: continue
                live = e['live']
                cases.append(list(e['all'][0]))
                cases.append(list(e['zero'][0]))
                # bits whose flip keeps the word valid
                free = [int(p[3:]) for p, v in e.items() if p.startswith('bit') and v[1] is not None]
                n = 8 if fam in ('VOP3', 'VOP3P', 'SOP2', 'SOP1', 'VOP1', 'VOP2', 'VOPC', 'SMEM', 'FLAT', 'GLOBAL', 'DS') else 4
                for k in range(n):
                    w = list(e['all'][0] if k % 2 else e['zero'][0])
                    for f in fields:
                        if f[0] in live and rng.random() < 0.7:
                            w = setf(w, f, rand_field(rng, fam, f))
                    for b in free:
                        if rng.random() < 0.15:
                            w[b // 32] ^= 1 << (b % 32)
                    cases.append(w)
        # append a literal to every case (consumed only if the instruction takes one)
        lits = [rng.choice(LITS) for _ in cases]
        res = run(t, [c + [l] for c, l in zip(cases, lits)])
        seen = set()
        lines = []
        for c, l, (txt, nw) in zip(cases, lits, res):
            if txt is None: continue
            ws = (c + [l])[:nw]
            key = tuple(ws)
            if key in seen: continue
            seen.add(key)
            lines.append(' '.join('%08x' % x for x in ws) + '\t' + txt)
        out = os.path.join(here, '..', '..', 'tests', 'data', t + '.txt')
        open(out, 'w').write('\n'.join(lines) + '\n')
        print(t, len(lines), file=sys.stderr)

if __name__ == '__main__':
    main()
