#!/usr/bin/env python3
"""The ctest tests of the fuzz targets (fuzz/CMakeLists.txt); each prints the target's output and a verdict.

  ctest_fuzz.py runs RUNS BINARY ARGS...
      libFuzzer for a fixed number of executions: passes only when it exits 0 AND its final "Done N runs"
      has N >= RUNS (a run that ended early, on its time limit or otherwise, fails) AND no worker died in
      libFuzzer's own signal handler (it writes a crash-* artifact into the working folder). Unsymbolized
      (ASAN_OPTIONS symbolize=0: the workers place a report by its addresses, fuzz_common.hpp CodeMap, and a
      worker's own symbolizer cost about 0.2 s per libhdf5 report); a failed run's output is symbolized here
      afterwards, one llvm-symbolizer for all its frames.
  ctest_fuzz.py coverage BINARY CORPUS
      the seeds once through the worker (the normal mode) and once read in process
      (PODCHECK_FUZZ_IN_PROCESS=1); the worker ships its coverage counters back (fuzz/fuzz_common.hpp), so
      libFuzzer's "cov:" after the seeds must be at least COVERAGE_SHARE of the in-process figure, and the
      counters the worker ships must be libFuzzer's whole set (one module).
  ctest_fuzz.py planted KIND BINARY CORPUS
      with PODCHECK_FUZZ_PLANT=KIND (fault, leak or abort in a callback the reader calls), the run must fail with
      the sanitizer's report of it (abort: the worker's stack, printed by its signal handler, and libFuzzer's
      deadly signal) and libFuzzer's crash artifact.
  ctest_fuzz.py isolated BINARY CORPUS [overrule | symbolizer | strdup]
      (overrule: PODCHECK_FUZZ_MISREPORT=1 too, the first worker calls the error ours; fresh workers must overrule it)
      (symbolizer: PODCHECK_FUZZ_STRAY_SYMBOLIZE=1 too, the fuzzer starts a symbolizer and the first worker leaves
      a question in every symbolizer pipe it holds, as a worker killed mid-symbolization does; every worker must
      still answer 'h', with no overrule needed)
      (strdup: PODCHECK_FUZZ_PLANT=library-strdup instead: libhdf5 strdup()s an unterminated string, a report whose
      first frame is the sanitizer's interceptor printed as "strdup", then libhdf5's; every worker must answer 'h')
      with PODCHECK_FUZZ_PLANT=library (libhdf5 copies an attribute into a too-small heap block, a sanitizer
      report whose first frame past the memcpy interceptor is libhdf5's), the run must finish its executions
      with those inputs counted as libhdf5 crashes, the worker's report on stderr, and no artifact.
  ctest_fuzz.py stuck BINARY CORPUS PHASE
      with PODCHECK_FUZZ_STUCK=PHASE (done: the first worker stops for good after saying its read ended, where its
      leak check would follow; report: after saying a sanitizer report began, with PODCHECK_FUZZ_PLANT=library
      for the report) and PODCHECK_FUZZ_REPLY_MS=500, the run must finish its executions well inside libFuzzer's
      -timeout=20: the worker killed, counted, and its input read again by a fresh worker (report: as a crash of
      unknown origin, which the fresh worker's libhdf5 report settles as the library's).
  A last argument "nosym" (planted, isolated): the run unsymbolized, as the long runs are; the report's
  names are then checked in its output symbolized afterwards (planted), or not at all (isolated: a run that
  passes prints its libhdf5 reports as they are), and the workers' answers must be the same.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The harness's own code differs between the two modes (a few dozen edges of thousands); a worker whose
# counters did not come back gives well under half.
COVERAGE_SHARE = 0.97
FLAGS = ["-rss_limit_mb=4096", "-malloc_limit_mb=1048576", "-seed=1"]


def unsymbolized(env=None):
    """The environment of a run without symbolization (the sanitizers print each frame as (MODULE+0xOFFSET))."""
    e = dict(env if env is not None else os.environ)
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        e[var] = (e[var] + ":" if e.get(var) else "") + "symbolize=0"
    return e


FRAME = re.compile(r"^(\s*#\d+ 0x[0-9a-f]+)\s+\((/[^()+]+)\+(0x[0-9a-f]+)\)")


def symbolize(out):
    """out with each unsymbolized frame line given its function and source line (llvm-symbolizer, one process)."""
    lines = out.splitlines(keepends=True)
    hits = [(i, m) for i, l in enumerate(lines) if (m := FRAME.match(l))]
    tool = os.environ.get("ASAN_SYMBOLIZER_PATH") or shutil.which("llvm-symbolizer-14") or shutil.which("llvm-symbolizer")
    if not hits or not tool:
        return out
    queries = "".join(f'CODE "{m.group(2)}" {m.group(3)}\n' for _, m in hits)
    try:
        p = subprocess.run([tool, "--demangle", "--no-inlines"], input=queries, capture_output=True, text=True,
                           errors="replace", timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return out
    answers = p.stdout.split("\n\n")  # per query: function line, file:line:column line
    if p.returncode != 0 or len(answers) < len(hits):
        return out
    for (i, m), a in zip(hits, answers):
        parts = a.strip("\n").split("\n")
        if len(parts) >= 2 and parts[0] != "??":
            where = "" if parts[1].startswith("??") else f" {parts[1]}"
            lines[i] = f"{m.group(1)} in {parts[0]}{where} ({m.group(2)}+{m.group(3)})" + lines[i][m.end():]
    return "".join(lines)


def run(cmd, env=None, timeout=None, symbolize_failure=False):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                       env=env, timeout=timeout)
    out = symbolize(p.stdout) if symbolize_failure and p.returncode != 0 else p.stdout
    sys.stdout.write(out)
    sys.stdout.flush()
    return p.returncode, out


def fail(msg):
    print(f"ctest_fuzz: FAIL: {msg}")
    return 1


def run_planted(binary, corpus, runs, env, nosym, extra=()):
    """One run with a planted condition, in a work folder of its own (new inputs and artifacts there, the committed
    corpus read only); unsymbolized when nosym, and then a failed run's output symbolized afterwards. Returns
    (status, output, the artifacts' names)."""
    with tempfile.TemporaryDirectory() as work:
        arts = os.path.join(work, "artifacts") + "/"
        new_inputs = os.path.join(work, "corpus")
        os.makedirs(arts)
        os.makedirs(new_inputs)
        rc, out = run([binary, f"-runs={runs}", *FLAGS, *extra, f"-artifact_prefix={arts}", new_inputs, corpus],
                      env=unsymbolized(env) if nosym else env, timeout=600, symbolize_failure=nosym)
        return rc, out, os.listdir(arts)


def runs(argv):
    wanted = int(argv[0])
    rc, out = run(argv[1:] + [f"-runs={wanted}"], env=unsymbolized(), symbolize_failure=True)
    done = re.findall(r"^Done (\d+) runs in (\d+) second", out, re.M)
    if rc != 0:
        return fail(f"the fuzzer exited with status {rc}")
    # a worker that died in libFuzzer's own handler (inherited from the fuzzer) wrote a crash-* artifact into the
    # working folder, though the run went on: the harness's handlers must be in before any signal is let through
    deadly = len(re.findall(r"ERROR: libFuzzer: deadly signal", out))
    if deadly:
        return fail(f"{deadly} worker(s) died in libFuzzer's signal handler, not the harness's")
    if not done or int(done[-1][0]) < wanted:
        return fail(f"the run ended after {done[-1][0] if done else 'an unknown number of'} executions, "
                    f"before the {wanted} it was given")
    print(f"ctest_fuzz: ok: {done[-1][0]} executions in {done[-1][1]} s")
    return 0


def inited_cov(out):
    m = re.search(r"INITED cov: (\d+) ft: (\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def coverage(argv):
    binary, corpus = argv
    with tempfile.TemporaryDirectory() as work:
        cmd = [binary, "-runs=0", *FLAGS, work, corpus]
        # a seed is a valid file, read to the end in 20-40 ms of the worker's CPU time, near the 50 ms hang limit, and
        # a hang ships no coverage (this test failed once under ctest -j2 on a loaded machine, and passed alone: the
        # likely cause). It is about the counters coming back, not about hangs: the worker gets 1 s per seed
        rc1, worker = run(cmd, env=dict(os.environ, PODCHECK_FUZZ_HANG_MS="1000"))
        env = dict(os.environ, PODCHECK_FUZZ_IN_PROCESS="1")
        rc2, ref = run(cmd, env=env)
    if rc1 or rc2:
        return fail(f"a seed run failed (status {rc1} through the worker, {rc2} in process)")
    w, r = inited_cov(worker), inited_cov(ref)
    if not w or not r:
        return fail("no 'INITED cov:' line")
    loaded = re.search(r"Loaded (\d+) modules\s+\((\d+) inline 8-bit counters\)", worker)
    shipped = re.search(r"the worker ships (\d+) inline 8-bit counters", worker)
    if not loaded or not shipped:
        return fail("no libFuzzer module line or no count of shipped counters")
    if loaded.group(1) != "1" or loaded.group(2) != shipped.group(1):
        return fail(f"libFuzzer has {loaded.group(1)} module(s) with {loaded.group(2)} counters; the worker ships "
                    f"{shipped.group(1)}")
    print(f"ctest_fuzz: cov after the seeds: {w[0]} through the worker, {r[0]} in process (ft {w[1]} / {r[1]})")
    if w[0] < COVERAGE_SHARE * r[0]:
        return fail(f"the worker's coverage is {w[0] / r[0]:.0%} of the in-process read's "
                    f"(at least {COVERAGE_SHARE:.0%} expected): its counters do not reach libFuzzer")
    print("ctest_fuzz: ok")
    return 0


def planted(argv):
    kind, binary, corpus, *mode = argv
    nosym = mode == ["nosym"]
    report = {"fault": r"ERROR: AddressSanitizer: heap-buffer-overflow",
              "leak": r"ERROR: LeakSanitizer: detected memory leaks",
              "abort": r"ERROR: libFuzzer: deadly signal"}[kind]
    rc, out, found = run_planted(binary, corpus, 200, dict(os.environ, PODCHECK_FUZZ_PLANT=kind), nosym)
    if rc == 0:
        return fail(f"the planted {kind} did not fail the run")
    if kind == "abort":
        # a signal leaves no report: the worker prints the stack its origin was judged on (backtrace_symbols_fd
        # lines, "MODULE(+0xOFFSET) [0xADDRESS]"), and the fuzz target's own frames must be among them
        stack = re.search(r"a fatal signal in a worker; the stack its origin was judged on:\n((?:.*\n){1,128})", out)
        name = re.escape(os.path.basename(binary))
        if not stack or not re.search(rf"{name}\(.*\)\s*\[0x[0-9a-f]+\]", stack.group(1)):
            return fail("the worker's fatal signal did not print the stack its origin was judged on")
        report = r"ERROR: libFuzzer: deadly signal|the stack its origin was judged on"
    # the worker's report first (the input it read cleanly would never be read in process otherwise), then
    # the in-process read's (or, for a leak, the harness's line after its in-process check)
    if len(re.findall(report, out)) < 2:
        return fail(f"'{report}' not reported by both the worker and the in-process read")
    if "planted_bug" not in out:
        return fail("the report does not point at the planted bug (podcheck::fuzz::planted_bug)")
    answers = re.findall(r"worker \d+ answers '(.)' for its sanitizer report", out)
    if kind == "fault" and (not answers or answers[0] != "p"):
        return fail(f"the worker did not answer ours for the planted fault (answers {answers})")
    # the answer names the frame it was decided by (what a CI digest keeps of a misreport): here one of ours
    decided_ours = r"answers 'p' for its sanitizer report \(.*\); deciding frame \(ours\): #\d+ 0x"
    if kind == "fault" and not re.search(decided_ours, out):
        return fail("the worker's answer does not name its deciding frame as one of ours")
    if not any(f.startswith(("crash-", "leak-")) for f in found):
        return fail(f"no crash artifact written (artifacts: {found})")
    print(f"ctest_fuzz: ok: the planted {kind} failed the run (status {rc}), artifact {found}")
    return 0


def isolated(argv):
    binary, corpus, *mode = argv
    nosym = "nosym" in mode
    mode = [m for m in mode if m != "nosym"]
    overrule = mode == ["overrule"]
    symbolizer = mode == ["symbolizer"]
    strdup = mode == ["strdup"]
    wanted = 40
    env = dict(os.environ, PODCHECK_FUZZ_PLANT="library-strdup" if strdup else "library")
    if overrule:  # the first worker answers "ours" for the libhdf5 error: fresh workers must overrule it
        env["PODCHECK_FUZZ_MISREPORT"] = "1"
    if symbolizer:  # a symbolizer conversation left half-done must not change how later reports read
        env["PODCHECK_FUZZ_STRAY_SYMBOLIZE"] = "1"
    rc, out, found = run_planted(binary, corpus, wanted, env, nosym)
    done = re.findall(r"^Done (\d+) runs", out, re.M)
    crashes = re.findall(r"(\d+) libhdf5 crashes and", out)
    if rc != 0 or found:
        return fail(f"the planted libhdf5 error failed the run (status {rc}, artifacts {found}): classified as ours")
    if not done or int(done[-1]) < wanted:
        return fail("the run did not finish its executions")
    if not crashes or int(crashes[-1]) < 1:
        return fail("no input counted as a libhdf5 crash")
    where = "H5MM_xstrdup" if strdup else "H5A__read"
    if "ERROR: AddressSanitizer: heap-buffer-overflow" not in out or (where not in out and not nosym):
        return fail(f"the worker's sanitizer report (heap-buffer-overflow in {where}) is not on stderr")
    if strdup and not nosym and not re.search(r"#0 0x[0-9a-f]+ in strdup \(", out):
        return fail("the report's first frame is not the strdup interceptor printed under its libc name")
    answers = re.findall(r"worker \d+ answers '(.)' for its sanitizer report", out)
    if (strdup or (nosym and not overrule)) and set(answers) != {"h"}:
        return fail(f"a worker answered ours for libhdf5's strdup overflow (answers {answers})")
    if (strdup or (nosym and not overrule)) and not re.search(
            r"answers 'h' for its sanitizer report \(.*\); deciding frame \(libhdf5 or its filters\): #\d+ 0x", out):
        return fail("a worker's answer does not name its deciding frame as libhdf5's")
    overruled = re.findall(r"(\d+) crashes of ours overruled", out)
    if overrule and (not overruled or int(overruled[-1]) < 1):
        return fail("the misreporting worker's answer was not overruled by a fresh worker")
    if symbolizer:
        if "planted: a stray question" not in out:
            return fail("the stray symbolizer question was not planted")
        if not answers or set(answers) != {"h"} or (overruled and int(overruled[-1]) > 0):
            return fail(f"a worker misread its report after a stray symbolizer answer (answers {answers}, overruled "
                        f"{overruled[-1] if overruled else '?'}): workers share a symbolizer")
    print(f"ctest_fuzz: ok: {crashes[-1]} planted libhdf5 errors isolated in {done[-1]} executions, no artifact")
    return 0


def stuck(argv):
    binary, corpus, phase = argv
    wanted = 40
    env = dict(os.environ, PODCHECK_FUZZ_STUCK=phase, PODCHECK_FUZZ_REPLY_MS="500")
    if phase == "report":
        env["PODCHECK_FUZZ_PLANT"] = "library"
    # libFuzzer's own -timeout (20 s) is what an unbounded wait on the stopped worker runs into
    rc, out, found = run_planted(binary, corpus, wanted, env, True, extra=["-timeout=20"])
    said = {"done": "d", "report": "R"}[phase]
    if f"stops after saying '{said}'" not in out:
        return fail(f"the worker's stop after '{said}' was not planted")
    if rc != 0 or found:
        return fail(f"the run failed (status {rc}, artifacts {found}): the parent waited on the stopped worker")
    done = re.findall(r"^Done (\d+) runs", out, re.M)
    if not done or int(done[-1]) < wanted:
        return fail("the run did not finish its executions")
    killed = re.findall(r"(\d+) workers stopped answering after 'd' or 'R'", out)
    if not killed or int(killed[-1]) < 1:
        return fail("no worker counted as stopped after 'd' or 'R'")
    # a report that never came is a crash of unknown origin: here a fresh worker's libhdf5 report settles it
    overruled = re.findall(r"(\d+) crashes of ours overruled", out)
    if phase == "report" and (not overruled or int(overruled[-1]) < 1):
        return fail("the unread report was not judged as a crash (no fresh worker's second opinion)")
    print(f"ctest_fuzz: ok: {killed[-1]} stopped worker(s) killed, {done[-1]} executions done")
    return 0


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    sys.exit({"runs": runs, "coverage": coverage, "planted": planted, "isolated": isolated, "stuck": stuck}[mode](rest))
