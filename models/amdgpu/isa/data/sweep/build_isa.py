#!/usr/bin/env python3
"""Turn raw.json (from sweep.py) into ../isa.txt, the ISA source of truth.

One line per (family, opcode, shape), with the list of targets that share it:
  FAMILY OPCODE MNEMONIC TARGETS ops=FIELD:CLASS:WIDTH,... mods=FIELD,... must=W:MASK:VALUE,... [kind=K] [lit16]
Classes: v (vector, VGPR/AGPR), s (scalar register), i (immediate), =TEXT (fixed text).
`must` lists bits outside operand fields that must equal VALUE for the word to be valid."""
import json, os, re, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from sweep import FAMILIES, TARGETS, setf
from oracle import run

REGS = {'sdst', 'ssrc0', 'ssrc1', 'src0', 'src1', 'src2', 'vsrc1', 'vdst', 'sbase', 'sdata', 'soffset',
        'addr', 'data', 'data0', 'data1', 'saddr', 'vaddr', 'vdata', 'srsrc'}
IMMS = {'offset', 'simm16', 'offset0', 'offset1', 'dfmt', 'nfmt'}
REG_FIELDS = REGS | IMMS
PREFIX = {'SOP2': (0, 0xC0000000), 'SOPK': (0, 0xF0000000), 'SOP1': (0, 0xFF800000), 'SOPC': (0, 0xFF800000),
          'SOPP': (0, 0xFF800000), 'SMEM': (0, 0xFC000000), 'VOP2': (0, 0x80000000), 'VOP1': (0, 0xFE000000),
          'VOPC': (0, 0xFE000000), 'VOP3': (0, 0xFC000000), 'VOP3P': (0, 0xFF800000), 'DS': (0, 0xFC000000),
          'MUBUF': (0, 0xFC000000), 'MTBUF': (0, 0xFC000000), 'FLAT': (0, 0xFC00C000), 'SCRATCH': (0, 0xFC00C000),
          'GLOBAL': (0, 0xFC00C000)}

def field_reg_number(fam, f):
    name, w, lo, width, v = f
    if name in ('src0', 'src1', 'src2'): return v - 256
    if name == 'sbase': return v * 2
    if name == 'srsrc': return v * 4
    return v

REG_RE = re.compile(r'^(?:-|\|)*(?:neg\(|abs\(|sext\()?(v|s|a|ttmp)(?:(\d+)|\[(\d+):(\d+)\])')

def split_text(t):
    t = re.sub(r'/\*.*?\*/', '', t)
    if ' ' not in t: return t, [], []
    mn, rest = t.split(' ', 1)
    # split on ', ' outside parentheses and brackets
    parts, depth, cur = [], 0, ''
    i = 0
    while i < len(rest):
        c = rest[i]
        if c in '([': depth += 1
        if c in ')]': depth -= 1
        if depth == 0 and rest.startswith(', ', i):
            parts.append(cur); cur = ''; i += 2; continue
        cur += c; i += 1
    parts.append(cur)
    last = parts[-1]
    if '(' in last and last.endswith(')') and ' ' in last and not re.match(r'^(hwreg|sendmsg|gpr_idx)\(', last):
        return mn, parts, []
    if re.match(r'^(hwreg|sendmsg|gpr_idx)\(', last) or 'cnt(' in last:
        return mn, parts, []
    sp = last.split(' ')
    if len(parts) == 1 and sp[0] in ('sc0', 'sc1', 'nt', 'glc', 'slc', 'scc', 'lds', 'gds', 'clamp'):
        return mn, [], sp
    return mn, parts[:-1] + [sp[0]], sp[1:]

ANNOT_RE = re.compile(r"/\*Invalid register, operand has '(\w+)' register class\*/")

