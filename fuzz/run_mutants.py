#!/usr/bin/env python3
"""Runs every mutant of a folder (fuzz/mutate_trace.py) through `podcheck inspect --check` and
`podcheck replay` and counts how they end: signals (crashes), exit codes, time-outs, and what the error
line looks like (one line naming the file, or a raw HDF5 error stack).

usage: run_mutants.py PODCHECK MUTANT_DIR [--json SUMMARY.json] [--timeout S] [--keep-crashes DIR]

Exit 0 when no run ended by a signal or a time-out and every exit code is 0, 1 or 2; else 1.
"""
import argparse
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

# An HDF5 error stack as podcheck used to pass it on: "H5Dread: can't read data; H5D__read: ..." or
# "H5Fopen failed on '...'"; HDF5's own printout ("HDF5-DIAG: Error detected ...", "#000: ...") too.
RAW_STACK = re.compile(r"\bH5[A-Z]\w*(\(\))?: |\bH5[A-Z]\w* failed\b|HDF5-DIAG|#\d{3}: ")


def run(cmd, timeout, cwd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, cwd=cwd)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("podcheck")
    ap.add_argument("mutants")
    ap.add_argument("--json")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--keep-crashes")
    a = ap.parse_args()
    podcheck = os.path.abspath(a.podcheck)
    files = sorted(f for f in os.listdir(a.mutants) if f.endswith(".h5"))
    kinds = {}
    tsv = os.path.join(a.mutants, "mutations.tsv")
    if os.path.exists(tsv):
        for line in open(tsv):
            n, k = line.split()
            kinds[n] = k
    stats = {}
    crashes = []
    work = tempfile.mkdtemp(prefix="podcheck-mutants-")
    for cmd_name in ("inspect", "replay"):
        stats[cmd_name] = dict(exit=collections.Counter(), raw_stack=0, names_file=0, errors=0, lines_per_error=collections.Counter())
    for i, name in enumerate(files):
        path = os.path.abspath(os.path.join(a.mutants, name))
        for cmd_name, cmd in (("inspect", [podcheck, "inspect", path, "--check"]),
                              ("replay", [podcheck, "replay", path, "--no-artifacts", "-q", "-j", "1"])):
            rc, out, err = run(cmd, a.timeout, work)
            s = stats[cmd_name]
            if rc == "timeout":
                key = "timeout"
            elif rc < 0:
                key = "signal " + signal.Signals(-rc).name
            else:
                key = "exit %d" % rc
            s["exit"][key] += 1
            if rc == "timeout" or (isinstance(rc, int) and (rc < 0 or rc > 2)):
                crashes.append(dict(mutant=name, mutation=kinds.get(name, "?"), command=cmd_name, end=key,
                                    stderr_tail=err[-600:]))
                if a.keep_crashes:
                    os.makedirs(a.keep_crashes, exist_ok=True)
                    shutil.copy(path, os.path.join(a.keep_crashes, name))
            if rc == 2:
                s["errors"] += 1
                lines = [l for l in err.splitlines() if l.strip()]
                s["lines_per_error"][min(len(lines), 5)] += 1
                if RAW_STACK.search(err):
                    s["raw_stack"] += 1
                if path in err or name in err:
                    s["names_file"] += 1
        if (i + 1) % 250 == 0:
            print("%d/%d" % (i + 1, len(files)), file=sys.stderr, flush=True)
    shutil.rmtree(work, ignore_errors=True)
    summary = dict(mutants=len(files), podcheck=podcheck,
                   commands={k: dict(exit=dict(v["exit"]), errors=v["errors"], raw_hdf5_stack=v["raw_stack"],
                                     error_names_file=v["names_file"],
                                     stderr_lines_of_errors={str(n): c for n, c in sorted(v["lines_per_error"].items())})
                             for k, v in stats.items()},
                   crashes=crashes)
    text = json.dumps(summary, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    for k, v in summary["commands"].items():
        print("%-8s %s; exit-2 errors %d: raw HDF5 stack in %d, file named in %d" %
              (k, ", ".join("%s: %d" % kv for kv in sorted(v["exit"].items())), v["errors"], v["raw_hdf5_stack"],
               v["error_names_file"]))
    print("crashes or time-outs: %d" % len(crashes))
    bad = any(c for c in crashes)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
