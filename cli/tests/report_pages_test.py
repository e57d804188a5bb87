"""The pictures through the CLI (no browser needed): `podcheck plot` writes a PNG of the size it says and refuses
what it cannot draw (exit 2, nothing written); --html is checked before any work; the JSON report carries the
case attributes and the failing cases' heat maps, and `podcheck merge --html` draws them from the shards'
JSON reports exactly as the page of the whole run does.
Usage: report_pages_test.py PODCHECK_EXE SOURCE_DIR"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

exe, src = (os.path.abspath(a) for a in sys.argv[1:3])
golden = os.path.join(src, "traces/golden/podcheck-cuda/podcheck_cuda_v1_h200.h5")
A = "decode_f16_h32kv8d128_ps1_hnd(bs_d=7,kv_d=1,seed=0)"
B = "pod_f16_h16kv1d64_ps16_nhd(qo_p=33,kv_p=100,causal,bs_d=9,kv_d=ragged80,seed=0)"
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def pc(tmp, *args):
    r = subprocess.run([exe, *args], cwd=tmp, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def png_size(path):
    head = open(path, "rb").read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


with tempfile.TemporaryDirectory() as tmp:
    mutate = os.path.join(src, "cli/tests/mutate_trace.py")
    subprocess.run([sys.executable, mutate, golden, os.path.join(tmp, "planted.h5"), "plant_faults"], check=True)
    subprocess.run([sys.executable, mutate, golden, os.path.join(tmp, "crash.h5"), "crash_and_guard"], check=True)

    # plot
    rc, out = pc(tmp, "plot", "planted.h5", "--case", A, "-o", "a.png")
    m = re.search(r"plot: a.png written \((\d+) x (\d+) pixels, (\d+) panels\)", out)
    check(rc == 0 and m is not None, "plot writes a.png and says its size (rc %d)" % rc)
    if m:
        check(png_size(os.path.join(tmp, "a.png")) == (int(m[1]), int(m[2])), "the PNG's header has that size")
        check(m[3] == "2", "a decode-only case has 2 panels (out_d, lse_d)")
    check("[FAIL]" in out and "heads" in out, "plot prints the verdict and diagnosis as replay does")
    before = open(os.path.join(tmp, "a.png"), "rb").read()
    rc, out = pc(tmp, "plot", "planted.h5", "--case", B, "-o", "a.png")
    check(rc == 2 and "exists (use --force" in out, "plot does not replace a file without --force")
    check(open(os.path.join(tmp, "a.png"), "rb").read() == before, "... and leaves it as it was")
    rc, out = pc(tmp, "plot", "planted.h5", "--case", B, "-o", "a.png", "--force")
    check(rc == 0 and "4 panels" in out, "plot --force replaces it; a POD case has 4 panels")
    rc, out = pc(tmp, "plot", "planted.h5", "--case", "no_such_case", "-o", "b.png")
    check(rc == 2 and "no case 'no_such_case' in planted.h5" in out, "plot of an unknown case: exit 2, named")
    rc, out = pc(tmp, "plot", "planted.h5", "--case", A, "-o", "b.png", "--profile", "bogus")
    check(rc == 2 and "bogus" in out, "plot with an unknown profile: exit 2")
    rc, out = pc(tmp, "plot", "crash.h5", "--case", A, "-o", "c.png")
    check(rc == 2 and "nothing to plot" in out and "launch-failed" in out,
          "plot of a case whose launch failed (no outputs): exit 2, says why (%d)" % rc)
    check(not os.path.exists(os.path.join(tmp, "b.png")) and not os.path.exists(os.path.join(tmp, "c.png")),
          "no PNG is written when plot refuses")

    # --html is checked with the other report targets, before any work
    rc, out = pc(tmp, "replay", "planted.h5", "--html", "r.x", "--json", "r.x", "--no-artifacts")
    check(rc == 2 and "--html names the same file as --json" in out, "--html and --json on one file: exit 2")
    os.mkdir(os.path.join(tmp, "adir"))
    rc, out = pc(tmp, "replay", "planted.h5", "--html", "adir", "--force", "--no-artifacts")
    check(rc == 2 and "it is a directory" in out, "--html on a folder: exit 2")

    # JSON extras, and merge --html from the shards' JSON
    rc, out = pc(tmp, "replay", golden, "planted.h5", "--json", "all.json", "--html", "all.html", "--no-artifacts", "-q")
    check(rc == 1, "replay of golden + planted exits 1")
    rc1, _ = pc(tmp, "replay", golden, "--json", "s1.json", "--no-artifacts", "-q")
    rc2, _ = pc(tmp, "replay", "planted.h5", "--json", "s2.json", "--no-artifacts", "-q")
    check(rc1 == 0 and rc2 == 1, "the two shards exit 0 and 1")
    rep = json.load(open(os.path.join(tmp, "s2.json")))
    cases = {c["id"]: c for c in rep["cases"]}
    check(all("case" in c for c in rep["cases"]), "every case of the JSON report has its attributes")
    check(cases[B]["case"]["kind"] == "single" and "causal" in cases[B]["case"]["features"] and
          cases[B]["case"]["heads"] == "16/1", "the POD case's attributes: single, causal, heads 16/1")
    maps = {(m["tensor"], m["request"]): m for m in cases[A].get("heat_maps", [])}
    check(len(maps) == 14 and maps[("out_d", 3)]["head_bins"] == 32,
          "the failing decode case carries 7 requests x 2 tensors of maps, 32 head bins each")
    cells = maps.get(("out_d", 3), {}).get("cells", "").split()
    check(len(cells) == 32 and float(cells[5]) >= 1 and all(float(x) < 1 for i, x in enumerate(cells) if i != 5),
          "its request 3 out_d map: head 5 over the bound, the others within")
    check(not any("heat_maps" in c for c in rep["cases"] if c["status"] == "passed"), "passing cases carry no maps")
    rc, out = pc(tmp, "merge", "s1.json", "s2.json", "-o", "m.json", "--html", "m.html")
    check(rc == 1 and os.path.exists(os.path.join(tmp, "m.html")), "merge --html writes the page (exit 1: a failure)")

    def figures(page):
        text = open(os.path.join(tmp, page), encoding="utf-8").read()
        return re.findall(r'<figure class="heatmap"[^>]*>', text), text

    direct, dtext = figures("all.html")
    merged, mtext = figures("m.html")
    check(len(merged) == 6 and merged == direct, "the merged page draws the same 6 maps as the page of the whole run")
    check(len(re.findall(r'<tr [^>]*data-status="passed"', mtext)) == 6 and
          len(re.findall(r'<tr [^>]*data-status="incorrect"', mtext)) == 2, "merged page: 6 passed, 2 incorrect rows")
    check("http://" not in mtext and "https://" not in mtext, "the merged page names no http(s) URL")
    rc, out = pc(tmp, "merge", "s1.json", "s2.json", "-o", "m2.json", "--html", "m.html")
    check(rc == 2 and "exists" in out and not os.path.exists(os.path.join(tmp, "m2.json")),
          "merge --html onto an existing page without --force: exit 2 before writing anything")

sys.exit(1 if failures else 0)
