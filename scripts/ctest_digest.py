#!/usr/bin/env python3
"""After a failed ctest run: each failed test's name and the lines of its output that say why, last.

usage: scripts/ctest_digest.py BUILD_DIR

CI keeps only the tail of a run's output, and ctest's own tail is its summary, which names a failed test but
not the reason (a fuzz run's reason is one line among thousands). This prints, per failed test in
BUILD_DIR/Testing/Temporary/LastTest.log, the lines that carry a verdict or a sanitizer's summary (at most
MAX_LINES, the last ones) and the output's final lines; then, for a sanitizer report, where it was: the last
report's first FRAMES frames, and the last fuzz workers' answers with the frame that decided each
(fuzz/fuzz_common.hpp), so that a CI failure on a libhdf5-or-ours question can be judged from the kept tail alone.
"""
import os
import re
import sys

MAX_LINES = 8
TAIL = 3
FRAMES = 4  # of the last sanitizer report in a failed test's output: its first frames (where it happened)
WHY = re.compile(r"FAIL|ERROR|SUMMARY:|runtime error|podcheck-fuzz: (the worker crashed|podcheck's code|the leak|harness failure|a case failed|case '.*' changed|"
                 r"read again by a fresh worker|a worker said|a hung worker)|"
                 r"^Done \d+ runs|crash-|leak-|Timeout|Killed|Segmentation|terminate called|REQUIRE|CHECK\(")

ANSWER = re.compile(r"podcheck-fuzz: worker \d+ answers")
REPORT = re.compile(r"==\d+==ERROR: \w+Sanitizer")
FRAME = re.compile(r"^\s*#\d+ 0x")


def main(build):
    log = os.path.join(build, "Testing", "Temporary", "LastTest.log")
    try:
        text = open(log, errors="replace").read()
    except OSError:
        print(f"ctest_digest: no test log at {log} (the build failed before any test ran?)")
        return
    failed = 0
    for block in re.split(r"\n(?=\d+/\d+ Testing: )", text):
        m = re.match(r"\d+/\d+ Testing: (.*)", block)
        # a test passed on its required output (PASS_REGULAR_EXPRESSION) says "Test Pass Reason:" instead
        if not m or any(w in block for w in ("Test Passed.", "Test Pass Reason:", "Test Skipped")):
            continue
        out = block.split("Output:\n", 1)[-1].split("<end of output>", 1)[0]
        lines = [l for l in out.splitlines() if l.strip() and not l.startswith("-----")]
        why = [l for l in lines if WHY.search(l)][-MAX_LINES:]
        # the last report's first frames say where it was, and a fuzz worker's answer names the frame it decided
        # by (a fuzz run prints a report and an answer for every libhdf5 crash it isolates: the last ones are those
        # of the input that failed it)
        answers = [l for l in lines if ANSWER.search(l)][-3:]
        last = next((i for i in range(len(lines) - 1, -1, -1) if REPORT.search(lines[i])), None)
        frames = [] if last is None else [l for l in lines[last + 1:last + 1 + 2 * FRAMES]
                                          if FRAME.match(l)][:FRAMES]
        failed += 1
        print(f"ctest_digest: FAILED {m.group(1)}")
        shown = []
        for l in why + lines[-TAIL:] + frames + answers:
            if l not in shown:
                shown.append(l)
                print(f"  | {l[:300]}")
    if not failed:
        print("ctest_digest: no failed test in the last ctest run")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build")
