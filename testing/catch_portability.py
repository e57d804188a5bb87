#!/usr/bin/env python3
"""Test sources must build against Catch2 v2 (Debian 12: this machine and CI) and v3 (the GPU machine, Ubuntu 24.04).

CI compiles them against v2 only, so a spelling that only one version knows passes CI and breaks the GPU machine's
build, which costs device time before anything runs (stop 37: a bare `Approx` in a host test, which v2 puts in the
global namespace and v3 only in `Catch`). testing/catch.hpp is the one place that knows the version; this check reads
every C++ and CUDA source of the tree and fails, naming file, line and the portable spelling, on:
  - a Catch2 header included anywhere but testing/catch.hpp and testing/catch_main.cpp;
  - a name that exists in one version only (the table below);
  - a bare `Approx` while testing/catch.hpp does not bring `Catch::Approx` into the global namespace under v3.

usage: catch_portability.py SOURCE_DIR
"""
import os
import re
import sys

# (pattern, why) for names that one of the two versions lacks
ONE_VERSION_ONLY = [
    (r"\bCatch::Detail::Approx\b", "v2 only (v3: Catch::Approx); write Approx, which testing/catch.hpp makes portable"),
    (r"\bCatch::Approx\b", "v3 only (v2: Catch::Detail::Approx); write Approx, which testing/catch.hpp makes portable"),
    (r"\bContainsSubstring\b", "v3 only (v2: Catch::Matchers::Contains); write HasSubstring (testing/catch.hpp)"),
    (r"\bCatch::Contains\b", "v2's string matcher (v3: ContainsSubstring); write HasSubstring (testing/catch.hpp)"),
    (r"(?<![A-Z_])SKIP\s*\(", "v3.3 and later only; use PODCHECK_SKIP (testing/catch.hpp)"),
    (r"\bSTATIC_CHECK\b|\bSTATIC_REQUIRE_FALSE\b", "v3 only"),
]
CATCH_INCLUDE = re.compile(r'#\s*include\s*[<"]catch2/')
BARE_APPROX = re.compile(r"(?<![\w:])Approx\s*\(")
HOSTS = {os.path.join("testing", "catch.hpp"), os.path.join("testing", "catch_main.cpp")}
SKIP_DIRS = {".git", ".flashinfer", ".wip", "node_modules"}


def sources(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
        for f in files:
            if f.endswith((".cpp", ".hpp", ".cu", ".cuh", ".h", ".cc")):
                yield os.path.relpath(os.path.join(d, f), root)


def code_of(line):
    """The line without a // comment (a string holding // is rare in tests and only hides a finding)."""
    return line.split("//", 1)[0]


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = sys.argv[1]
    with open(os.path.join(root, "testing", "catch.hpp")) as f:
        catch_hpp = f.read()
    v3_block = catch_hpp.split("#if PODCHECK_CATCH_MAJOR >= 3", 1)[-1].split("#else", 1)[0]
    approx_aliased = re.search(r"using\s+Catch::Approx\s*;", v3_block) is not None
    problems, files = [], 0
    for rel in sorted(sources(root)):
        files += 1
        with open(os.path.join(root, rel), errors="replace") as f:
            lines = f.read().splitlines()
        for n, line in enumerate(lines, 1):
            code = code_of(line)
            if rel not in HOSTS and CATCH_INCLUDE.search(code):
                problems.append(f"{rel}:{n}: includes a Catch2 header; include \"testing/catch.hpp\" instead")
            if rel in HOSTS:
                continue
            for pat, why in ONE_VERSION_ONLY:
                found = re.search(pat, code)
                if found:
                    problems.append(f"{rel}:{n}: {found.group(0).strip()}: {why}")
            if not approx_aliased and BARE_APPROX.search(code):
                problems.append(f"{rel}:{n}: bare Approx, which Catch2 v3 has only as Catch::Approx, and "
                                "testing/catch.hpp does not alias it under v3")
    for p in problems:
        print(p)
    print(f"catch portability: {files} sources read, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