def ops_keep(t):
    """Operand strings of a printed instruction, comments kept."""
    if t is None or ' ' not in t: return []
    rest = t.split(' ', 1)[1]
    parts, depth, cur, i = [], 0, '', 0
    while i < len(rest):
        c = rest[i]
        if rest.startswith('/*', i):
            j = rest.index('*/', i) + 2
            cur += rest[i:j]; i = j; continue
        if c in '([': depth += 1
        if c in ')]': depth -= 1
        if depth == 0 and rest.startswith(', ', i):
            parts.append(cur); cur = ''; i += 2; continue
        cur += c; i += 1
    parts.append(cur)
    last = parts[-1]
    m = re.match(r'^([^\s/]*(?:/\*.*?\*/)?)', last)
    parts[-1] = m.group(1) if m else last
    return parts

def annotations(e, idx, fname):
    """Annotation suffixes for operand number idx (field fname) learned from the probes."""
    out = []
    a = e.get('annot', {})
    def at(text):
        ops = ops_keep(text)
        if idx < len(ops):
            m = ANNOT_RE.search(ops[idx])
            if m: return m.group(1)
            if '/*Invalid immediate*/' in ops[idx]: return 'IMM'
        return None
    for probe in ('odd', 'oddv'):
        r = a.get(fname + ':' + probe)
        if r and r[1]:
            ops = ops_keep(r[1])
            n = at(r[1])
            if n and n != 'IMM' and idx < len(ops):
                letter = 'a' if re.match(r'^[-|]*a', ops[idx]) else 'v'
                tag = ('ma=' if letter == 'a' else 'mv=') + n
                if tag not in out: out.append(tag)
    r = a.get(fname + ':sgpr')
    if r and r[1]:
        n = at(r[1])
        if n and n != 'IMM': out.append('s=' + n)
    n = at(e['all'][1])
    if n and n != 'IMM' and fname in ('src0', 'src1', 'src2'): out.append('v=' + n)
    r = a.get(fname + ':imm')
    if r and r[1] and at(r[1]) == 'IMM': out.append('i')
    return out

