#!/usr/bin/env python3
"""Compile every Catch2 test translation unit of a configured build against Catch2 v3, syntax only.

This machine and CI have Catch2 v2 (Debian 12); the GPU machine has v3 (Ubuntu 24.04) and builds only kernels_tests
and podcheck there, so a v2-only spelling in any other test executable goes unseen until someone builds the whole
tree on v3. testing/catch_portability.py (a ctest) catches the spellings known to differ; this catches the rest, where
a v3 header is at hand:

  catch3_syntax.py BUILD_DIR CATCH3

BUILD_DIR: a configured build with compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS is on). CATCH3: a directory
holding catch2/catch_all.hpp (an installed v3, e.g. /usr/include), or Catch2 v3's single-header
catch_amalgamated.hpp (from a Catch2 release or its extras/ folder, fetched outside this repository). Each test TU's
own compile command runs again with -fsyntax-only, PODCHECK_CATCH_MAJOR=3 and CATCH3's headers first on the include
path; the TUs that fail are named with their first errors. Exit 0 when all compile, 1 when one does not, 2 on usage.
Stop 37: 5 of 9 test TUs failed this way (Catch::Contains, v2 only), none after HasSubstring.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def catch3_include(arg, tmp):
    """An include directory in which catch2/catch_all.hpp and catch2/catch_session.hpp resolve to v3."""
    if os.path.isdir(arg) and os.path.isfile(os.path.join(arg, "catch2", "catch_all.hpp")):
        return arg
    if os.path.isfile(arg) and arg.endswith("catch_amalgamated.hpp"):
        os.makedirs(os.path.join(tmp, "catch2"))
        for name in ("catch_all.hpp", "catch_session.hpp"):
            with open(os.path.join(tmp, "catch2", name), "w") as f:
                f.write(f'#include "{os.path.abspath(arg)}"\n')
        return tmp
    return None


def test_units(build):
    with open(os.path.join(build, "compile_commands.json")) as f:
        for e in json.load(f):
            if "PODCHECK_CATCH_MAJOR" in e["command"] and e["file"].endswith((".cpp", ".cxx", ".cc")):
                yield e


def command_v3(entry, include):
    args = shlex.split(entry["command"])
    out, skip = [args[0], "-I" + include, "-fsyntax-only", "-w"], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c":
            out.append("-DPODCHECK_CATCH_MAJOR=3" if a.startswith("-DPODCHECK_CATCH_MAJOR=") else a)
    return out


def main():
    if len(sys.argv) != 3:
        print("usage: catch3_syntax.py BUILD_DIR CATCH3", file=sys.stderr)
        return 2
    build, catch3 = sys.argv[1], sys.argv[2]
    if not os.path.isfile(os.path.join(build, "compile_commands.json")):
        print(f"catch3_syntax: {build}/compile_commands.json: not found (configure the build first)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        inc = catch3_include(catch3, tmp)
        if not inc:
            print(f"catch3_syntax: {catch3}: neither a directory with catch2/catch_all.hpp nor catch_amalgamated.hpp",
                  file=sys.stderr)
            return 2
        units = list(test_units(build))
        if not units:
            print(f"catch3_syntax: {build}: no test translation unit (PODCHECK_BUILD_TESTS off?)", file=sys.stderr)
            return 2

        def check(e):
            r = subprocess.run(command_v3(e, inc), cwd=e["directory"], capture_output=True, text=True)
            return e["file"], r.returncode, [l for l in r.stderr.splitlines() if "error" in l][:6]

        failed = 0
        with ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as ex:
            for path, rc, errors in ex.map(check, units):
                print(("ok    " if rc == 0 else "FAIL  ") + os.path.relpath(path, build))
                for line in errors:
                    print("      " + line)
                failed += rc != 0
    print(f"catch3_syntax: {len(units)} test translation units, {failed} fail to compile against Catch2 v3")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
