#!/usr/bin/env python3
"""Item time against item size, from the spans `podcheck bench kernel` writes with PODCHECK_BENCH_SPANS=<file>
(kernels/bench/timeline_summary.hpp, spans_csv). For each launch mode in the file and each side, a least-squares fit
item_us = a + b * tiles, tiles = ceil(kv_visible / TK): a is what an item costs beyond its tiles (its Q tile, the first
tile's unoverlapped softmax, the last P V, the epilogue), b the steady cost of one tile. Also: how busy the CTAs were
with that side's items, and median item times by tile count. Where the spans carry the SM clock at their ends (the
clk1 column, clock64; v3.15's timeline), the launch's SM clock (median over CTAs of clock cycles over nanoseconds
between a CTA's first and last span end) and b in cycles: comparable with the loop bench's cycles per tile. Where
they carry pod_ws_kernel's phases of each prefill item (c_ready .. p_last, us from the item's start; v3.15), the
medians of where an item's time goes (waiting for its index and reading its item, its Q, its tiles, its epilogue;
when its producer had the index, issued Q, the first and the last tile), each CTA's first item apart from the later
ones (the launch's start costs the first more), and a fit of the tiles' part alone against
the tile count: that fit's slope is the steady tile, free of what the items' starts and ends cost. (The fit over
whole items is not: a longest-first order starts items of like length together, in waves whose fixed costs differ,
and mixes those into the slope; notebook step 32.)

With --by-order, also each side's items grouped by their place in their CTA's sequence (each CTA's first item, its
second, ...), a fit or a median per group: the waves a longest-first order makes, each with its own fixed cost.

With --by-sm, also each side's time per tile by SM (the `sm` column: the SM its CTA ran on), and the SMs whose items
took over --slow (1.25) times the median SM's per tile: whether a slow launch is slow on a fixed set of SMs.

With --ends, also when each CTA's first and second prefill items end their tile loops (the launch's clock: t0_us +
c_tiles), min / median / max by the parity of their tile count, with the producer's last copy (median): whether
the first wave's items end together whatever their length (notebook step 39).

  spans_fit.py FILE [--tk 64] [--by-order] [--by-sm [--slow 1.25]] [--ends]
                                  (TK: the KV tokens per tile of the kernel that ran; pod_ws_kernel: PODCHECK_WS_TK)
  spans_fit.py --self-test        (recovers a known line, and a known set of slow SMs, from synthetic spans; exit 1 if not)
Notebook: docs/KERNEL.md steps 26 and 27."""
import argparse, collections, csv, io, math, sys

MODES = {0: "fused", 1: "prefill alone", 2: "decode alone"}