def analyse(fam, op, e, lit_text, i16=False):
    fields = FAMILIES[fam][3]
    live = e['live']
    allw, text, nwords = e['all']
    mn, ops, mods = split_text(text)
    byname = {f[0]: f for f in fields}
    out_ops, used = [], set()
    for tok in ops:
        m = REG_RE.match(tok)
        hit = None
        if m and m.group(1) != 'ttmp':
            num = int(m.group(2) if m.group(2) is not None else m.group(3))
            width = 1 if m.group(2) is not None else int(m.group(4)) - int(m.group(3)) + 1
            for fname in live:
                f = byname[fname]
                if fname in used or fname not in REGS: continue
                if field_reg_number(fam, f) == num:
                    hit = (fname, 's' if m.group(1) == 's' else 'v', width)
                    break
        elif m and m.group(1) == 'ttmp' and 'sdst' in live and 'sdst' not in used:
            hit = ('sdst', 's', int(m.group(4)) - int(m.group(3)) + 1)
        if hit is None:
            # an immediate-valued operand (SOPK simm16, soffset inline constant, SMEM offset)
            for fname in live:
                if fname in used or fname not in REG_FIELDS: continue
                f = byname[fname]
                if fname == 'soffset' and tok == 's%d' % f[4]: continue
                if tok in (str(f[4]), hex(f[4])):
                    hit = (fname, 'i', 1)
                    break
        if hit is None and fam in ('SOPK', 'SOPP') and ('hwreg(' in tok or 'cnt(' in tok or 'sendmsg' in tok or 'gpr_idx' in tok):
            hit = ('simm16', 'i', 1)
        if hit is None and fam in ('MUBUF', 'MTBUF') and tok in ('v[0:1]', 'off', 'v0') and 'vaddr' not in used:
            hit = ('vaddr', 'v', 1)
        if hit is None and fam == 'SCRATCH' and tok in ('off', 'v0') and 'addr' not in used:
            hit = ('addr', 'v', 1)
        if hit is None and not out_ops and fam in ('FLAT', 'GLOBAL', 'SCRATCH', 'MUBUF', 'DS') and e.get('glc') and e['glc'][1]:
            gt = split_text(e['glc'][1])[1]
            if len(gt) > len(split_text(e['zero'][1])[1]):
                m2 = REG_RE.match(gt[0])
                if m2:
                    hit = ('vdst' if fam != 'MUBUF' else 'vdata', 'v', 1 if m2.group(2) is not None else int(m2.group(4)) - int(m2.group(3)) + 1)
        if hit is not None and hit[1] == 'v' and e.get(hit[0]) and e[hit[0]][1]:
            f = byname[hit[0]]
            for t2 in split_text(e[hit[0]][1])[1]:
                m3 = REG_RE.match(t2)
                if m3 and m3.group(1) == 'a' and int(m3.group(2) or m3.group(3)) == field_reg_number(fam, f):
                    hit = (hit[0], 'a', hit[2])
        if hit is None:
            out_ops.append('=' + tok)
        else:
            used.add(hit[0])
            out_ops.append(':'.join(['%s:%s:%d' % hit] + annotations(e, len(out_ops), hit[0])))
    all_text = e['all'][1]
    extra_masks = []
    mod_fields = []
    for f in fields:
        if f[0] in used or f[0] in REGS: continue
        printed = False
        for bi in range(f[2], f[2] + f[3]):
            r = e.get('bit%d' % (f[1] * 32 + bi))
            if r and r[1] is not None and r[1] != all_text:
                printed = True
        if printed: mod_fields.append(f[0])
    # must-be bits: flips outside live operand fields that make the word invalid
    masks = [0] * len(allw)
    pw, pm = PREFIX[fam]
    for p, v in e.items():
        if not p.startswith('bit') or v[1] is not None: continue
        b = int(p[3:]); wi, bi = divmod(b, 32)
        if wi == pw and (pm >> bi) & 1: continue
        infield = False
        for fname in live:
            f = byname[fname]
            if fname in REG_FIELDS and f[1] == wi and f[2] <= bi < f[2] + f[3]:
                infield = True
        if not infield:
            masks[wi] |= 1 << bi
    if fam == 'VOP3':
        for name, wi, lo, n in (('absm', 0, 8, 3), ('negm', 1, 29, 3), ('opselm', 0, 11, 4)):
            mask = 0
            for k in range(n):
                r = e.get('bit%d' % (wi * 32 + lo + k))
                if r and r[1] is not None and r[1] != all_text: mask |= 1 << k
            if 'sdst' in used and name != 'negm': mask = 0
            extra_masks.append('%s=%d' % (name, mask))
        sx = 0
        names = [o.split(':')[0] for o in out_ops]
        for k in range(3):
            if 'src%d' % k not in names: continue
            idx = names.index('src%d' % k)
            texts = [all_text]
            r = e.get('bit%d' % (32 + 29 + k))
            if r and r[1]: texts.append(r[1])
            for tx in texts:
                toks = ops_keep(tx)
                if idx < len(toks) and 'sext(' in toks[idx]: sx |= 1 << k
        if sx: extra_masks.append('dppsext=%d' % sx)
    if fam == 'MUBUF' and e.get('lds') and e['lds'][1]:
        masks[0] &= ~(1 << 16)
    must = ['%d:%08x:%08x' % (wi, m, allw[wi] & m) for wi, m in enumerate(masks) if m]
    extra = list(extra_masks)
    if i16: extra.append('i16')
    if fam in ('SOPP', 'SOPK') and 'simm16' in used:
        zt = e['zero'][1]; pt = e['simm16'][1]
        if 'cnt(' in zt: kind = 'waitcnt'
        elif 'hwreg(' in zt: kind = 'hwreg'
        elif 'sendmsg(' in zt: kind = 'sendmsg'
        elif 'gpr_idx(' in zt: kind = 'gpr_idx'
        elif pt.endswith('4660'): kind = 'dec' if not mn.startswith(('s_branch', 's_cbranch', 's_call')) else 'label'
        else: kind = 'hex'
        extra.append('kind=' + kind)
    if fam == 'VOP3P' and 'cbsz:' in (e['neg_hi'][1] or '') and 'neg:[' in (e['neg_lo'][1] or ''):
        extra.append('kind=mai_neg')
    elif fam == 'VOP3P' and 'cbsz:' in (e['neg_hi'][1] or ''):
        extra.append('kind=mai')
    if fam == 'VOP3P' and '|' in (e['neg_hi'][1] or ''):
        extra.append('kind=mix')
    if fam == 'VOP3P' and 'op_sel_hi' in (e['zero'][1] or ''):
        extra.append('pkhi')
    if fam == 'VOP3P' and 'neg_hi' in live and 'abid:' in (e['opsel'][1] or '') and 'cbsz:' not in (e['neg_hi'][1] or ''):
        extra.append('kind=mai')
    if lit_text is not None and re.search(r'0x1234$', lit_text.split(',')[1 if fam in ('VOP1', 'VOP2') else 0].strip()):
        extra.append('lit16')
    if fam in ('FLAT', 'GLOBAL', 'SCRATCH', 'MUBUF', 'DS') and e.get('glc') and e['glc'][1] and e['zero'][1]:
        zo = split_text(e['zero'][1])[1]; go = split_text(e['glc'][1])[1]
        if len(go) > len(zo): extra.append('glcret')
    if fam == 'MUBUF' and e.get('lds') and e['lds'][1]:
        extra.append('ldsform')
    return mn, ','.join(out_ops), ','.join(mod_fields), ','.join(must), ' '.join(extra), nwords

