#!/usr/bin/env python3
"""Summarise podcheck JSON reports (run --check --json, merge, replay --json) of a port's sweep.

Prints the counts per status, then every case that did not pass grouped by cause: not-supported cases by
the kernel's reason, incorrect cases by the kind of case, the features in its id and the first line of
podcheck's diagnosis (or its message). With --ids, every id of each group; otherwise the first three and
the smallest one (by id length: a minimal case to reproduce it).

    python3 summarize.py check_quick.json [check_default.json ...] [--ids]
"""
import collections
import json
import re
import sys


def features(case_id):
    """The features of an id that decide how a port treats it (kind, dtypes, heads, flags)."""
    head, _, args = case_id.partition("(")
    parts = head.split("_")
    kind = parts[0]
    flags = []
    heads = next((p for p in parts if re.match(r"h\d+kv\d+d\d+", p)), "")
    m = re.match(r"h(\d+)kv(\d+)d(\d+)", heads)
    if m:
        g = int(m.group(1)) // int(m.group(2))
        flags.append(f"g={g}" if g > 16 else "g<=16")
    for a in args.rstrip(")").split(","):
        key = a.split("=")[0]
        if key in ("rope", "alibi", "causal", "custom", "custom_d") or key in ("cap", "win_p", "win_d", "qs", "ks", "vs"):
            flags.append(key)
        if key == "dist":
            flags.append(a)
    dt = [p for p in parts[1:3] if re.match(r"(f16|bf16|e4m3|e5m2)$", p)]
    if len(dt) == 2:
        flags.append("fp8kv")
    return kind, " ".join(sorted(set(flags)))


def cause(c):
    if c["status"] == "not-supported":
        return re.sub(r"'[^']*'", "'...'", c.get("message", ""))[:200]
    diag = c.get("diagnosis") or []
    first = diag[0] if diag else c.get("message", "")
    first = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", first)  # numbers vary per case
    return first[:200]


def main(argv):
    show_ids = "--ids" in argv
    files = [a for a in argv if a != "--ids"]
    cases = {}
    for f in files:
        for c in json.load(open(f))["cases"]:
            cases[c["id"]] = c
    counts = collections.Counter(c["status"] for c in cases.values())
    print(f"{len(cases)} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    groups = collections.defaultdict(list)
    for c in cases.values():
        if c["status"] == "passed":
            continue
        kind, feats = features(c["id"])
        key = (c["status"], kind, feats if c["status"] != "not-supported" else "", cause(c))
        groups[key].append(c["id"])
    for (status, kind, feats, why), ids in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        ids.sort(key=len)
        print(f"\n[{status}] {len(ids)} x {kind} {feats}\n  cause: {why}")
        for i in (ids if show_ids else ids[:3]):
            print(f"    {i}")
        if not show_ids and len(ids) > 3:
            print(f"    ... ({len(ids) - 3} more)")


if __name__ == "__main__":
    main(sys.argv[1:])
