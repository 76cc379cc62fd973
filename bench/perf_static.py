#!/usr/bin/env python3
"""The static speed gate (CTest label perf-static; docs/bench.md "Speed without a GPU").

For each kernel in the budget file: generate its CUBIN with `stagecraft ptx` (NVRTC runs ptxas),
disassemble it with nvdisasm, find the innermost loops that issue the kernel's MMA instruction at
least twice (a K-tile: an elect.sync retry loop wraps a single MMA, a K-tile issues several),
and hold what it costs to the kernel's budget; a kernel with several such loops (one per role or
code path) is held to the worst of them:

  kloop       SASS instructions in that loop (per K-tile, per warp of the issuing role)
  membar_gpu  MEMBAR of GPU or system scope in it (a CTA-scope MEMBAR is cheap; CUTLASS's own
              sm100 loop has one)
  cctl        cache invalidations (CCTL) in it
  spill_bytes ptxas's spill stores + loads for the whole kernel
  smem_extra_wavefronts  SMEM wavefronts per warp the epilogue stores (wgmma fragments into SMEM)
              take beyond the conflict-free count, summed over those stores (the generator's
              count from each lane's address, printed by `stagecraft ptx`; 0 is ideal)

A budget is today's count, so any change that makes the loop longer or adds a fence fails here
with the kernel, the number and its budget; a change that makes it shorter is reported so the
budget can be lowered with it (a ratchet). `reference` is the best public kernel of the same
shape (CUTLASS, FlashAttention-3) and `target` what the speed issues ask for: both are printed
as ratios, neither gates.

The loop's counts also feed the cost model (issue 22 item 6): each kernel's <out>/<id>.profile.json
({"kloop", "mufu", "smem_conflict"}) is what `stagecraft bench --backend model --issue-profile` takes, and --model
prints, per kernel, the model's prediction with the measured loop next to the one estimated
from the IR (a MODEL, never a measurement).

usage: perf_static.py --cli STAGECRAFT --nvdisasm NVDISASM --budgets FILE [--out DIR] [--only NAME] [--model]
       perf_static.py --check-sass FILE.sass --mma REGEX [--budget-json '{"kloop": N, ...}']
Exit: 0 within every budget, 1 over a budget, 2 a step failed (no CUBIN, no loop found).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

LABEL = re.compile(r"^\s*(\.L_x_\d+):")
INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH = re.compile(r"\bBRA\S*\s+`\((\.L_x_\d+)\)")


def instructions(sass_text):
    """The instruction list of `nvdisasm -c` output and where each label points in it."""
    ins, labels = [], {}
    for line in sass_text.splitlines():
        m = LABEL.match(line)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = INSTR.search(line)
        if m:
            ins.append(m.group(2))
    return ins, labels


def opcode(text):
    """The mnemonic with its modifiers, predicate guard dropped: '@!P0 BRA `(.L_x_7)' -> 'BRA'."""
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def k_loop_spans(sass_text, mma, min_mma=2):
    """(first, last) instruction indices of every K-loop: for each MMA instruction, the smallest
    backward branch's range that holds it and >= min_mma MMA ops in all. A kernel has one per
    role or code path that runs K-tiles (e.g. one per consumer warpgroup); an outer loop that
    ptxas rotates so that its back edge lands inside a K-loop is never one of them. Nor is a
    range with an EXIT in it: ptxas places the retry of a barrier wait out of line, after the
    kernel's exits, and branches back into the body from there; that back edge spans the rest of
    the kernel, and the MMAs outside every loop (a peeled first or last step) would be counted in
    it."""
    ins, labels = instructions(sass_text)
    spans = []
    for end, text in enumerate(ins):
        m = BRANCH.search(text)
        if not m or labels.get(m.group(1), end + 1) > end:
            continue
        first = labels[m.group(1)]
        body = [opcode(t) for t in ins[first:end + 1]]
        if any(op.startswith("EXIT") for op in body):
            continue
        if sum(1 for op in body if mma.search(op)) >= min_mma:
            spans.append((first, end))
    chosen = set()
    for i, text in enumerate(ins):
        if mma.search(opcode(text)):
            holding = [s for s in spans if s[0] <= i <= s[1]]
            if holding:
                chosen.add(min(holding, key=lambda s: s[1] - s[0]))
    return sorted(chosen)


def k_loops(sass_text, mma, min_mma=2):
    """Opcodes of each innermost MMA loop."""
    ins, _ = instructions(sass_text)
    return [[opcode(t) for t in ins[a:b + 1]] for a, b in k_loop_spans(sass_text, mma, min_mma)]


def worst_of(counts):
    """Per number, the worst loop's: every K-loop must be within budget."""
    return {key: max(c[key] for c in counts) for key in counts[0]} | {"loops": len(counts)}