def analyse_dpp(fam, e):
    (w0, w1), text, _ = e['base']
    mn, ops, mods = split_text(text)
    out_ops = []
    for tok in ops:
        m = REG_RE.match(tok)
        hit = None
        if m and m.group(1) in ('v', 's', 'a'):
            num = int(m.group(2) if m.group(2) is not None else m.group(3))
            width = 1 if m.group(2) is not None else int(m.group(4)) - int(m.group(3)) + 1
            name = {16: 'vdst', 32: 'src0', 64: 'vsrc1'}.get(num)
            if name:
                hit = '%s:%s:%d' % (name, 's' if m.group(1) == 's' else 'v', width)
        out_ops.append(hit or '=' + tok)
    opfield = {'VOP1DPP': (9, 8), 'VOP1SDWA': (9, 8), 'VOPCDPP': (17, 8), 'VOPCSDWA': (17, 8)}.get(fam, (25, 6))
    skip0 = set(range(opfield[0], opfield[0] + opfield[1])) | set(range(0, 9))
    if not fam.startswith('VOPC'): skip0 |= set(range(17, 25))
    if not fam.startswith('VOP1'): skip0 |= set(range(9, 17))
    if fam.startswith('VOP1'): skip0 |= set(range(25, 32))
    if fam.startswith('VOPC'): skip0 |= set(range(25, 32))
    m0 = m1 = pm = 0
    for p, v in e.items():
        if not p.startswith('bit'): continue
        bit = int(p[3:])
        if bit >= 32:
            if bit - 32 in skip0: continue
            if v[1] is None: m0 |= 1 << (bit - 32)
        else:
            if v[1] is None: m1 |= 1 << bit
            elif v[1] != text: pm |= 1 << bit
    must = []
    if m0: must.append('0:%08x:%08x' % (m0, w0 & m0))
    if m1: must.append('1:%08x:%08x' % (m1, w1 & m1))
    extra = 'w1mods=0x%08x' % pm
    if 'DP ALU' in text:
        extra += ' kind=dp_alu'
    sx = 0
    for i, bit in enumerate((20, 22)):
        r = e.get('bit%d' % bit)
        if fam.endswith('DPP') and r and r[1] and 'sext(' in r[1]:
            sx |= 1 << i
    if sx:
        extra += ' dppsext=%d' % sx
    return mn, ','.join(out_ops), '-', ','.join(must), extra, 2

