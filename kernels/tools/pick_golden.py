#!/usr/bin/env python3
"""Pick a small, varied set of case ids for committed golden traces of a kernel.

usage: pick_golden.py IDS.txt [IDS.txt ...] [--max-case-kb 1500] [--max-total-kb 4000] > golden_ids.txt

Reads case ids (one per line, `podcheck sweep list --tier T`), estimates each case's output size from its id (rows x heads x head_dim
x 2 bytes + fp32 LSE) and greedily takes the case that adds the most not-yet-covered features per KB,
until every feature that fits is covered or the size budget is spent. Features: kind, dtypes, head_dim,
group size, page size, layout, stacked KV, mask / window flags, RoPE / ALiBi / soft cap, distribution,
scales, decode length class. (podcheck-cuda v3 computes every feature; --skip-pos-encoding leaves out the
cases with RoPE, ALiBi or a soft cap, for a kernel that reports them not supported, as v1 and v2 did.)
Deterministic: the same input gives the same list.
"""
import argparse
import re
import sys


def parse(case_id):
    head, _, args = case_id.partition("(")
    args = args.rstrip(")")
    kv = {}
    flags = set()
    for a in args.split(","):
        if "=" in a:
            k, v = a.split("=", 1)
            kv[k] = v
        elif a:
            flags.add(a)
    m = re.match(r"([a-z]+)_(.*)_h(\d+)kv(\d+)d(\d+)_ps(\d+)_([a-z]+)(_stacked)?$", head)
    if not m:
        return None
    kind, dtypes, h, hk, d, ps, layout, stacked = m.groups()
    h, hk, d = int(h), int(hk), int(d)
    rows = 0
    if "qo_p" in kv:
        rows += sum(int(x) for x in kv["qo_p"].split("+"))
    if "bs_d" in kv:
        rows += int(kv["bs_d"])
    size = rows * h * (d * 2 + 4)
    feats = {"kind=" + kind, "dtypes=" + dtypes, "d=%d" % d, "g=%d" % (h // hk), "ps=" + ps, "layout=" + layout}
    if stacked:
        feats.add("stacked")
    for f in flags:
        feats.add("flag=" + f)
    for k in ("win_p", "win_d", "dist", "qs", "ks", "vs", "custom_d"):
        if k in kv:
            feats.add(k + ("=" + kv[k] if k == "dist" else ""))
    for f in flags & {"rope", "alibi"}:  # position encodings and the soft cap: once per kind of case
        feats.add(f + "@" + kind)
    if "cap" in kv:
        feats.add("cap@" + kind)
    if "kv_d" in kv:
        v = kv["kv_d"]
        n = int(re.sub(r"\D", "", v) or 0)
        feats.add("kv_d=" + ("short" if n < 64 else "mid" if n < 1000 else "long"))
    pos_encoding = bool(flags & {"rope", "alibi", "rope_p", "rope_d", "alibi_p", "alibi_d"}) or any(
        k in kv for k in ("cap", "cap_p", "cap_d"))
    return size, feats, pos_encoding


def main():
    ap = argparse.ArgumentParser(description="pick varied, small case ids for golden traces")
    ap.add_argument("ids", nargs="+", help="files of case ids (podcheck sweep list --tier T)")
    ap.add_argument("--max-case-kb", type=int, default=1500, help="largest estimated output of one case")
    ap.add_argument("--max-total-kb", type=int, default=4000, help="budget for all chosen cases")
    ap.add_argument("--skip-pos-encoding", action="store_true",
                    help="leave out cases with RoPE, ALiBi or a soft cap (kernels that do not compute them)")
    a = ap.parse_args()
    max_case, budget = a.max_case_kb * 1024, a.max_total_kb * 1024
    cands = {}
    for f in a.ids:
        for line in open(f):
            cid = line.strip()
            p = parse(cid) if cid else None
            if not p:
                continue
            size, feats, pos_encoding = p
            if (pos_encoding and a.skip_pos_encoding) or size > max_case:
                continue
            cands.setdefault(cid, (size, feats))
    covered, chosen, total = set(), [], 0
    while True:
        best, best_score = None, 0.0
        for cid, (size, feats) in cands.items():
            new = len(feats - covered)
            if new and total + size <= budget:
                score = new / (1 + size / 1024)
                if score > best_score or (score == best_score and cid < best):
                    best, best_score = cid, score
        if best is None:
            break
        size, feats = cands.pop(best)
        covered |= feats
        chosen.append(best)
        total += size
    print("%d cases, ~%d KB of outputs, %d features" % (len(chosen), total // 1024, len(covered)), file=sys.stderr)
    for c in chosen:
        print(c)


if __name__ == "__main__":
    main()
