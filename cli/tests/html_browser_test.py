"""The HTML report in a real browser: headless Chromium opens a page that `podcheck replay --html` made of a
golden trace and a copy with two planted faults (mutate_trace.py plant_faults), runs its JS, and the DOM it
leaves is checked: rows per status, the filter and the sort set by the URL fragment, and the failing cases'
maps (bins, the size the browser decoded and drew the cell pictures at, the planted cells over their bound or
never written, every other cell within). A screenshot is kept in ARTIFACT_DIR. Without Chromium the test says
so and exits 77 (ctest: skipped), never passes.
Usage: html_browser_test.py PODCHECK_EXE SOURCE_DIR ARTIFACT_DIR"""
import base64
import html.parser
import os
import shutil
import struct
import subprocess
import sys
import tempfile

exe, src, artifacts = (os.path.abspath(a) for a in sys.argv[1:4])
chromium = os.environ.get("PODCHECK_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    print("SKIP: no Chromium found (Debian: apt-get install chromium; scripts/install-deps.sh installs it)")
    sys.exit(77)

golden = os.path.join(src, "traces/golden/podcheck-cuda/podcheck_cuda_v1_h200.h5")
A = "decode_f16_h32kv8d128_ps1_hnd(bs_d=7,kv_d=1,seed=0)"  # out_d request 3, head 5 wrong
B = "pod_f16_h16kv1d64_ps16_nhd(qo_p=33,kv_p=100,causal,bs_d=9,kv_d=ragged80,seed=0)"  # lse_p rows 10-13 NaN
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


class Dom(html.parser.HTMLParser):
    """The rows of the case table, the figures, the summary counts and <body>'s attributes."""

    def __init__(self):
        super().__init__()
        self.rows, self.figures, self.counts, self.body, self.table = [], [], {}, {}, {}
        self.article = None
        self.count_key = None
        self.refs = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a:
                self.refs.append(a[k])
        if tag == "body":
            self.body = a
        elif tag == "table" and a.get("id") == "cases":
            self.table = a
        elif tag == "tr" and "data-status" in a:
            self.rows.append(a)
        elif tag == "article":
            self.article = a
        elif tag == "figure" and "data-tensor" in a:
            self.figures.append(dict(a, article_id=self.article.get("data-id"), article=self.article.get("id")))
        elif tag == "b" and "data-count" in a:
            self.count_key = a["data-count"]

    def handle_data(self, data):
        if self.count_key:
            self.counts[self.count_key] = int(data)
            self.count_key = None


def browse(url, user_dir, *extra):
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
           "--user-data-dir=" + user_dir, *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def dom_of(page, fragment=""):
    with tempfile.TemporaryDirectory() as user_dir:
        r = browse("file://" + page + fragment, user_dir, "--virtual-time-budget=10000", "--dump-dom")
    if r.returncode != 0 or "<body" not in r.stdout:
        print(r.stderr[-2000:])
        sys.exit("chromium --dump-dom failed (exit %d)" % r.returncode)
    d = Dom()
    d.feed(r.stdout)
    return d


with tempfile.TemporaryDirectory() as tmp:
    planted = os.path.join(tmp, "planted.h5")
    subprocess.run([sys.executable, os.path.join(src, "cli/tests/mutate_trace.py"), golden, planted, "plant_faults"],
                   check=True)
    page = os.path.join(tmp, "report.html")
    r = subprocess.run([exe, "replay", golden, planted, "--html", page, "--no-artifacts", "-q"], cwd=tmp,
                       capture_output=True, text=True)
    check(r.returncode == 1, "replay of the planted faults exits 1 (got %d)" % r.returncode)
    if not os.path.exists(page):
        print(r.stdout, r.stderr)
        sys.exit("no page written")
    text = open(page, encoding="utf-8").read()
    check("http://" not in text and "https://" not in text, "the page names no http(s) URL")

    d = dom_of(page)
    check(d.body.get("data-ready") == "1", "the page's script ran to the end (body data-ready)")
    by_status = {}
    for row in d.rows:
        by_status[row["data-status"]] = by_status.get(row["data-status"], 0) + 1
    check(by_status == {"passed": 6, "incorrect": 2}, "rows per status: 6 passed, 2 incorrect (got %s)" % by_status)
    check(d.counts.get("ok") == 6 and d.counts.get("fail") == 2, "summary: 6 ok, 2 fail (got %s)" % d.counts)
    check(d.table.get("data-shown") == "8", "all 8 rows shown without a filter")
    check(all(x.startswith("data:image/png;base64,") or x.startswith("#") for x in d.refs) and len(d.refs) > 4,
          "every src/href in the DOM is a data: URI or a fragment (%d)" % len(d.refs))

    def figure(case, tensor):
        return [f for f in d.figures if f["article_id"] == case and f["data-tensor"] == tensor]

    def codes(f):
        return base64.b64decode(f["data-codes"])

    def check_map(case, tensor, rows, heads, cell_kind):
        fs = figure(case, tensor)
        check(len(fs) == 1, "%s: one %s map in its failure article" % (case[:24], tensor))
        if not fs:
            return
        f = fs[0]
        check(f["data-row-bins"] == str(rows) and f["data-head-bins"] == str(heads),
              "%s %s map: %d row bins x %d head bins (got %s x %s)" % (case[:24], tensor, rows, heads,
                                                                    f["data-row-bins"], f["data-head-bins"]))
        check(f.get("data-decoded") == "%dx%d" % (heads, rows),
              "%s %s: the browser decoded the cell picture as %dx%d (got %s)" % (case[:24], tensor, heads, rows,
                                                                                  f.get("data-decoded")))
        w, h = heads * int(f["data-cell-w"]), rows * int(f["data-cell-h"])
        check(f.get("data-rendered") == "%dx%d" % (w, h),
              "%s %s: drawn at %dx%d px (got %s)" % (case[:24], tensor, w, h, f.get("data-rendered")))
        c = codes(f)
        wrong = [(i // heads, i % heads, c[i]) for i in range(len(c)) if cell_kind(i // heads, i % heads) != (
            "nan" if c[i] == 255 else "inf" if c[i] == 254 else "over" if c[i] >= 100 else "within")]
        check(len(c) == rows * heads and not wrong,
              "%s %s: planted cells over / never written, the others within (mismatches %s)" % (case[:24], tensor,
                                                                                                 wrong[:5]))

    check_map(A, "out_d", 7, 32, lambda r, h: "over" if (r, h) == (3, 5) else "within")
    check_map(A, "lse_d", 7, 32, lambda r, h: "within")
    check_map(B, "lse_p", 33, 16, lambda r, h: "nan" if 10 <= r <= 13 else "within")
    check_map(B, "out_p", 33, 16, lambda r, h: "within")
    check(len([f for f in d.figures if f["article_id"] in (A, B)]) == 6, "A has 2 maps (decode only), B 4")

    d = dom_of(page, "#status=incorrect")
    shown = [r for r in d.rows if "hidden" not in r]
    check(len(shown) == 2 and all(r["data-status"] == "incorrect" for r in shown),
          "#status=incorrect shows the 2 incorrect rows only (got %d)" % len(shown))
    d = dom_of(page, "#feature=causal")
    shown = [r for r in d.rows if "hidden" not in r]
    check(len(shown) == 2 and all("causal" in r["data-id"] for r in shown),
          "#feature=causal shows the 2 rows of the causal case (got %d)" % len(shown))
    d = dom_of(page, "#sort=worst&dir=desc")
    order = [(r["data-id"], os.path.basename(r["data-source"])) for r in d.rows]
    check(order[:2] == [(B, "planted.h5"), (A, "planted.h5")],
          "#sort=worst&dir=desc puts the never-written case first, then the wrong head (got %s)" % order[:2])

    os.makedirs(artifacts, exist_ok=True)
    shot = os.path.join(artifacts, "html_report.png")
    if os.path.exists(shot):
        os.remove(shot)
    with tempfile.TemporaryDirectory() as user_dir:
        r = browse("file://" + page, user_dir, "--window-size=1280,2000", "--hide-scrollbars",
                   "--virtual-time-budget=10000", "--screenshot=" + shot)
    ok = os.path.exists(shot)
    if ok:
        head = open(shot, "rb").read(24)
        ok = head[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", head[16:24]) == (1280, 2000)
    check(ok, "screenshot kept as %s (1280x2000 PNG)" % shot)
    shutil.copyfile(page, os.path.join(artifacts, "html_report.html"))

sys.exit(1 if failures else 0)