# MIMG fields: (name, first bit in w1:w0, width), in LLVM's printing order for the modifiers.
MIMG_OPERANDS = [('vdata', 40, 8), ('vaddr', 32, 8), ('srsrc', 48, 5), ('ssamp', 53, 5)]
MIMG_MODS = [('dmask', 8, 4), ('unorm', 12, 1), ('glc', 13, 1), ('slc', 25, 1), ('b7', 7, 1), ('a16', 15, 1),
             ('lwe', 17, 1), ('da', 14, 1), ('d16', 63, 1), ('acc', 16, 1)]
MIMG_PREFIX = 0xFC000000

def analyse_mimg(op, e, ops_valid):
    """One isa.txt line's fields for MIMG opcode `op` from its sweep_mimg.py probes:
    operands, printed modifiers, must-be bits (flips that make LLVM reject the word, the
    opcode's bit 7 when that names no instruction) and the data-register counts LLVM
    prints per dmask (`vsize`, and `vsize16` with d16; absent when d16 is rejected)."""
    base = e['base'][0]
    mn = e['base'][1].split(' ')[0]
    # vdata's width is the count LLVM prints for dmask 0 (its base form, which it falls back to
    # when the dmask's count would run past v255).
    ops = ['vdata:v:%d' % e['vsize'][0][0], 'vaddr:v:1', 'srsrc:s:8'] + (['ssamp:s:4'] if e['sampler'] else [])
    operand_bits = set()
    for name, lo, width in MIMG_OPERANDS:
        if name != 'ssamp' or e['sampler']:
            operand_bits |= set(range(lo, lo + width))
    mods = []
    for name, lo, width in MIMG_MODS:
        flips = [e.get('bit%d' % b) for b in range(lo, lo + width)]
        if any(f and f[1] is not None and f[1] != e['base'][1] for f in flips):
            mods.append(name)
    masks = [0, 0]
    for b in range(64):
        r = e.get('bit%d' % b)
        if r is None or r[1] is not None or b in operand_bits: continue
        if b < 32 and (MIMG_PREFIX >> b) & 1: continue
        masks[b // 32] |= 1 << (b % 32)
    if (op | 0x80) not in ops_valid:
        masks[0] |= 1
    must = ['%d:%08x:%08x' % (wi, m, base[wi] & m) for wi, m in enumerate(masks) if m]
    digits = lambda sizes: ''.join('%x' % n for n in sizes)
    extra = 'vsize=' + digits(e['vsize'][0])
    if all(n is not None for n in e['vsize'][1]):
        extra += ' vsize16=' + digits(e['vsize'][1])
    return mn, ','.join(ops), ','.join(mods), ','.join(must), extra, 2

def main():
    D = json.load(open(os.path.join(here, 'raw.json')))
    entries = {}
    symbolic = []
    for t in TARGETS:
        d = D[t]
        # literal probe for 32-bit VALU/SALU encodings: is src0's literal printed as 16 bits?
        lit_cases, lit_keys = [], []
        for fam in ('VOP1', 'VOP2', 'VOPC'):
            for op, e in d[fam].items():
                if 'all' in e and 'src0' in e['live']:
                    w = setf(e['all'][0], FAMILIES[fam][3][0], 0xff)
                    lit_cases.append(w); lit_keys.append((fam, op))
        lit = {k: r[0] for k, r in zip(lit_keys, run(t, lit_cases))}
        # inline 1.0 in src0: printed as 0x3c00 on 16-bit integer operands
        i16_cases, i16_keys = [], []
        for fam in ('VOP1', 'VOP2', 'VOPC', 'VOP3', 'VOP3P'):
            for op, e in d[fam].items():
                if 'all' in e and e['all'][1] and 'src0' in e['live']:
                    f = [x for x in FAMILIES[fam][3] if x[0] == 'src0'][0]
                    i16_cases.append(setf(e['all'][0], f, 242)); i16_keys.append((fam, op))
        i16 = {k: bool(r[0] and '0x3c00' in r[0]) for k, r in zip(i16_keys, run(t, i16_cases))}
        for fam in FAMILIES:
            for op, e in d[fam].items():
                if 'all' not in e or e['all'][1] is None: continue
                if fam == 'VOP3' and int(op) >= 0x380: continue
                key = (fam, int(op)) + analyse(fam, op, e, lit.get((fam, op)), i16.get((fam, op), False))
                entries.setdefault(key, []).append(t)
        for sec, fam in (('DPP_VOP1', 'VOP1DPP'), ('DPP_VOP2', 'VOP2DPP'), ('DPP_VOPC', 'VOPCDPP'),
                         ('SDWA_VOP1', 'VOP1SDWA'), ('SDWA_VOP2', 'VOP2SDWA'), ('SDWA_VOPC', 'VOPCSDWA')):
            for op, e in d.get(sec, {}).items():
                key = (fam, int(op)) + analyse_dpp(fam, e)
                entries.setdefault(key, []).append(t)
        mimg = d.get('MIMG', {})
        for op, e in mimg.items():
            key = ('MIMG', int(op)) + analyse_mimg(int(op), e, {int(o) for o in mimg})
            entries.setdefault(key, []).append(t)
        for i, txt in d['hwreg'].items():
            m = re.search(r'hwreg\((HW_REG_\w+)', txt or '')
            if m: symbolic.append(('HWREG', t, int(i), m.group(1)))
        for i, txt in d['sendmsg'].items():
            m = re.search(r'sendmsg\((.*)\)', txt or '')
            if m and 'MSG_' in m.group(1): symbolic.append(('SENDMSG', t, int(i), m.group(1).replace(' ', '')))
    lines = ['# AMDGPU CDNA ISA table (gfx90a, gfx942, gfx950): the single source of truth for',
             '# src/tables/*.rs (regenerate with UPDATE_TABLES=1 cargo test -p amdgpu-isa --test codegen).',
             '# Produced by data/sweep/{sweep,build_isa}.py from probing llvm-objdump 19 (gfx90a, gfx942) and',
             '# 22 (gfx950). Format: FAMILY OPCODE MNEMONIC TARGETS ops=FIELD:CLASS:WIDTH,... mods=FIELD,...',
             '#   must=WORD:MASK:VALUE,... [kind=K] [lit16] [glcret] [ldsform] [vsize=HEX16 [vsize16=HEX16]] size=WORDS',
             '# Classes: v vector register, s scalar register, i immediate; =TEXT is fixed operand text.',
             '# MIMG: vsize lists the data registers LLVM prints per dmask value (vsize16: with d16), vdata',
             '# the base width; gfx942 and gfx950 have no image instructions (data/sweep/sweep_mimg.py).']
    ORDER = list(FAMILIES) + ['VOP1DPP', 'VOP2DPP', 'VOPCDPP', 'VOP1SDWA', 'VOP2SDWA', 'VOPCSDWA', 'MIMG']
    for key in sorted(entries, key=lambda k: (ORDER.index(k[0]), k[1], k[2])):
        fam, op, mn, ops, mods, must, extra, nwords = key
        tg = ','.join(entries[key])
        line = '%s 0x%03x %s %s ops=%s mods=%s must=%s' % (fam, op, mn, tg, ops or '-', mods or '-', must or '-')
        if extra: line += ' ' + extra
        line += ' size=%d' % nwords
        lines.append(line)
    merged = {}
    for kind, t, i, name in symbolic:
        merged.setdefault((kind, i, name), []).append(t)
    for (kind, i, name), ts in sorted(merged.items()):
        lines.append('%s %d %s %s' % (kind, i, name, ','.join(ts)))
    open(os.path.join(here, '..', 'isa.txt'), 'w').write('\n'.join(lines) + '\n')
    print(len(entries), 'entries', file=sys.stderr)

if __name__ == '__main__':
    main()