def loop_counts(body, mma):
    c = collections.Counter(body)
    count = lambda rx: sum(n for op, n in c.items() if re.search(rx, op))
    return {
        "kloop": len(body),
        "mma": sum(n for op, n in c.items() if mma.search(op)),
        "membar_gpu": count(r"^MEMBAR\..*(GPU|SYS)"),
        "membar_all": count(r"^MEMBAR"),
        "cctl": count(r"^CCTL"),
        "mufu_ex2": count(r"^MUFU\.EX2"),
        "mufu": count(r"^MUFU"),
        "ffma": count(r"^FFMA"),
        "bra": count(r"^BRA"),
    }


GATED = ("kloop", "membar_gpu", "cctl", "spill_bytes", "smem_extra_wavefronts")


def judge(name, measured, budget):
    """Lines describing each gated number against its budget, and whether any is over."""
    over, lines = False, []
    for key in GATED:
        if key not in budget or key not in measured:
            continue
        got, allowed = measured[key], budget[key]
        if got > allowed:
            over = True
            lines.append(f"perf-static: {name}: {key} = {got} is over its budget of {allowed}")
        elif got < allowed:
            lines.append(f"perf-static: {name}: {key} = {got} is under its budget of {allowed}: lower the budget in the budget file")
    return over, lines


def ptx_summary(text):
    """'... 168 registers, 0 spill bytes, 213040 bytes of SMEM ...' -> numbers."""
    out = {}
    for key, rx in (("registers", r"(\d+) registers"), ("spill_bytes", r"(\d+) spill bytes"), ("smem_bytes", r"(\d+) bytes of SMEM")):
        m = re.search(rx, text)
        if m:
            out[key] = int(m.group(1))
    # 'op #25 stores a wgmma fragment into s2: ..., 512 SMEM wavefronts per warp (ideal 64)', or
    # 'op #17 stores rows loaded from TMEM into s2: ...' (a Blackwell epilogue)
    stores = re.findall(r"stores (?:a wgmma fragment|rows loaded from TMEM) into .*?(\d+) SMEM wavefronts per warp \(ideal (\d+)\)", text)
    out["smem_extra_wavefronts"] = sum(int(a) - int(b) for a, b in stores)
    out["smem_wavefronts"] = sum(int(a) for a, _ in stores)
    out["smem_ideal_wavefronts"] = sum(int(b) for _, b in stores)
    return out


