#!/usr/bin/env python3
"""Summarise podcheck JSON reports (run --check --json, merge, replay --json) of a port's sweep.

Prints the counts per status, then every case that did not pass grouped by cause: not-supported cases by
the kernel's reason, incorrect cases by the kind of case, the features in its id and the first line of
podcheck's diagnosis (or its message). With --ids, every id of each group; otherwise the first three and
the smallest one (by id length: a minimal case to reproduce it). A case id met in several files is
counted once (the last file's verdict).

With --table, the outcome rows of docs/PORTS.md instead, for reports of `run --check` (intended profile)
of the FlashInfer port: each case not passed is read under its reading profile (flashinfer-pod for POD and
BatchPOD ids, flashinfer for one-sided ones) from its diagnosis and id, and put in one row and group:
explained by the profile, a defect (D1, D1b, D2), unexplained, failed to run (W1, D3) or not supported (by
reason). The rules are those of PORTS.md's "Defects and failures"; a case no rule places is listed as
unexplained with its diagnosis, to be looked at.

    python3 summarize.py check_quick.json [check_default.json ...] [--ids] [--table]
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


# What each reading profile applies, as podcheck's variant names (validation/variants.cpp) with their side.
PROFILE_VARIANTS = {
    "flashinfer": {"sm_scale applied twice with ALiBi + soft cap (FlashInfer's quirk)"},
    "flashinfer-pod": {"sm_scale applied twice with ALiBi + soft cap (FlashInfer's quirk)",
                       "prefill: RoPE not applied (pos_encoding NONE)", "decode: RoPE not applied (pos_encoding NONE)",
                       "prefill: soft cap not applied", "decode: soft cap not applied",
                       "prefill: q_scale not applied", "prefill: k_scale not applied", "prefill: v_scale not applied",
                       "decode: causal mask not applied", "decode: custom mask ignored"},
}


def args_of(case_id):
    """The id's arguments as a dict (flags map to True)."""
    out = {}
    for a in case_id.partition("(")[2].rstrip(")").split(","):
        k, eq, v = a.partition("=")
        out[k] = v if eq else True
    return out


def group_size(case_id):
    m = re.search(r"_h(\d+)kv(\d+)d\d+", case_id)
    return int(m.group(1)) // int(m.group(2)) if m else 0


def port_outcome(c):
    """(row, group) of PORTS.md's table for one case of a `run --check` report of the FlashInfer port."""
    st, cid = c["status"], c["id"]
    kind = cid.split("_")[0]
    if st == "passed":
        return "passed (intended)", ""
    msg = c.get("message", "")
    if st == "not-supported":
        if "ALiBi: FlashInfer's POD module" in msg:
            return "not supported", "ALiBi on POD/BatchPOD"
        if "BatchPOD plans one window_left" in msg:
            return "not supported", "BatchPOD with different prefill and decode windows"
        if "decode custom mask" in msg:
            return "not supported", "decode custom mask on a one-sided decode"
        return "not supported", cause(c)
    # Reports of podcheck before the launch-failed status give a launch failure as incorrect with this message.
    if st == "launch-failed" or msg.startswith("the kernel failed to run"):
        if "Buffer overflow when allocating" in msg:
            return "failed to run (FlashInfer error: W1, D3)", "W1"
        if "invalid argument" in msg and "d256" in cid:
            return "failed to run (FlashInfer error: W1, D3)", "D3"
        return "failed to run (FlashInfer error: W1, D3)", "other: " + cause(c)
    if st != "incorrect":
        return st, cause(c)
    profile = "flashinfer-pod" if kind in ("pod", "bpod") else "flashinfer"
    diag = c.get("diagnosis") or []
    exact = [d.split("matches the reference with: ", 1)[1] for d in diag if d.startswith("matches the reference with: ")]
    partial = [re.sub(r" \(fixes .*\)$", "", d.split("partly matches the reference with: ", 1)[1])
               for d in diag if d.startswith("partly matches the reference with: ")]
    a = args_of(cid)
    metrics = c.get("metrics", {})
    wrong = {t for t, m in metrics.items() if isinstance(m, dict) and m.get("passed") is False}
    explain = "incorrect, explained by the reading profile"
    if exact and all(v in PROFILE_VARIANTS[profile] for v in exact):
        return explain, profile + ": " + " + ".join(sorted(set(exact)))
    # GQA group 32 on POD/BatchPOD decode: heads 16-31 never computed (SPEC 11.9).
    if kind in ("pod", "bpod") and group_size(cid) == 32 and wrong and wrong <= {"out_d", "lse_d"}:
        unwritten = sum(metrics[t].get("unwritten", 0) + metrics[t].get("nan", 0) for t in ("out_d", "lse_d") if t in metrics)
        return "incorrect: defect (D1, D1b, D2)", "D1" if unwritten else "D1b"
    # Two or three of the profile's variants at once (a single variant then explains the error only partly):
    # q/k/v scales dropped on POD's prefill side with fp8sat; decode custom mask + soft cap dropped.
    if kind in ("pod", "bpod") and a.get("dist") == "fp8sat" and wrong and wrong <= {"out_p", "lse_p"} \
            and all(v in PROFILE_VARIANTS[profile] for v in partial) and not exact:
        return explain, profile + ": prefill scales dropped together (" + \
            "+".join(k for k in ("qs", "ks", "vs") if k in a) + ")"
    if kind in ("pod", "bpod") and partial and all(v in PROFILE_VARIANTS[profile] for v in partial) and not exact \
            and "cap" in a and wrong and (wrong <= {"out_d", "lse_d"} or wrong <= {"out_p", "lse_p"}):
        return explain, profile + ": " + " + ".join(partial) + " + soft cap not applied"
    # Batch prefill, sliding window, not causal: keys past the plan's capped KV length dropped with split-KV.
    if kind == "prefill" and "win_p" in a and "causal" not in a and wrong and wrong <= {"out_p", "lse_p"}:
        return "incorrect: defect (D1, D1b, D2)", "D2"
    return "incorrect: unexplained", cause(c) + " | " + " / ".join(diag)[:300]


ROWS = ["passed (intended)", "incorrect, explained by the reading profile", "incorrect: defect (D1, D1b, D2)",
        "incorrect: unexplained", "failed to run (FlashInfer error: W1, D3)", "not supported"]


def table(cases, show_ids):
    rows = collections.Counter()
    groups = collections.defaultdict(list)
    for c in cases.values():
        row, group = port_outcome(c)
        rows[row] += 1
        if group:
            groups[(row, group)].append(c["id"])
    print(f"{len(cases)} cases")
    for r in ROWS + sorted(set(rows) - set(ROWS)):
        print(f"  {rows.get(r, 0):6d}  {r}")
    for (row, group), ids in sorted(groups.items(), key=lambda kv: (ROWS.index(kv[0][0]) if kv[0][0] in ROWS else 99, -len(kv[1]))):
        ids.sort(key=len)
        print(f"\n[{row}] {len(ids)} x {group}")
        for i in (ids if show_ids else ids[:1]):
            print(f"    {i}")


def main(argv):
    show_ids = "--ids" in argv
    files = [a for a in argv if a not in ("--ids", "--table")]
    cases = {}
    for f in files:
        for c in json.load(open(f))["cases"]:
            cases[c["id"]] = c
    if "--table" in argv:
        table(cases, show_ids)
        return
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
