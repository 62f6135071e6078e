#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The fio tables of make bench (rig/fio-bench.sh).

usage: fio_report.py OUT.md "TITLE|RUNDIR"...

Reads the "@fio MODE WORKLOAD JOBS DEPTH MiB/s IOPS p99-us own-% IPIs/op"
lines that fuse_fio_bench.sh printed in each RUNDIR/results.log (several
repeats), and writes, under TITLE, one markdown table per daemon for the
random reads and one for the metadata run: medians, with the spread
(min-max) of the throughput, and the ratios that carry over to other
hardware: ours over stock, and each over the no-FUSE ceiling.  As in
bench_report.py, an ours-over-stock ratio whose repeats spread more than
±10 % is printed as "noisy", each section states the host's load (the
RUNDIR's host.txt), and the report ends with a verdict line.
"""
import os
import statistics
import sys

sys.dont_write_bytecode = True
from bench_report import Gate, host_line  # noqa: E402

GATE = Gate("fio tables")

DAEMONS = [("passthrough_ll", "ll-stock", "ll-ours",
            "stock libfuse `-o clone_fd`, stock fuse.ko",
            "our libfuse `-o clone_bind=cpu`, ours"),
           ("passthrough_hp", "hp-stock", "hp-ours",
            "`--clone-fd`, stock fuse.ko",
            "`-o clone_bind=cpu`, ours")]


def load(rundir):
    runs = {}
    with open(os.path.join(rundir, "results.log"), errors="replace") as f:
        for line in f:
            p = line.split()
            if len(p) != 10 or p[0] != "@fio":
                continue
            key = (p[1], p[2], int(p[3]), int(p[4]))
            runs.setdefault(key, []).append(p[5:])
    return runs


def num(v):
    try:
        return float(v)
    except ValueError:
        return None


def med(runs, key, col):
    vals = [num(r[col]) for r in runs.get(key, [])]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def spread(runs, key, col):
    vals = [num(r[col]) for r in runs.get(key, [])]
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    m = statistics.median(vals)
    if len(vals) == 1:
        return f"{m:.0f}" if m >= 100 else f"{m:.1f}"
    fmt = "{:.0f}" if m >= 100 else "{:.1f}"
    return (fmt.format(m) + " (" + fmt.format(min(vals)) + "-" +
            fmt.format(max(vals)) + ")")


def vals(runs, key, col):
    return [v for v in (num(r[col]) for r in runs.get(key, []))
            if v is not None]


def ratio(runs, ka, kb, col):
    return GATE.ratio_of(vals(runs, ka, col), vals(runs, kb, col))


def pct(a, b):
    return f"{a * 100 / b:.0f} %" if a is not None and b else "-"


def fmt(v, digits=0):
    if v is None:
        return "-"
    return f"{v:.{digits}f}"


def p99(v):
    if v is None:
        return "-"
    return "<1" if v < 1 else f"{v:.0f}"


def section(title, rundir):
    runs = load(rundir)
    if not runs:
        print(f"no @fio lines in {rundir}/results.log", file=sys.stderr)
        return None
    reps = max(len(v) for v in runs.values())
    lines = [f"### fio: {title}", "", host_line(rundir), "",
             "own CPU %: the share of ours' requests read on the CPU that "
             "issued them, counted in an untimed rerun (1 s for the reads) "
             "with a hist trigger on fuse:fuse_request_read, which is never "
             "attached while a run is timed: it costs 3 to 5 % of a "
             "request.", ""]
    rr = sorted({(k[2], k[3]) for k in runs if k[1] == "randread"})
    for name, stock, ours, sdesc, odesc in DAEMONS:
        if not any(k[0] in (stock, ours) for k in runs):
            continue
        lines += [f"#### {name}: 4 KiB random reads, direct=1, libaio "
                  f"(MiB/s: median of {reps} runs, min-max)", "",
                  f"stock: {sdesc}; ours: {odesc}.", "",
                  "| jobs | iodepth | no FUSE | stock | ours | ours / stock "
                  "| stock / no FUSE | ours / no FUSE | IOPS stock → ours "
                  "| p99 µs stock → ours | own CPU % ours "
                  "| IPIs/op stock → ours |",
                  "| " + " | ".join(["---"] * 12) + " |"]
        for j, d in rr:
            k = lambda m: (m, "randread", j, d)
            nf, s, o = (med(runs, k(m), 0) for m in ("nofuse", stock, ours))
            lines.append(
                f"| {j} | {d} | {spread(runs, k('nofuse'), 0)} "
                f"| {spread(runs, k(stock), 0)} | {spread(runs, k(ours), 0)} "
                f"| {ratio(runs, k(ours), k(stock), 0)} | {pct(s, nf)} | {pct(o, nf)} "
                f"| {fmt(med(runs, k(stock), 1))} → {fmt(med(runs, k(ours), 1))} "
                f"| {p99(med(runs, k(stock), 2))} → {p99(med(runs, k(ours), 2))} "
                f"| {fmt(med(runs, k(ours), 3), 1)} "
                f"| {fmt(med(runs, k(stock), 4), 2)} → {fmt(med(runs, k(ours), 4), 2)} |")
        lines.append("")

    meta = sorted({(k[1], k[2]) for k in runs if k[1] != "randread"},
                  key=lambda x: (["create", "stat", "unlink"].index(x[0]), x[1]))
    if meta:
        lines += [f"#### Metadata: fio filecreate, filestat, filedelete "
                  f"(ops/s: median of {reps} runs, min-max)", "",
                  "| op | jobs | no FUSE | ll stock | ll ours | ll ours / stock "
                  "| hp stock | hp ours | hp ours / stock "
                  "| p99 µs ll stock → ours | own CPU % ll ours, hp ours |",
                  "| " + " | ".join(["---"] * 11) + " |"]
        for op, j in meta:
            k = lambda m: (m, op, j, 1)
            lines.append(
                f"| {op} | {j} | {spread(runs, k('nofuse'), 1)} "
                f"| {spread(runs, k('ll-stock'), 1)} | {spread(runs, k('ll-ours'), 1)} "
                f"| {ratio(runs, k('ll-ours'), k('ll-stock'), 1)} "
                f"| {spread(runs, k('hp-stock'), 1)} | {spread(runs, k('hp-ours'), 1)} "
                f"| {ratio(runs, k('hp-ours'), k('hp-stock'), 1)} "
                f"| {p99(med(runs, k('ll-stock'), 2))} → {p99(med(runs, k('ll-ours'), 2))} "
                f"| {fmt(med(runs, k('ll-ours'), 3), 1)}, {fmt(med(runs, k('hp-ours'), 3), 1)} |")
        lines.append("")
    return lines


def main():
    out = sys.argv[1]
    lines = []
    for arg in sys.argv[2:]:
        title, rundir = arg.split("|", 1)
        sec = section(title, rundir)
        if sec is None:
            return 1
        lines += sec
    lines.append(GATE.verdict())
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