def run_kernel(args, k):
    name = k["name"]
    tag = k.get("id", name)
    cubin = os.path.join(args.out, tag + ".cubin")
    cmd = [args.cli, "ptx", name, "--arch", k["arch"], "--cubin", cubin, "-o", os.path.join(args.out, tag + ".ptx")]
    for key, value in k.get("set", {}).items():
        cmd += ["--set", f"{key}={value}"]
    cmd += k.get("args", [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{tag}: `{' '.join(cmd)}` exited {p.returncode}:\n{p.stdout}{p.stderr}")
    with open(os.path.join(args.out, tag + ".log"), "w") as f:  # what the generator said (spills, SMEM wavefronts)
        f.write(p.stdout + p.stderr)
    sass = subprocess.run([args.nvdisasm, "-c", cubin], capture_output=True, text=True, check=True).stdout
    with open(os.path.join(args.out, tag + ".sass"), "w") as f:
        f.write(sass)
    mma = re.compile(k["mma"])
    loops = k_loops(sass, mma)
    if not loops:
        raise RuntimeError(f"{tag}: no loop issues {k['mma']} twice: the K-loop was unrolled or the MMA is gone (sizes {k.get('set')})")
    return {**worst_of([loop_counts(b, mma) for b in loops]), **ptx_summary(p.stdout + p.stderr)}


def model_line(args, k, profile):
    """The cost model's TFLOP/s for the kernel (--backend model on the machine of its
    architecture), from the IR's estimate and from the SASS loop just measured."""
    machine = "B200" if k["arch"] == "sm_100a" else "H200"
    base = [args.cli, "bench", k["name"], "--backend", "model", "--machine", machine]
    for key, value in k.get("set", {}).items():
        base += ["--set", f"{key}={value}"]
    if "--math" in k.get("args", []):
        base += ["--math", k["args"][k["args"].index("--math") + 1]]
    got = []
    for extra in ([], ["--issue-profile", profile]):
        p = subprocess.run(base + extra + ["--json", profile + ".model.json"], capture_output=True, text=True)
        if p.returncode != 0:
            return f"MODEL: `{' '.join(base + extra)}` exited {p.returncode}: {p.stderr.strip()[-300:]}"
        point = json.load(open(profile + ".model.json"))["points"][0]
        got.append((point["flops"] / point["predicted_ms"] / 1e9, point.get("limited_by", "")))
    (est, why_est), (sass, why_sass) = got
    return (f"MODEL on {machine}: {est:.0f} TFLOP/s with the IR's instruction estimate, {sass:.0f} with the measured loop "
            f"(limited by {why_sass})")


def ratio_text(measured, k):
    parts = []
    for what in ("reference", "target"):
        ref = k.get(what, {})
        if "kloop" in ref:
            parts.append(f"{measured['kloop'] / ref['kloop']:.2f}x the {what}'s {ref['kloop']}")
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli")
    ap.add_argument("--nvdisasm")
    ap.add_argument("--budgets")
    ap.add_argument("--out", default="perf-static")
    ap.add_argument("--only")
    ap.add_argument("--check-sass")
    ap.add_argument("--check-log")
    ap.add_argument("--mma", default=r"^(HGMMA|QGMMA|UTC\w*MMA)")
    ap.add_argument("--budget-json", default="{}")
    ap.add_argument("--model", action="store_true", help="also predict each kernel with the cost model, with and without its measured loop")
    args = ap.parse_args()

    if args.check_sass:  # one disassembly against one budget (the gate's own test)
        mma = re.compile(args.mma)
        loops = k_loops(open(args.check_sass).read(), mma)
        if not loops:
            print(f"perf-static: {args.check_sass}: no loop issues {args.mma} twice")
            return 2
        measured = worst_of([loop_counts(b, mma) for b in loops])
        print("measured: " + " ".join(f"{k}={v}" for k, v in measured.items()))
        over, lines = judge(args.check_sass, measured, json.loads(args.budget_json))
        print("\n".join(lines))
        return 1 if over else 0

    if args.check_log:  # what `stagecraft ptx` printed (spills, epilogue wavefronts) against one budget
        measured = ptx_summary(open(args.check_log).read())
        print("measured: " + " ".join(f"{k}={v}" for k, v in measured.items()))
        over, lines = judge(args.check_log, measured, json.loads(args.budget_json))
        print("\n".join(lines))
        return 1 if over else 0

    os.makedirs(args.out, exist_ok=True)
    spec = json.load(open(args.budgets))
    worst = 0
    rows = []
    for k in spec["kernels"]:
        tag = k.get("id", k["name"])
        if args.only and not re.search(args.only, tag):
            continue
        try:
            measured = run_kernel(args, k)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            print(f"perf-static: {e}")
            worst = max(worst, 2)
            continue
        over, lines = judge(tag, measured, k["budget"])
        worst = max(worst, 1 if over else 0)
        print(f"{tag} ({k['arch']}, " + " ".join(f"{a}={b}" for a, b in k.get("set", {}).items()) + "): " +
              " ".join(f"{a}={measured[a]}" for a in ("loops", "kloop", "mma", "membar_gpu", "membar_all", "cctl", "mufu_ex2", "ffma", "bra")) +
              f", {measured.get('spill_bytes', '?')} spill bytes, {measured.get('smem_bytes', '?')} B SMEM" +
              (f", epilogue SMEM wavefronts {measured['smem_wavefronts']} per warp (ideal {measured['smem_ideal_wavefronts']})"
               if measured.get("smem_wavefronts") else "") +
              (f"; {ratio_text(measured, k)}" if ratio_text(measured, k) else ""))
        for line in lines:
            print("  " + line)
        profile = os.path.join(args.out, tag + ".profile.json")
        with open(profile, "w") as f:
            ideal = measured.get("smem_ideal_wavefronts", 0)
            json.dump({"kloop": measured["kloop"], "mufu": measured["mufu"],
                       "smem_conflict": measured["smem_wavefronts"] / ideal if ideal else 1,
                       "source": f"perf_static.py {tag}: the worst of {measured['loops']} MMA loop(s) of its SASS"}, f)
        if args.model:
            print("  " + model_line(args, k, profile))
        rows.append((tag, measured))
    with open(os.path.join(args.out, "perf_static.json"), "w") as f:
        json.dump({tag: m for tag, m in rows}, f, indent=1)
    print(f"perf-static: {len(rows)} kernel(s) measured; " + ("within every budget" if worst == 0 else "FAILED"))
    return worst


if __name__ == "__main__":
    sys.exit(main())
