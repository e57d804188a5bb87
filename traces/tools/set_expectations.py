"""Writes the expected verdicts of a trace's cases (expected/<n> groups, docs/FORMAT.md), replacing any it had:
how a recorded trace becomes a golden one. Needs only h5py.
Usage: set_expectations.py TRACE.h5 RULES.tsv
RULES.tsv: one line per expectation, tab-separated: CASE_PATTERN  PROFILE  STATUS  DIAGNOSIS_PHRASE  REASON
  CASE_PATTERN  a case id, or a glob over ids (fnmatch: '*', '?', '[...]'; note ids contain '[' rarely)
  PROFILE       intended | flashinfer | flashinfer-pod
  STATUS        passed | incorrect | launch-failed | not-supported | invalid-case | skipped
  DIAGNOSIS_PHRASE / REASON may be empty. Lines starting with '#' are comments.
Every case must match at least one rule and every rule at least one case, else nothing is written (exit 1)."""
import fnmatch
import sys

import h5py

PROFILES = {"intended", "flashinfer", "flashinfer-pod"}
STATUSES = {"passed", "incorrect", "launch-failed", "not-supported", "invalid-case", "skipped"}

path, rules_path = sys.argv[1:3]
rules = []
for n, line in enumerate(open(rules_path, encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if not line.strip() or line.startswith("#"):
        continue
    parts = line.split("\t") + ["", ""]
    pattern, profile, status, phrase, reason = parts[:5]
    if profile not in PROFILES or status not in STATUSES:
        sys.exit(f"{rules_path}:{n}: unknown profile '{profile}' or status '{status}'")
    rules.append((n, pattern, profile, status, phrase, reason))

with h5py.File(path, "r+") as f:
    ids = sorted(f["cases"].keys())
    plan = {i: [r for r in rules if r[1] == i or fnmatch.fnmatchcase(i, r[1])] for i in ids}
    unmatched_cases = [i for i, rs in plan.items() if not rs]
    used = {r[0] for rs in plan.values() for r in rs}
    unused_rules = [r for r in rules if r[0] not in used]
    if unmatched_cases or unused_rules:
        for i in unmatched_cases:
            print(f"no rule for case {i}", file=sys.stderr)
        for r in unused_rules:
            print(f"{rules_path}:{r[0]}: rule matches no case ({r[1]})", file=sys.stderr)
        sys.exit(1)
    for i, rs in plan.items():
        g = f["cases"][i]
        if "expected" in g:
            del g["expected"]
        e = g.create_group("expected")
        for k, (_, _, profile, status, phrase, reason) in enumerate(rs):
            x = e.create_group(str(k))
            for key, val in (("profile", profile), ("status", status), ("diagnosis", phrase), ("reason", reason)):
                x.attrs[key] = val
    print(f"{path}: {sum(len(rs) for rs in plan.values())} expectations on {len(ids)} cases")
