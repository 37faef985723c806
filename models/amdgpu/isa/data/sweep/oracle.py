"""Run llvm-mc + llvm-objdump on lists of instruction words and return the printed text.

Each case is followed by two `s_nop 0x1234` words, so an instruction that needs a literal
takes the first of them, and the next case always starts at a known address."""
import os, re, subprocess, sys, tempfile

LIT = 0xbf801234

def _run(cpu, cases):
    v = '22' if cpu == 'gfx950' else '19'
    lines, starts, addr = ['.text'], [], 0
    for ws in cases:
        starts.append(addr)
        for w in ws + [LIT, LIT]:
            lines.append('.long 0x%08x' % w)
            addr += 4
    with tempfile.TemporaryDirectory() as tmp:
        s, o = os.path.join(tmp, 'p.s'), os.path.join(tmp, 'p.o')
        open(s, 'w').write('\n'.join(lines) + '\n')
        subprocess.run(['llvm-mc-' + v, '-triple=amdgcn-amd-amdhsa', '-mcpu=' + cpu, '-filetype=obj', s, '-o', o], check=True)
        p = subprocess.run(['llvm-objdump-' + v, '-d', '--mcpu=' + cpu, o], capture_output=True, text=True)
        if p.returncode != 0:
            return None
    res = {}
    for l in p.stdout.split('\n'):
        m = re.match(r'\t(.*?)\s*// ([0-9A-F]+): ([0-9A-F ]+?)( <.*>)?$', l)
        if m:
            res[int(m.group(2), 16)] = (m.group(1).strip(), len(m.group(3).split()))
    out = []
    for st in starts:
        t = res.get(st)
        out.append((None, 1) if t is None or t[0].startswith('.long') else t)
    return out

def run(cpu, cases):
    """Returns [(text or None, n_words)] per case. Cases that crash the tool count as None."""
    if not cases:
        return []
    r = _run(cpu, cases)
    if r is not None:
        return r
    if len(cases) == 1:
        print('oracle crash on', cpu, ['%08x' % w for w in cases[0]], file=sys.stderr)
        return [(None, 1)]
    h = len(cases) // 2
    return run(cpu, cases[:h]) + run(cpu, cases[h:])

if __name__ == '__main__':
    cpu = sys.argv[1]
    cases = [[int(x, 16) for x in a.split(',')] for a in sys.argv[2:]]
    for c, (t, n) in zip(cases, run(cpu, cases)):
        print(' '.join('%08x' % x for x in c), n, t)
