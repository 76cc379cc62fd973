#!/usr/bin/env python3
"""Natural loops (back edges to a dominating block) of `nvdisasm -c` SASS, each with its size and
opcode counts; nested loops are listed on their own too. usage: sass_cfg_loops.py FILE.sass [--body]
An indirect branch (BRX) needs its targets in BRX_TARGETS="label label ...".
(../../../shared/tools/sass_loops.py counts innermost MMA loops by backward branches; it takes the
out-of-line barrier-wait retry blocks of a CuTe DSL kernel for loops, so the anchor is counted here.)"""
import re, sys, collections

def parse(path):
    ins, labels = [], {}
    for line in open(path, errors="replace"):
        m = re.match(r"^\s*(\.L_x_\d+|\$[\w$]+|[A-Za-z_]\w*):\s*$", line)
        if m:
            labels[m.group(1)] = len(ins); continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    return ins, labels

PRED = re.compile(r"^@!?U?P\w+\s+")
def opcode(s):
    s = PRED.sub("", s); return s.split()[0] if s else ""

def main():
    path = sys.argv[1]
    ins, labels = parse(path)
    n = len(ins)
    # leaders
    lead = {0}
    tgt = {}
    for i, (_, s) in enumerate(ins):
        op = opcode(s)
        if op.startswith(("BRA", "EXIT", "RET", "BRX", "JMX", "JMP")):
            m = re.search(r"`\(([^)]+)\)", s)
            if m and m.group(1) in labels:
                tgt[i] = labels[m.group(1)]; lead.add(labels[m.group(1)])
            if i + 1 < n: lead.add(i + 1)
    for l in labels.values():
        if l < n: lead.add(l)
    for i, (_, s) in enumerate(ins):
        if opcode(s).startswith(("BRX", "JMX")) and i + 1 < n: lead.add(i + 1)
    starts = sorted(lead)
    bid = {}
    blocks = []
    for k, st in enumerate(starts):
        en = starts[k + 1] if k + 1 < len(starts) else n
        blocks.append((st, en))
        for i in range(st, en): bid[i] = k
    succ = collections.defaultdict(set)
    for k, (st, en) in enumerate(blocks):
        last = en - 1; s = ins[last][1]; op = opcode(s)
        pred = (bool(PRED.match(s)) and not s.startswith("@PT ")) or bool(re.search(r"BRA\S*\s+!?U?P[0-6],", s))
        if op.startswith("BRA") or op.startswith("JMP"):
            if last in tgt: succ[k].add(bid[tgt[last]])
            if pred and en < n: succ[k].add(bid[en])
        elif op.startswith(("EXIT", "RET")):
            if pred and en < n: succ[k].add(bid[en])
        elif op.startswith(("BRX", "JMX")):
            # targets from EIATTR_INDIRECT_BRANCH_TARGETS, passed as BRX_TARGETS="L1 L2 ..."
            tl = __import__("os").environ.get("BRX_TARGETS", "").split()
            if not tl: raise SystemExit("indirect branch at %x: set BRX_TARGETS" % ins[last][0])
            for l in tl:
                if l in labels: succ[k].add(bid[labels[l]])
        else:
            if en < n: succ[k].add(bid[en])
    N = len(blocks)
    # reachable + dominators (iterative)
    reach, stack = {0}, [0]
    while stack:
        u = stack.pop()
        for v in succ[u]:
            if v not in reach: reach.add(v); stack.append(v)
    preds = collections.defaultdict(set)
    for u in reach:
        for v in succ[u]: preds[v].add(u)
    order = sorted(reach)
    dom = {b: set(reach) for b in reach}; dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for b in order:
            if b == 0: continue
            ps = [dom[p] for p in preds[b] if p in reach]
            new = set.intersection(*ps) | {b} if ps else {b}
            if new != dom[b]: dom[b] = new; changed = True
    loops = collections.defaultdict(set)
    for u in reach:
        for h in succ[u]:
            if h in dom[u]:
                body = {h, u}; st = [u]
                while st:
                    x = st.pop()
                    if x == h: continue
                    for p in preds[x]:
                        if p not in body: body.add(p); st.append(p)
                loops[h] |= body
    cats = [("UTCMMA", r"^UTC\w*MMA"), ("MUFU.EX2", r"^MUFU\.EX2"), ("FFMA", r"^FFMA($|\.)"), ("FFMA2", r"^FFMA2"),
            ("FMUL", r"^FMUL($|\.)"), ("FMUL2", r"^FMUL2"), ("FADD", r"^FADD($|\.)"), ("FADD2", r"^FADD2"),
            ("FMNMX", r"^FMNMX"), ("LDTM", r"^LDTM"), ("STTM", r"^STTM"), ("BAR.SYNC", r"^BAR\.SYNC"),
            ("BAR.ARV", r"^BAR\.ARV"), ("BAR.*", r"^BAR"), ("F2FP", r"^F2FP"), ("SYNCS", r"^SYNCS"),
            ("UTMALDG", r"^UTMALDG"), ("UTMASTG", r"^UTMASTG"), ("STS", r"^STS"), ("LDS", r"^LDS"),
            ("STL/LDL", r"^(STL|LDL)"), ("BRA", r"^BRA"), ("SHFL", r"^SHFL"), ("MUFU.*", r"^MUFU")]
    res = []
    for h, body in loops.items():
        idx = sorted(i for b in body for i in range(*blocks[b]))
        ops = collections.Counter(opcode(ins[i][1]) for i in idx)
        c = {name: sum(v for k, v in ops.items() if re.search(rx, k)) for name, rx in cats}
        res.append((ins[blocks[h][0]][0], len(idx), min(ins[i][0] for i in idx), max(ins[i][0] for i in idx), c, idx, body))
    res.sort()
    for hdr, sz, lo, hi, c, idx, body in res:
        nested = [h2 for h2, s2, *_ in res if h2 != hdr and set(_[3]) < set(idx)] if False else []
        print(f"loop hdr=0x{hdr:05x} range=[0x{lo:05x},0x{hi:05x}] blocks={len(body)} instr={sz} " +
              " ".join(f"{k}={v}" for k, v in c.items() if v))
        if "--body" in sys.argv:
            for i in idx: print(f"    {ins[i][0]:05x}  {ins[i][1]}")

main()
