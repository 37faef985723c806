#!/usr/bin/env python3
"""Golden decode cases for the MIMG (image) encoding, from llvm-objdump: replaces the
MIMG lines (first word 0b111100...) of tests/data/TARGET.txt with cases derived from
each opcode's probe words in raw.json (sweep_mimg.py): every dmask with and without d16,
each modifier bit, resource/sampler register values (named registers, ttmp, rejected
ones), data tuples near v255, and random words (fixed seed). Targets without image
instructions get none (their random-word agreement is in tests/decode_diff.rs)."""
import json, os, random, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from sweep import TARGETS
from oracle import run

def is_mimg(w0):
    return w0 >> 26 == 0b111100

def cases_for(rng, e):
    base = list(e['base'][0])
    out = [list(e['zero'][0]), base, list(e['all'][0])]
    for d16 in (0, 1):
        for dmask in range(16):
            w = list(base)
            w[0] = (w[0] & ~(0xf << 8)) | dmask << 8
            w[1] |= d16 << 31
            out.append(w)
    for b in list(range(1, 8)) + list(range(12, 18)) + [25] + [32 + b for b in range(26, 32)]:
        w = list(base); w[b // 32] ^= 1 << (b % 32)
        out.append(w)
    for v in range(32):
        w = list(base); w[1] = (w[1] & ~(0x1f << 16)) | v << 16
        out.append(w)
        if e['sampler']:
            w = list(base); w[1] = (w[1] & ~(0x1f << 21)) | v << 21
            out.append(w)
    for vd in range(248, 256):
        for dmask in (1, 3, 7, 15):
            for acc in (0, 1):
                w = list(base)
                w[0] = (w[0] & ~(0xf << 8)) | dmask << 8 | acc << 16
                w[1] = (w[1] & ~(0xff << 8)) | vd << 8
                out.append(w)
    for _ in range(48):
        w = list(base)
        w[0] = (w[0] & ~0x0203_ffff) | rng.randrange(0, 1 << 18) & ~1 | rng.randrange(0, 2) << 25
        w[1] = (w[1] & ~0x7fff_ffff) | rng.randrange(0, 1 << 31) & (0x7fff_ffff if e['sampler'] else 0x7c1f_ffff)
        if rng.random() < 0.5: w[1] &= 0x7fff_ffff
        out.append(w)
    return out

def main():
    rng = random.Random(0x1a6e)
    D = json.load(open(os.path.join(here, 'raw.json')))
    for t in TARGETS:
        cases = []
        for op, e in sorted(D[t].get('MIMG', {}).items(), key=lambda kv: int(kv[0])):
            cases.extend(cases_for(rng, e))
        res = run(t, cases)
        seen, lines = set(), []
        for c, (txt, nw) in zip(cases, res):
            if txt is None or tuple(c) in seen: continue
            seen.add(tuple(c))
            lines.append(' '.join('%08x' % x for x in c[:nw]) + '\t' + txt)
        path = os.path.join(here, '..', '..', 'tests', 'data', t + '.txt')
        kept = [l for l in open(path).read().splitlines() if l.strip() and not is_mimg(int(l.split()[0], 16))]
        open(path, 'w').write('\n'.join(kept + lines) + '\n')
        print(t, len(lines), 'MIMG cases', file=sys.stderr)

if __name__ == '__main__':
    main()