def clock_mhz(rows):
    """The SM clock of one launch's spans: per CTA, (last clk1 - first clk1) / (last end - first end) over its
    clocked span ends, in MHz; the median over the CTAs with two or more (None where no span has a clock)."""
    ends = collections.defaultdict(list)
    for r in rows:
        c = int(r.get("clk1") or 0)
        if c > 0:
            ends[r["cta"]].append((float(r["t0_us"]) + float(r["dur_us"]), c))
    rates = []
    for e in ends.values():
        e.sort()
        if len(e) >= 2 and e[-1][0] - e[0][0] > 1.0:  # at least a microsecond apart
            rates.append((e[-1][1] - e[0][1]) / (e[-1][0] - e[0][0]))
    return sorted(rates)[len(rates) // 2] if rates else None


PHASES = ("c_ready", "c_q", "c_tiles", "p_item", "p_q", "p_tile0", "p_last")


def line_fit(x, y):
    n = len(x); mx = sum(x) / n; my = sum(y) / n
    sxx = sum((a - mx) ** 2 for a in x)
    b = sum((a - mx) * (c - my) for a, c in zip(x, y)) / sxx if sxx else 0.0
    return my - b * mx, b


def tiles_of(r, tk):
    """An item's KV tiles (at least one)."""
    return max(1, math.ceil(int(r["kv_visible"]) / tk))


def upper_median(v):
    return sorted(v)[len(v) // 2] if v else float("nan")


def cta_sequences(rows, keep):
    """The item spans that keep(r) admits, per (mode, side, CTA) in the order they started."""
    seqs = collections.defaultdict(list)
    for r in rows:
        if int(r["item"]) >= 0 and keep(r):
            seqs[(int(r["mode"]), int(r["side"]), r["cta"])].append(r)
    for rs in seqs.values():
        rs.sort(key=lambda r: float(r["t0_us"]))
    return seqs


def phases(rows, tk):
    """Per mode, for each CTA's first prefill item and for the later ones apart (the launch's start costs the first
    more): the phase medians (us) and the fit of the tiles' part (c_tiles - c_q) on tiles."""
    out = []
    seqs = cta_sequences(rows, lambda r: int(r["side"]) == 0 and (r.get("c_tiles") or "") != "" and
                         (r.get("c_q") or "") != "")
    by_mode = collections.defaultdict(list)
    for (mode, _, _), rs in seqs.items():
        for i, r in enumerate(rs):
            by_mode[(mode, i > 0)].append(r)
    for (mode, later), rs in sorted(by_mode.items()):
        get = lambda r, k: float(r[k]) if (r.get(k) or "") != "" else None
        parts = {
            "index and item": [get(r, "c_ready") for r in rs],
            "Q": [get(r, "c_q") - get(r, "c_ready") for r in rs],
            "tiles": [get(r, "c_tiles") - get(r, "c_q") for r in rs],
            "epilogue": [float(r["dur_us"]) - get(r, "c_tiles") for r in rs],
        }
        prod = {k: [v for v in (get(r, k) for r in rs) if v is not None] for k in ("p_item", "p_q", "p_tile0", "p_last")}
        x = [tiles_of(r, tk) for r in rs if int(r["kv_visible"]) >= 0]
        y = [get(r, "c_tiles") - get(r, "c_q") for r in rs if int(r["kv_visible"]) >= 0]
        a, b = line_fit(x, y) if len(x) >= 2 else (float("nan"), float("nan"))
        out.append(dict(mode=mode, later=later, n=len(rs), parts={k: upper_median(v) for k, v in parts.items()},
                        prod={k: upper_median(v) for k, v in prod.items()}, a=a, b=b, mhz=clock_mhz(
                            [r for r in rows if int(r["mode"]) == mode])))
    return out


def describe_phases(f):
    parts = ", ".join(f"{k} {v:.2f}" for k, v in f["parts"].items())
    prod = ", ".join(f"{k[2:]} {v:+.2f}" for k, v in f["prod"].items())
    cyc = f"; {f['b'] * f['mhz']:.0f} cycles per tile" if f.get("mhz") else ""
    which = "later items" if f["later"] else "each CTA's first item"
    return (f"{MODES.get(f['mode'], f['mode'])}, prefill phases, {which} ({f['n']}, medians, us): {parts}; producer "
            f"(from the item's start): {prod}\n    tiles' part alone: {f['a']:.2f} + {f['b']:.3f} x tiles{cyc}")


def fit(rows, tk):
    out = []
    by_mode = collections.defaultdict(list)
    for r in rows:
        by_mode[int(r["mode"])].append(r)
    for mode, rs in sorted(by_mode.items()):
        lives = [r for r in rs if int(r["item"]) < 0]
        mhz = clock_mhz(rs)
        span = max(float(r["t0_us"]) + float(r["dur_us"]) for r in rs)
        for side in (0, 1):
            it = [r for r in rs if int(r["item"]) >= 0 and int(r["side"]) == side and int(r["kv_visible"]) >= 0]
            if len(it) < 2:
                continue
            x = [tiles_of(r, tk) for r in it]
            y = [float(r["dur_us"]) for r in it]
            n = len(x); mx = sum(x) / n
            a, b = line_fit(x, y)
            rms = math.sqrt(sum((c - a - b * xx) ** 2 for xx, c in zip(x, y)) / n)
            ctas = len(lives) or len({r["cta"] for r in it})
            med = collections.defaultdict(list)
            for xx, c in zip(x, y):
                med[xx].append(c)
            out.append(dict(mode=mode, side=side, n=n, tiles_min=min(x), tiles_max=max(x), tiles_mean=mx, a=a, b=b,
                            rms=rms, span=span, ctas=ctas, busy=sum(y) / (ctas * span), fixed=a * n / sum(y), mhz=mhz,
                            medians={k: upper_median(v) for k, v in med.items()}))
    return out


def by_order(rows, tk):
    """Per mode and side: the items grouped by their index in their CTA's sequence (by start time), each group's
    count, tile and start ranges, and its line fit (or, with one tile count, its median)."""
    out = []
    groups = collections.defaultdict(list)
    for (mode, side, _), rs in cta_sequences(rows, lambda r: int(r["kv_visible"]) >= 0).items():
        for i, r in enumerate(rs):
            groups[(mode, side, i)].append((tiles_of(r, tk), float(r["dur_us"]), float(r["t0_us"])))
    for (mode, side, i), v in sorted(groups.items()):
        x = [a for a, _, _ in v]; y = [b for _, b, _ in v]
        a, b = line_fit(x, y) if len(set(x)) > 1 else (upper_median(y), None)
        out.append(dict(mode=mode, side=side, order=i, n=len(v), tiles=(min(x), max(x)),
                        start=(min(t for *_, t in v), max(t for *_, t in v)), a=a, b=b))
    return out


def describe_order(g):
    side = "prefill" if g["side"] == 0 else "decode"
    what = (f"item us = {g['a']:.2f} + {g['b']:.3f} x tiles" if g["b"] is not None
            else f"median {g['a']:.2f} us")
    return (f"{MODES.get(g['mode'], g['mode'])}, {side}, each CTA's item {g['order']}: {g['n']} items of "
            f"{g['tiles'][0]}-{g['tiles'][1]} tiles starting {g['start'][0]:.1f}-{g['start'][1]:.1f} us; {what}")


def by_sm(rows, tk, slow):
    """Per mode and side: each SM's us per tile over its items, the median SM, and the SMs over slow x the median."""
    out = []
    groups = collections.defaultdict(lambda: collections.defaultdict(lambda: [0.0, 0, 0]))
    for r in rows:
        if int(r["item"]) < 0 or int(r["kv_visible"]) < 0:
            continue
        acc = groups[(int(r["mode"]), int(r["side"]))][int(r["sm"])]
        acc[0] += float(r["dur_us"])
        acc[1] += tiles_of(r, tk)
        acc[2] += 1
    for (mode, side), sms in sorted(groups.items()):
        per = {sm: us / tiles for sm, (us, tiles, _) in sms.items()}
        ordered = sorted(per.values())
        med = ordered[len(ordered) // 2]
        out.append(dict(mode=mode, side=side, sms=len(per), median=med, per=per,
                        slow=sorted(sm for sm, v in per.items() if v > slow * med)))
    return out


def ends(rows, tk):
    """Per mode, for each CTA's first and second prefill items (by start), grouped by the parity of their tile count:
    when their tile loops end (t0_us + c_tiles, us on the launch's clock), min / median / max, and the median time of
    the producer's last copy (t0_us + p_last)."""
    seqs = cta_sequences(rows, lambda r: int(r["side"]) == 0 and int(r["kv_visible"]) >= 0 and
                         (r.get("c_tiles") or "") != "")
    groups = collections.defaultdict(list)
    for (mode, _, _), rs in seqs.items():
        for order, r in enumerate(rs[:2]):
            tiles = tiles_of(r, tk)
            last = float(r["p_last"]) if (r.get("p_last") or "") != "" else float("nan")
            groups[(mode, order, tiles % 2)].append((float(r["t0_us"]) + float(r["c_tiles"]), float(r["t0_us"]) + last))
    out = []
    for (mode, order, parity), v in sorted(groups.items()):
        e = sorted(x[0] for x in v)
        out.append(dict(mode=mode, order=order, parity=parity, n=len(v), lo=e[0], med=upper_median(e), hi=e[-1],
                        last=upper_median([x[1] for x in v])))
    return out


def describe_ends(g):
    return (f"{MODES.get(g['mode'], g['mode'])}, prefill, each CTA's item {g['order']}, "
            f"{'even' if g['parity'] == 0 else 'odd'} tile counts ({g['n']}): tiles end at {g['lo']:.1f} / "
            f"{g['med']:.1f} / {g['hi']:.1f} us (min / median / max); producer's last copy {g['last']:.1f}")


def describe_sm(g, slow):
    side = "prefill" if g["side"] == 0 else "decode"
    worst = max(g["per"].values())
    ids = " ".join(str(sm) for sm in g["slow"]) or "none"
    return (f"{MODES.get(g['mode'], g['mode'])}, {side}, by SM: {g['sms']} SMs, median {g['median']:.3f} us per tile, "
            f"slowest {worst / g['median']:.2f}x; over {slow:.2f}x the median: {len(g['slow'])} SMs: {ids}")


def describe(f):
    side = "prefill" if f["side"] == 0 else "decode"
    picks = "  ".join(f"{k}: {v:.1f}" for k, v in sorted(f["medians"].items()) if k in (1, 2, 4, 8, 16, 32, 64, 128))
    return (f"{MODES.get(f['mode'], f['mode'])}, {side}: {f['n']} items of {f['tiles_min']}-{f['tiles_max']} tiles "
            f"(mean {f['tiles_mean']:.1f}); item us = {f['a']:.2f} + {f['b']:.3f} x tiles (rms residual {f['rms']:.2f}); "
            f"fixed part {f['fixed']:.1%} of item time; items {f['busy']:.1%} of {f['ctas']} CTAs x {f['span']:.1f} us"
            + (f"; SM clock {f['mhz']:.0f} MHz: a = {f['a'] * f['mhz']:.0f} cycles, b = {f['b'] * f['mhz']:.0f} cycles per tile"
               if f.get("mhz") else "") + "\n"
            f"    median us by tiles: {picks}")


def read(stream):
    # appended runs repeat nothing but data; a header line anywhere else is skipped
    lines = [l for i, l in enumerate(stream) if i == 0 or not l.startswith("mode,")]
    return list(csv.DictReader(lines))


def self_test():
    a, b, tk = 2.5, 1.25, 64
    buf = io.StringIO()
    buf.write("mode,side,item,cta,sm,role,warpgroups,t0_us,dur_us,kv_begin,kv_end,kv_visible,row_begin,nchunks\n")
    buf.write("1,0,-1,0,0,0,2,0.000,200.000,-1,-1,-1,-1,-1\n")
    for i in range(1, 33):
        buf.write(f"1,0,{i},0,0,0,2,{i}.000,{a + b * i:.3f},0,2048,{tk * i - 7},0,1\n")  # 64 i - 7 keys: i tiles
    fits = fit(read(io.StringIO(buf.getvalue())), tk)
    ok = len(fits) == 1 and abs(fits[0]["a"] - a) < 1e-6 and abs(fits[0]["b"] - b) < 1e-6 and fits[0]["tiles_max"] == 32
    ok = ok and fits[0]["mhz"] is None  # no clk1 column: no clock
    print(("self-test passed: " if ok else "self-test FAILED: ") + (describe(fits[0]) if fits else "no fit"))
    # the SM clock: two CTAs at 1,600 and 1,400 MHz and one at 1,800 (clk1 from a per-CTA origin), median 1,600, so
    # b = 1.25 us is 2,000 cycles; a CTA with one clocked end has no rate
    buf = io.StringIO()
    buf.write("mode,side,item,cta,sm,role,warpgroups,t0_us,dur_us,kv_begin,kv_end,kv_visible,row_begin,nchunks,clk1\n")
    for cta, mhz in enumerate((1600.0, 1400.0, 1800.0, 1000.0)):
        for i in range(1, 9):
            t0 = sum(a + b * j for j in range(1, i))
            clk = 0 if cta == 3 and i > 1 else int(10 ** 9 * (cta + 1) + (t0 + a + b * i) * mhz)
            buf.write(f"1,0,{i},{cta},{cta},0,2,{t0:.3f},{a + b * i:.3f},0,2048,{tk * i},0,1,{clk}\n")
    fits = fit(read(io.StringIO(buf.getvalue())), tk)
    ok_clk = len(fits) == 1 and fits[0]["mhz"] is not None and abs(fits[0]["mhz"] - 1600) < 0.1 and \
        "b = 2000 cycles per tile" in describe(fits[0])
    print(("self-test clock passed: " if ok_clk else "self-test clock FAILED: ") + (describe(fits[0]) if fits else "no fit"))
    ok = ok and ok_clk
    # the phases: items of i tiles whose tiles' part is 0.4 + 1.1 i us after 2.0 us of index, item and Q; epilogue 0.8
    buf = io.StringIO()
    buf.write("mode,side,item,cta,sm,role,warpgroups,t0_us,dur_us,kv_begin,kv_end,kv_visible,row_begin,nchunks,clk1,"
              + ",".join(PHASES) + "\n")
    # on two CTAs, items one after another; each CTA's first waits 4 us more for its item (the launch's start); the
    # later ones are items 3 .. 16, whose tiles' parts have the median of item 10
    t = [0.0, 0.0]
    for i in range(1, 17):
        cta, tiles = i % 2, 0.4 + 1.1 * i
        ready = 1.5 + (4.0 if t[cta] == 0.0 else 0.0)
        dur = ready + 0.5 + tiles + 0.8
        buf.write(f"1,0,{i},{cta},{cta},0,2,{t[cta]:.3f},{dur:.3f},0,2048,{tk * i},0,1,0,"
                  f"{ready:.3f},{ready + 0.5:.3f},{ready + 0.5 + tiles:.3f},-3.000,-2.500,-2.000,{tiles - 5:.3f}\n")
        t[cta] += dur
    ph = phases(read(io.StringIO(buf.getvalue())), tk)
    ok_ph = len(ph) == 2 and [f["n"] for f in ph] == [2, 14] and abs(ph[0]["parts"]["index and item"] - 5.5) < 1e-6
    f = ph[1] if len(ph) == 2 else {}
    ok_ph = ok_ph and abs(f["b"] - 1.1) < 1e-6 and abs(f["a"] - 0.4) < 1e-6 and \
        abs(f["parts"]["index and item"] - 1.5) < 1e-6 and abs(f["parts"]["epilogue"] - 0.8) < 1e-6 and \
        abs(f["parts"]["tiles"] - (0.4 + 1.1 * 10)) < 1e-6 and \
        abs(f["parts"]["Q"] - 0.5) < 1e-6 and abs(f["prod"]["p_item"] + 3.0) < 1e-6
    print(("self-test phases passed: " if ok_ph else "self-test phases FAILED: ") +
          (" | ".join(describe_phases(x) for x in ph) if ph else "none"))
    ok = ok and ok_ph
    # by order: 4 CTAs, first items of 20-23 tiles at 10 + 1.1 x tiles, second items of 4-7 tiles at 5 + 1.1 x tiles
    # (the fit over all items: a slope over 1.1); each group's own fit recovers its line
    buf = io.StringIO()
    buf.write("mode,side,item,cta,sm,role,warpgroups,t0_us,dur_us,kv_begin,kv_end,kv_visible,row_begin,nchunks\n")
    for cta in range(4):
        d0 = 10 + 1.1 * (20 + cta)
        buf.write(f"1,0,{2 * cta},{cta},{cta},0,2,0.500,{d0:.3f},0,2048,{tk * (20 + cta)},0,1\n")
        buf.write(f"1,0,{2 * cta + 1},{cta},{cta},0,2,{0.5 + d0:.3f},{5 + 1.1 * (4 + cta):.3f},0,2048,{tk * (4 + cta)},0,1\n")
    rows_o = read(io.StringIO(buf.getvalue()))
    go = by_order(rows_o, tk)
    whole = fit(rows_o, tk)
    ok_o = len(go) == 2 and all(abs(g["b"] - 1.1) < 1e-6 for g in go) and abs(go[0]["a"] - 10) < 1e-6 and \
        abs(go[1]["a"] - 5) < 1e-6 and whole[0]["b"] > 1.2
    print(("self-test by order passed: " if ok_o else "self-test by order FAILED: ") +
          "; ".join(describe_order(g) for g in go) + f" (whole fit's slope {whole[0]['b']:.3f})")
    ok = ok and ok_o
    # ends: 4 CTAs whose first items (20-23 tiles) all end their tiles at 30 us from starts of 0.5 us, second items (4-7
    # tiles) ending 10 + tiles us later; the producer's last copy 5 us before each end
    buf = io.StringIO()
    buf.write("mode,side,item,cta,sm,role,warpgroups,t0_us,dur_us,kv_begin,kv_end,kv_visible,row_begin,nchunks,clk1,"
              + ",".join(PHASES) + "\n")
    for cta in range(4):
        n0, n1 = 20 + cta, 4 + cta
        buf.write(f"1,0,{2 * cta},{cta},{cta},0,2,0.500,31.000,0,2048,{tk * n0},0,1,0,1.0,2.0,29.500,0.1,0.2,0.3,24.500\n")
        buf.write(f"1,0,{2 * cta + 1},{cta},{cta},0,2,31.500,{12 + n1:.3f},0,2048,{tk * n1},0,1,0,0.2,0.3,"
                  f"{8.5 + n1:.3f},0.1,0.2,0.3,{3.5 + n1:.3f}\n")
    ge = ends(read(io.StringIO(buf.getvalue())), tk)
    ok_e = [(g["order"], g["parity"], g["n"]) for g in ge] == [(0, 0, 2), (0, 1, 2), (1, 0, 2), (1, 1, 2)] and \
        all(abs(g["lo"] - 30) < 1e-6 and abs(g["hi"] - 30) < 1e-6 and abs(g["last"] - 25) < 1e-6 for g in ge[:2]) and \
        abs(ge[2]["lo"] - 44) < 1e-6 and abs(ge[2]["hi"] - 46) < 1e-6 and abs(ge[3]["lo"] - 45) < 1e-6 and \
        abs(ge[3]["hi"] - 47) < 1e-6 and abs(ge[3]["last"] - 42) < 1e-6
    print(("self-test ends passed: " if ok_e else "self-test ends FAILED: ") + "; ".join(describe_ends(g) for g in ge))
    ok = ok and ok_e
    # by SM: decode items of one tile each on SMs 0-9, SMs 3 and 7 at twice the time per tile, SM 5 at 1.2 times
    buf = io.StringIO()
    buf.write("mode,side,item,cta,sm,role,warpgroups,t0_us,dur_us,kv_begin,kv_end,kv_visible,row_begin,nchunks\n")
    for sm in range(10):
        for i in range(4):
            us = 10.0 * (2.0 if sm in (3, 7) else 1.2 if sm == 5 else 1.0) * (i + 1)
            buf.write(f"0,1,{4 * sm + i},{sm},{sm},1,1,0.000,{us:.3f},0,{64 * (i + 1)},{64 * (i + 1)},0,1\n")
    groups = by_sm(read(io.StringIO(buf.getvalue())), tk, 1.25)
    ok_sm = len(groups) == 1 and groups[0]["slow"] == [3, 7] and abs(groups[0]["median"] - 10.0) < 1e-9
    print(("self-test by SM passed: " if ok_sm else "self-test by SM FAILED: ") +
          (describe_sm(groups[0], 1.25) if groups else "no group"))
    return 0 if ok and ok_sm else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?")
    ap.add_argument("--tk", type=int, default=64)
    ap.add_argument("--by-order", action="store_true")
    ap.add_argument("--by-sm", action="store_true")
    ap.add_argument("--slow", type=float, default=1.25)
    ap.add_argument("--ends", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    o = ap.parse_args()
    if o.self_test:
        return self_test()
    if not o.file:
        ap.error("a spans file (or --self-test)")
    try:
        with open(o.file) as f:
            rows = read(f)
        fits = fit(rows, o.tk)
    except (OSError, KeyError, ValueError) as e:
        print(f"spans_fit: {o.file}: {e}", file=sys.stderr)
        return 2
    if not fits:
        print(f"spans_fit: {o.file}: no side with two or more items", file=sys.stderr)
        return 2
    for f in fits:
        print(describe(f))
    for f in phases(rows, o.tk):
        print(describe_phases(f))
    if o.by_order:
        for g in by_order(rows, o.tk):
            print(describe_order(g))
    if o.by_sm:
        for g in by_sm(rows, o.tk, o.slow):
            print(describe_sm(g, o.slow))
    if o.ends:
        for g in ends(rows, o.tk):
            print(describe_ends(g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
