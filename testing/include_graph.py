"""The include graph between podcheck's modules matches DESIGN §3: every #include "module/..." in a module's
own sources (tests excepted) names the module itself or one it may depend on. Prints every edge that is not
allowed, with the file and line, and exits 1 if there is one.
Usage: include_graph.py SOURCE_DIR"""
import pathlib
import re
import sys

# module -> modules its sources may include (besides itself). DESIGN §3 / README "Layout".
ALLOWED = {
    "reference": set(),
    "fixtures": {"reference"},
    "validation": {"reference"},
    "traces": {"fixtures", "validation", "reference"},
    "kernels": {"reference"},
    "app": {"traces", "fixtures", "validation", "reference", "kernels"},
    "cli": {"app"},
    "testing": {"reference"},  # the test-only case builder
    "python": {"app", "traces", "fixtures", "validation", "reference"},
    "fuzz": {"app", "traces", "fixtures", "validation", "reference"},
}
SOURCES = {".hpp", ".h", ".cpp", ".cu", ".cuh", ".c"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')

root = pathlib.Path(sys.argv[1])
bad = []
edges = 0
for module, allowed in ALLOWED.items():
    base = root / module
    if not base.is_dir():
        continue
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix not in SOURCES or "tests" in rel.parts or "build" in rel.parts[0]:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) not in ALLOWED:
                continue
            edges += 1
            target = m.group(1)
            if target != module and target not in allowed:
                bad.append(f"{rel}:{n}: {module}/ includes {target}/ ({line.strip()}); "
                           f"{module}/ may include: {', '.join(sorted(allowed)) or 'nothing'}")
for b in bad:
    print(b)
print(f"include graph: {edges} includes between modules checked, {len(bad)} not allowed by DESIGN §3")
sys.exit(1 if bad else 0)
