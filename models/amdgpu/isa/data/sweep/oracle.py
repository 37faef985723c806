import subprocess, sys, re, os
LIT=0xbf801234
def run(cpu, cases):
    """cases: list of word-lists. returns list of (text or None, nwords)"""
    v = '22' if cpu=='gfx950' else '19'
    lines=['.text']
    starts=[]
    addr=0
    for ws in cases:
        starts.append(addr)
        for w in ws+[LIT,LIT]:
            lines.append('.long 0x%08x'%w); addr+=4
    tag=str(os.getpid())
    open(f'/tmp/sw/p{tag}.s','w').write('\n'.join(lines)+'\n')
    subprocess.run([f'llvm-mc-{v}','-triple=amdgcn-amd-amdhsa',f'-mcpu={cpu}','-filetype=obj',f'/tmp/sw/p{tag}.s','-o',f'/tmp/sw/p{tag}.o'],check=True)
    out=subprocess.run([f'llvm-objdump-{v}','-d',f'--mcpu={cpu}',f'/tmp/sw/p{tag}.o'],capture_output=True,text=True,check=True).stdout
    res={}
    for l in out.split('\n'):
        m=re.match(r'\t(.*?)\s*// ([0-9A-F]+): ([0-9A-F ]+?)( <.*>)?$',l)
        if not m: continue
        a=int(m.group(2),16); n=len(m.group(3).split())
        res[a]=(m.group(1).strip(), n)
    r=[]
    for s in starts:
        t=res.get(s)
        if t is None or t[0].startswith('.long'): r.append((None,1))
        else: r.append(t)
    return r
if __name__=='__main__':
    cpu=sys.argv[1]
    cases=[[int(x,16) for x in a.split(',')] for a in sys.argv[2:]]
    for c,(t,n) in zip(cases,run(cpu,cases)): print(' '.join('%08x'%x for x in c), n, t)
