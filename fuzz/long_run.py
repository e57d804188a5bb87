#!/usr/bin/env python3
"""A long libFuzzer campaign of one reader target, crash-tolerant, with every artifact triaged.

usage: fuzz/long_run.py TARGET SECONDS [--jobs N] [--seed S] [--build build-asan] [--runs R]

--runs R: instead of fork mode, JOBS plain libFuzzer processes (seeds S, S+1, ...) that share one corpus
folder (libFuzzer reloads it) and do R executions in all, SECONDS being a safety limit each: an exact count
of executions, at about fork mode's rate. A plain process stops at its first crash artifact; the executions
it did are counted, and the campaign fails.

Why not the ctest run (fuzz/CMakeLists.txt) for hours: a plain libFuzzer run stops at its first crash artifact.
Each HDF5 input is read by a worker process that ships its coverage back (fuzz/fuzz_common.hpp); only an input
on which the worker found a bug of ours is read again in process. Here libFuzzer runs in fork mode with
-ignore_crashes=1, so a campaign goes on past such an input (or a libhdf5 crash in that second read, which
depends on memory contents), and afterwards each artifact is run again, three times, through the same target:
  ours            a sanitizer report whose first frame outside the sanitizer runtime and libc is podcheck's
                  code: a bug of ours (exit status 1)
  libhdf5         the first such frame is inside libhdf5 (production reads untrusted files in a child
                  process and turns this into "the file is corrupt", exit 2)
  not reproduced  all three runs finished cleanly (memory-dependent library crashes, load-dependent timeouts)
Prints the executions, the artifacts by class, and for each "ours" artifact its report. Exit status 1 when any
artifact is ours, and also when a crash artifact (not a timeout or an out-of-memory) did not reproduce: its
origin is then unknown, and it is left for a person to read in the log rather than waved through.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNTIME = ("__interceptor_", "__asan", "__sanitizer", "__ubsan", "__lsan", "fuzzer::", "__libc_", "_start",
           "raise", "abort", "memcpy", "memmove", "memset", "strlen", "malloc", "calloc", "realloc", "free")


def env(symbolize=True):
    """The sanitizers' options. The campaign's processes run unsymbolized (symbolize=0: their workers place a report
    by its addresses, fuzz_common.hpp CodeMap; a worker's own symbolizer cost about 0.2 s per libhdf5 report); the
    triage of artifacts runs symbolized, its rule reads names and source lines."""
    e = dict(os.environ)
    e.setdefault("LSAN_OPTIONS", f"suppressions={ROOT}/fuzz/lsan.supp:print_suppressions=0")
    e.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0:strict_string_checks=1:max_allocation_size_mb=4096")
    e.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        e[var] += f":symbolize={int(symbolize)}"
    return e


LIBRARY = ("libhdf5", "/libz.so", "/libsz.so", "/libaec.so")  # libhdf5 and the compression libraries of its filters


def first_relevant_frame(report, binary=""):
    """(function, module-or-source) of the first stack frame after the first sanitizer error line that is not the
    sanitizer runtime, libc or the C++ runtime (the worker's rule, fuzz_common.hpp report_origin, which places frames
    by address instead): the runtime by name, and by place: a named frame in the target's executable without a
    source line, "in strdup (EXE+0x...)". Only the error's own stack (its first run of frames) counts, not the
    "allocated by" / "freed by" stacks after it."""
    exe = f"({os.path.realpath(binary)}+0x" if binary else None
    lines = report.splitlines()
    start = next((i for i, l in enumerate(lines) if "ERROR:" in l or "runtime error:" in l), None)
    if start is None:
        return None
    in_stack = False
    for l in lines[start + 1:]:
        if not re.match(r"^\s*#\d+ 0x", l):
            if in_stack or l.strip().startswith("SUMMARY"):
                break
            continue
        in_stack = True
        fn = re.search(r" in (\S+)", l)
        name = fn.group(1) if fn else ""
        if name.startswith(RUNTIME) or "libc.so" in l or "libstdc++" in l or "libgcc" in l:
            continue
        if fn and exe and exe in l:
            continue
        return name, l.strip()
    return None


def classify(binary, artifact):
    reports = []
    for _ in range(3):
        try:
            p = subprocess.run([binary, "-timeout=60", "-rss_limit_mb=4096", "-malloc_limit_mb=1048576", artifact],
                               capture_output=True, text=True, env=env(), timeout=300)
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired:
            out, rc = "timed out after 300 s", -1
        if rc == 0:
            continue
        reports.append(out)
        f = first_relevant_frame(out, binary)
        if f and not any(lib in f[1] for lib in LIBRARY):
            return "ours", out
    if not reports:
        return "not reproduced", ""
    for out in reports:
        f = first_relevant_frame(out, binary)
        if f and any(lib in f[1] for lib in LIBRARY):
            return "libhdf5", out
    return "ours", reports[0]  # failed without a sanitizer frame we can place: not to be waved through


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("target")
    ap.add_argument("seconds", type=int)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-asan"))
    ap.add_argument("--runs", type=int, default=0)
    a = ap.parse_args()
    binary = os.path.join(a.build, "fuzz", a.target)
    corpus = os.path.join(ROOT, "fuzz", "corpus", a.target)
    work = os.path.join(a.build, "fuzz", f"long-{a.target}")
    arts = os.path.join(work, "artifacts") + "/"
    os.makedirs(os.path.join(work, "corpus"), exist_ok=True)
    os.makedirs(arts, exist_ok=True)
    log_path = os.path.join(work, "fuzz.log")
    if a.runs:
        procs, logs = [], []
        for i in range(a.jobs):
            log_i = os.path.join(work, f"fuzz-{i}.log")
            cmd = [binary, f"-runs={a.runs // a.jobs}", f"-max_total_time={a.seconds}", f"-seed={a.seed + i}",
                   "-timeout=120", "-rss_limit_mb=4096", "-malloc_limit_mb=1048576", "-print_final_stats=1",
                   f"-artifact_prefix={arts}", os.path.join(work, "corpus"), corpus]
            logs.append(log_i)
            procs.append(subprocess.Popen(cmd, stdout=open(log_i, "w"), stderr=subprocess.STDOUT, env=env(False)))
        rcs = [p.wait() for p in procs]
        done = []
        for log_i in logs:
            d = re.findall(r"^Done (\d+) runs in (\d+) second", open(log_i, errors="replace").read(), re.M)
            if not d:  # stopped on a crash: its last status line
                d = [(m, "?") for m in re.findall(r"^#(\d+)", open(log_i, errors="replace").read(), re.M)[-1:]]
            done.append(d[-1] if d else ("0", "?"))
        total = sum(int(n) for n, _ in done)
        print(f"{a.target}: {total} executions ({', '.join(f'{n} in {t} s' for n, t in done)}; {a.jobs} plain "
              f"job(s), libFuzzer rc {rcs}); logs {' '.join(logs)}")
        rc = max(rcs)
    else:
        cmd = [binary, f"-fork={a.jobs}", "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1",
               f"-max_total_time={a.seconds}", f"-seed={a.seed}", "-timeout=120", "-rss_limit_mb=4096",
               "-malloc_limit_mb=1048576", f"-artifact_prefix={arts}", os.path.join(work, "corpus"), corpus]
        with open(log_path, "w") as log:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env(False)).returncode
        text = open(log_path, errors="replace").read()
        execs = [int(m) for m in re.findall(r"^#(\d+):", text, re.M)]
        print(f"{a.target}: {execs[-1] if execs else 0} executions in {a.seconds} s (fork mode, {a.jobs} job(s), "
              f"libFuzzer rc {rc}); log {log_path}")
    classes = {}
    for art in sorted(glob.glob(arts + "*")):
        kind = os.path.basename(art).split("-")[0]
        cls, report = classify(binary, art)
        classes.setdefault(cls, []).append(os.path.basename(art))
        if cls == "ours":
            print(f"--- {art} ({kind}): ours\n{report[-4000:]}")
    for cls in ("ours", "libhdf5", "not reproduced"):
        print(f"  {cls}: {len(classes.get(cls, []))} {' '.join(classes.get(cls, []))}")
    unplaced = [n for n in classes.get("not reproduced", []) if n.startswith("crash-")]
    if unplaced:
        print(f"  crash artifacts that did not reproduce (origin unknown; see {log_path}): {' '.join(unplaced)}")
    return 1 if classes.get("ours") or unplaced or (a.runs and rc != 0) else 0


if __name__ == "__main__":
    sys.exit(main())
