#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Medians and ratios of make bench runs, as a table and an SVG plot.

usage: bench_report.py OUTDIR RUNDIR... [lockstat:RUNDIR]

Each RUNDIR's results.log holds "### RUN <module> fuse_bench ..." sections
with one tab-separated result line each (see fuse_bench.c), and its
host.txt the host's load around the guest run (rig/guest.sh).  A RUNDIR
whose name starts with "icount" ran on QEMU's instruction clock and gets
the path-length table.  Writes OUTDIR/results.md, OUTDIR/results.tsv and
OUTDIR/<topology>.svg, and prints results.md, ending with the verdict
line: how many ratios are noisy.

Noise gates: a wall-clock ratio is printed only when the repeats of both
its sides spread by at most NOISY % (half their range, in % of their
median); otherwise the cell says "noisy".  An instruction-clock cell is
deterministic when its repeats spread by at most EXACT %.
"""
import os
import re
import statistics
import sys

NOISY = 10.0
EXACT = 1.0

FIELDS = ["mode", "workload", "threads", "ops", "secs", "ops_s", "p50", "p99",
          "local_cpu", "local_node", "ctx_req", "ipi_req", "reqs"]
MIXED = ["kind", "mode", "threads", "ops", "secs", "ops_s", "fast_p50",
         "fast_p99", "fast_p999", "slow_p50", "local_cpu", "local_node",
         "moved", "reqs"]


def parse(rundir, mixed=None):
    rows, module, lockstat = [], None, []
    path = os.path.join(rundir, "results.log")
    if not os.path.exists(path):
        return rows, lockstat
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            m = re.match(r"### MODULE (\S+) rc=0", line)
            if m:
                module = m.group(1)
                continue
            m = re.match(r"LOCKSTAT (\S+) (\S+)(?: (\S+))?", line)
            if m:
                cur = {"module": m.group(1), "mode": m.group(2),
                       "workload": m.group(3) or "getattr",
                       "contentions": 0, "acquisitions": 0,
                       "dev_contentions": 0, "dev_acquisitions": 0}
                lockstat.append(cur)
                continue
            if cur is not None and ":" in line and (
                    "&fiq->lock" in line or "fuse_bound_lock_key" in line):
                nums = line.split(":", 1)[1].split()
                pre = "dev_" if "fuse_bound_lock_key" in line else ""
                if len(nums) >= 8:
                    cur[pre + "contentions"] += int(nums[1])
                    cur[pre + "acquisitions"] += int(nums[7])
                continue
            parts = line.split("\t")
            if parts[0] == "mixed" and len(parts) == len(MIXED) and module:
                if mixed is not None:
                    r = dict(zip(MIXED, parts))
                    r["module"] = module
                    mixed.append(r)
                continue
            if len(parts) == len(FIELDS) and module:
                r = dict(zip(FIELDS, parts))
                r["module"] = module
                if float(r["secs"]) > 0:
                    rows.append(r)
    return rows, lockstat


def values(rows, key):
    return [float(r[key]) for r in rows if r[key] not in ("-", "")]


def med(rows, key):
    vals = values(rows, key)
    return statistics.median(vals) if vals else None


def spread_of(vals):
    """Half the range of the runs, in % of their median"""
    if len(vals) < 2 or not statistics.median(vals):
        return None
    return 50 * (max(vals) - min(vals)) / statistics.median(vals)


def spread(rows, key):
    return spread_of(values(rows, key))


def fmt(v, spec="{:.0f}"):
    return "-" if v is None else spec.format(v)


def ratio(a, b):
    return "-" if a is None or b in (None, 0) else f"{a / b:.2f}x"


class Gate:
    """Counts the ratios printed and those left out as noisy"""

    def __init__(self, what="timing tables"):
        self.what = what
        self.ratios = self.noisy = 0
        self.cells = self.inexact = 0
        self.worst = 0.0

    def ratio(self, rows_a, rows_b, key="ops_s"):
        return self.ratio_of(values(rows_a, key), values(rows_b, key))

    def ratio_of(self, va, vb):
        """Median of @va over median of @vb, or "noisy" """
        if not va or not vb or not statistics.median(vb):
            return "-"
        self.ratios += 1
        if max(spread_of(va) or 0, spread_of(vb) or 0) > NOISY:
            self.noisy += 1
            return "noisy"
        return f"{statistics.median(va) / statistics.median(vb):.2f}x"

    def exact(self, rows, key):
        """An instruction-clock cell: its median, flagged when inexact"""
        v = med(rows, key)
        if v is None:
            return v, False
        self.cells += 1
        sp = spread(rows, key) or 0.0
        self.worst = max(self.worst, sp)
        if sp > EXACT:
            self.inexact += 1
            return v, False
        return v, True

    def verdict(self):
        parts = []
        if self.ratios:
            parts.append(f"{self.what}: {self.noisy} of {self.ratios} "
                         f"ratios noisy (repeats spread more than "
                         f"±{NOISY:.0f} %)")
        if self.cells:
            if self.inexact:
                parts.append(f"icount table: {self.inexact} of {self.cells} "
                             f"cells spread more than ±{EXACT:.0f} %")
            else:
                parts.append(f"icount table: all {self.cells} cells within "
                             f"±{EXACT:.0f} % (worst ±{self.worst:.2f} %)")
        return "Verdict: " + ("; ".join(parts) if parts else
                             "no ratios or path lengths in this run") + "."


def host_line(rundir):
    """The host's load around the guest run, from rig/guest.sh's host.txt"""
    h = {}
    try:
        with open(os.path.join(rundir, "host.txt")) as f:
            for line in f:
                k, _, v = line.partition(" ")
                h[k] = v.strip()
    except OSError:
        return "Host load: not recorded."
    return (f"Host ({h.get('host_cpus', '?')} CPUs): load average "
            f"{h.get('load_before', '?')} before the guest, "
            f"{h.get('load_after', '?')} after; during the run "
            f"{h.get('others_pct', '?')} % of host CPU time went to other "
            f"processes, {h.get('steal_pct', '?')} % was stolen.")


WL_REQS = {"getattr": "GETATTR", "read": "READ",
           "dread": "READ in the background, its caller waiting",
           "open": "OPEN, FLUSH, RELEASE",
           "create": "LOOKUP, CREATE, FLUSH, RELEASE, UNLINK"}


def icount_table(topo, rows, gate):
    """Path length on the instruction clock, and what ours adds to stock's
    kernel path (same caller, same daemon: the difference is the kernel's)"""
    groups = {}
    for r in rows:
        r = dict(r)
        # shift=0: one guest nanosecond per instruction; p50 is in µs
        r["ipo"] = float(r["p50"]) * 1000
        groups.setdefault((r["module"], r["mode"], r["workload"],
                           int(r["threads"])), []).append(r)
    n = max((len(v) for v in groups.values()), default=0)
    cols = [("stock", "single", "stock 1 fd"),
            ("stock", "unbound", "stock clone_fd"),
            ("ours", "single", "ours 1 fd"),
            ("ours", "unbound", "ours clone_fd"),
            ("ours", "bound", "ours bound")]
    out = [f"\n### {topo}: guest instructions per operation (QEMU "
           f"instruction clock, 2 vCPUs, one caller; medians of {n} runs)\n",
           "The median round trip of one caller in guest nanoseconds, which "
           "at shift 0 count instructions: caller, kernel and daemon "
           "together, serial since there is one caller. (The mean, elapsed "
           "time over operations, also counts timer ticks and the daemon's "
           "housekeeping and varies by about ±0.5 % between repeats; the "
           "median does not.) Caller and daemon are the same program in every "
           "column, so the Δ columns (ours minus stock clone_fd, or 1 fd "
           "minus 1 fd) are the kernel's own path length. Cells whose "
           f"repeats spread more than ±{EXACT:.0f} % are marked *.\n",
           "| workload | threads | " + " | ".join(c[2] for c in cols) +
           " | Δ 1 fd | Δ clone_fd | Δ bound |",
           "| --- " * (len(cols) + 5) + "|"]
    keys = sorted({(k[2], k[3]) for k in groups})
    for wl, t in keys:
        vals, cells = {}, []
        for module, mode, _ in cols:
            v, ok = gate.exact(groups.get((module, mode, wl, t), []), "ipo")
            vals[(module, mode)] = v
            cells.append(fmt(v) + ("" if ok or v is None else "*"))

        def delta(a, b):
            x, y = vals.get(a), vals.get(b)
            return "-" if x is None or y is None else f"{x - y:+.0f}"
        su = ("stock", "unbound")
        out.append(f"| {wl} | {t} | " + " | ".join(cells) + " | " +
                   " | ".join([delta(("ours", "single"), ("stock", "single")),
                               delta(("ours", "unbound"), su),
                               delta(("ours", "bound"), su)]) + " |")
    out.append("\nRequests per operation: " + "; ".join(
        f"{k} {v}" for k, v in WL_REQS.items()) + ".")
    return out


def svg_plot(path, title, series):
    """series: {label: [(threads, ops_s)]}; a plain line chart."""
    w, h, ml, mb, mt, mr = 640, 400, 70, 40, 30, 170
    xs = sorted({x for pts in series.values() for x, _ in pts}) or [1]
    ymax = max([y for pts in series.values() for _, y in pts] or [1]) * 1.1
    xmin, xmax = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
              "#8c564b", "#e377c2"]

    def px(x):
        return ml + (x - xmin) / (xmax - xmin) * (w - ml - mr)

    def py(y):
        return h - mb - y / ymax * (h - mb - mt)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="18" text-anchor="middle">{title}</text>',
           f'<line x1="{ml}" y1="{h - mb}" x2="{w - mr}" y2="{h - mb}" stroke="black"/>',
           f'<line x1="{ml}" y1="{mt}" x2="{ml}" y2="{h - mb}" stroke="black"/>',
           f'<text x="{(ml + w - mr) / 2}" y="{h - 8}" text-anchor="middle">load threads</text>',
           f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">ops/s</text>']
    for x in xs:
        out.append(f'<text x="{px(x)}" y="{h - mb + 15}" text-anchor="middle">{x}</text>')
    for i in range(5):
        y = ymax * i / 4
        out.append(f'<text x="{ml - 5}" y="{py(y) + 4}" text-anchor="end">{y:.0f}</text>')
    for i, (label, pts) in enumerate(sorted(series.items())):
        c = colors[i % len(colors)]
        pts = sorted(pts)
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="2"/>')
        for x, y in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
        ly = mt + 16 * i + 10
        out.append(f'<line x1="{w - mr + 10}" y1="{ly}" x2="{w - mr + 30}" y2="{ly}" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{w - mr + 35}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def mixed_table(topo, rows, gate):
    """Four callers per CPU, 1 % of requests held 20 ms by the daemon"""
    groups = {}
    for r in rows:
        groups.setdefault((r["module"], r["mode"]), []).append(r)
    n = max(len(v) for v in groups.values())
    out = [f"\n### {topo}: slow requests among fast ones (four callers per "
           f"CPU, 1 request in 100 takes 20 ms; medians of {n} runs)\n",
           "| fuse.ko | clones | ops/s | fast p50 µs | fast p99 µs | "
           "fast p99.9 µs | slow p50 ms | own CPU % | moved | ± % of runs |",
           "| --- " * 10 + "|"]
    names = {"unbound": "clone_fd, unbound", "bound": "bound to CPUs"}
    for module, mode in [("stock", "unbound"), ("ours", "unbound"),
                         ("ours", "bound")]:
        v = groups.get((module, mode))
        if not v:
            continue
        slow = med(v, "slow_p50")
        out.append(f"| {module} | {names[mode]} | {fmt(med(v, 'ops_s'))} | "
                   f"{fmt(med(v, 'fast_p50'), '{:.1f}')} | "
                   f"{fmt(med(v, 'fast_p99'), '{:.1f}')} | "
                   f"{fmt(med(v, 'fast_p999'), '{:.1f}')} | "
                   f"{fmt(slow / 1000 if slow else None, '{:.1f}')} | "
                   f"{fmt(med(v, 'local_cpu'), '{:.1f}')} | "
                   f"{fmt(med(v, 'moved'))} | "
                   f"{fmt(spread(v, 'fast_p99'), '{:.0f}')} |")
    ob = groups.get(("ours", "bound"), [])
    if ob:
        out.append("\nFast p99, stock clone_fd over ours bound: "
                   f"{gate.ratio(groups.get(('stock', 'unbound'), []), ob, 'fast_p99')}"
                   " (above 1: ours bound is faster).")
    return out


def main():
    outdir = sys.argv[1]
    gate = Gate()
    md = []
    tsv = ["topology\tmodule\t" + "\t".join(FIELDS)]
    for arg in sys.argv[2:]:
        if arg.startswith("lockstat:"):
            ldir = arg.split(":", 1)[1]
            mixed = []
            rows, ls = parse(ldir, mixed)
            md.append(f"\n### Input-queue lock contention, "
                      f"{os.path.basename(os.path.normpath(ldir))} "
                      "(CONFIG_LOCK_STAT)\n")
            md.append("getattr: 64 callers, instant handler; mixed: 4 "
                      "callers per vCPU, one request in 100 held 20 ms by "
                      "its handler. The shared queue's lock (`&fiq->lock`) "
                      "and the bound devices' queue locks "
                      "(`fuse_bound_lock_key`), all instances summed.\n")
            md.append("| workload | module | mode | shared: contentions / "
                      "acquisitions | devices: contentions / acquisitions | "
                      "all contentions per 1000 requests |")
            md.append("| --- | --- | --- | --- | --- | --- |")
            for e in ls:
                src = mixed if e["workload"] == "mixed" else rows
                reqs = [int(r["reqs"]) for r in src
                        if r["module"] == e["module"] and
                        r["mode"] == e["mode"] and
                        r.get("workload", "mixed") == e["workload"]]
                n = reqs[0] if reqs else 0
                con = e["contentions"] + e["dev_contentions"]
                md.append(f"| {e['workload']} | {e['module']} | {e['mode']} | "
                          f"{e['contentions']} / {e['acquisitions']} | "
                          f"{e['dev_contentions']} / {e['dev_acquisitions']} | "
                          f"{1000 * con / n if n else 0:.2f} |")
            continue
        topo = os.path.basename(os.path.normpath(arg))
        mixed = []
        rows, _ = parse(arg, mixed)
        for r in rows:
            tsv.append(topo + "\t" + r["module"] + "\t" +
                       "\t".join(r[k] for k in FIELDS))
        if topo.startswith("icount"):
            md.extend(icount_table(topo, rows, gate))
            md.append("\n" + host_line(arg))
            continue
        groups = {}
        for r in rows:
            groups.setdefault((r["module"], r["mode"], r["workload"],
                               int(r["threads"])), []).append(r)

        def g(module, mode, wl, t, key):
            return med(groups.get((module, mode, wl, t), []), key)

        md.append(f"\n### {topo}: median ops/s of {max((len(v) for v in groups.values()), default=0)} runs\n")
        md.append(host_line(arg) + f" Ratios whose repeats spread more "
                  f"than ±{NOISY:.0f} % say \"noisy\".\n")
        md.append("| workload | threads | stock 1 fd | stock clone_fd | ours 1 fd | "
                  "ours clone_fd | ours bound | bound / stock clone_fd | "
                  "ours / stock (1 fd) | ours / stock (clone_fd) | own CPU % "
                  "stock clone_fd → bound | p99 µs stock clone_fd → bound | "
                  "IPIs/req stock clone_fd → bound | ± % of runs "
                  "(stock clone_fd, ours clone_fd, ours bound) |")
        md.append("| --- " * 14 + "|")
        keys = sorted({(k[2], k[3]) for k in groups if k[1] != "ping-pong"
                       and not k[1].startswith("pipe")})
        for wl, t in keys:
            s1 = g("stock", "single", wl, t, "ops_s")
            su = g("stock", "unbound", wl, t, "ops_s")
            o1 = g("ours", "single", wl, t, "ops_s")
            ou = g("ours", "unbound", wl, t, "ops_s")
            ob = g("ours", "bound", wl, t, "ops_s")

            def rows_of(module, mode):
                return groups.get((module, mode, wl, t), [])
            r_bs = gate.ratio(rows_of("ours", "bound"), rows_of("stock", "unbound"))
            r_11 = gate.ratio(rows_of("ours", "single"), rows_of("stock", "single"))
            r_uu = gate.ratio(rows_of("ours", "unbound"), rows_of("stock", "unbound"))
            md.append(
                f"| {wl} | {t} | {fmt(s1)} | {fmt(su)} | {fmt(o1)} | {fmt(ou)} | "
                f"{fmt(ob)} | {r_bs} | {r_11} | {r_uu} | "
                f"{fmt(g('stock', 'unbound', wl, t, 'local_cpu'), '{:.1f}')} → "
                f"{fmt(g('ours', 'bound', wl, t, 'local_cpu'), '{:.1f}')} | "
                f"{fmt(g('stock', 'unbound', wl, t, 'p99'), '{:.1f}')} → "
                f"{fmt(g('ours', 'bound', wl, t, 'p99'), '{:.1f}')} | "
                f"{fmt(g('stock', 'unbound', wl, t, 'ipi_req'), '{:.2f}')} → "
                f"{fmt(g('ours', 'bound', wl, t, 'ipi_req'), '{:.2f}')} | "
                f"{fmt(spread(rows_of('stock', 'unbound'), 'ops_s'), '{:.1f}')}, "
                f"{fmt(spread(rows_of('ours', 'unbound'), 'ops_s'), '{:.1f}')}, "
                f"{fmt(spread(rows_of('ours', 'bound'), 'ops_s'), '{:.1f}')} |")
        pipes = [(m, med(v, "ops_s"), med(v, "p50")) for (mod, m, wl, t), v
                 in groups.items() if m.startswith("pipe")]
        seen = set()
        for m, ops, p50 in sorted(pipes):
            if m in seen:
                continue
            seen.add(m)
            md.append(f"\nFloor: {m} ping-pong {fmt(ops)} round trips/s "
                      f"({fmt(p50, '{:.1f}')} µs each).")
        series = {}
        for (module, mode, wl, t), v in groups.items():
            if wl == "getattr":
                series.setdefault(f"{module} {mode}", []).append((t, med(v, "ops_s")))
        svg_plot(os.path.join(outdir, f"{topo}.svg"),
                 f"getattr ops/s, {topo}", series)
        md.append(f"\nPlot: `{topo}.svg` (getattr ops/s against load threads).")
        if mixed:
            md.extend(mixed_table(topo, mixed, gate))
    md.append("\n" + gate.verdict())
    text = "\n".join(md) + "\n"
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(outdir, "results.tsv"), "w") as f:
        f.write("\n".join(tsv) + "\n")
    print(text)


if __name__ == "__main__":
    main()
