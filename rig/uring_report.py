#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench-uring's tables: every transport side by side, one boot.

usage: uring_report.py OUT.md RUNDIR [PATHPROF-DIR...]

RUNDIR's results.log holds, per module load ("### MODULE stock|ours"),
fuse_bench result lines (tab-separated, see rig/tests/fuse_bench.c) and
fuse_fio_bench.sh's "@fio" lines.  Each PATHPROF-DIR holds a profile.md
of rig/pathprof.py (its totals row) and the plan that named the workload.
The transports:

  stock     stock fuse.ko, a clone per CPU, its reader pinned there
            (libfuse -o clone_fd); fio: passthrough_hp --clone-fd,
            passthrough_ll -o clone_fd
  io-uring  stock fuse.ko, FUSE-over-io-uring, a ring queue per CPU;
            fio: libfuse's passthrough_hp and passthrough_ll -o io_uring
  unbound   ours, a clone per CPU, not bound (fuse_bench alone)
  cpu       ours, a clone bound to each CPU; fio: -o clone_bind=cpu
  node      ours, a clone bound to each node, one reader thread each;
            fio: -o clone_bind=node (libfuse's threads, per node)

Medians of the runs, their spread (half the range in % of the median),
and ratios that bench_report.py's noise gate prints only when both sides
spread by at most 10 %.  Writes OUT.md and prints it.
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report  # noqa: E402
from bench_report import Gate, spread_of  # noqa: E402

TRANSPORTS = ["stock", "io-uring", "unbound", "cpu", "node"]
LABEL = {"stock": "stock clone per CPU", "io-uring": "io-uring",
         "unbound": "ours unbound", "cpu": "ours bound by CPU",
         "node": "ours bound by node"}
BENCH = {("stock", "unbound"): "stock", ("stock", "uring"): "io-uring",
         ("ours", "unbound"): "unbound", ("ours", "bound"): "cpu",
         ("ours", "node"): "node"}
# fio's modes (rig/tests/fuse_fio_bench.sh): (daemon, transport)
FIO = {"hp-stock": ("hp", "stock"), "hp-uring": ("hp", "io-uring"),
       "hp-ours": ("hp", "cpu"), "hp-node": ("hp", "node"),
       "ll-stock": ("ll", "stock"), "ll-uring": ("ll", "io-uring"),
       "ll-ours": ("ll", "cpu"), "ll-node": ("ll", "node")}
DAEMON = {"hp": "passthrough_hp", "ll": "passthrough_ll"}
FIOF = ["mode", "workload", "jobs", "depth", "mibs", "iops", "p99", "own",
        "ipis"]


def parse(rundir):
    """{(transport, workload, threads): [row]} of bench_report.parse()'s
    fuse_bench rows, and {daemon: {(transport, wl, jobs, depth): [row]}}
    of the "@fio" lines"""
    bench, fio = {}, {}
    for r in bench_report.parse(rundir)[0]:
        t = BENCH.get((r["module"], r["mode"]))
        if t:
            bench.setdefault((t, r["workload"], int(r["threads"])),
                             []).append(r)
    with open(os.path.join(rundir, "results.log"), errors="replace") as f:
        for line in f:
            r = dict(zip(FIOF, line.split()[1:]))
            dt = FIO.get(r.get("mode")) if line.startswith("@fio ") else None
            if dt and "ipis" in r:
                fio.setdefault(dt[0], {}).setdefault(
                    (dt[1], r["workload"], int(r["jobs"]),
                     int(r["depth"])), []).append(r)
    return bench, fio


def vals(rows, key):
    out = []
    for r in rows or []:
        try:
            out.append(float(r[key]))
        except (KeyError, ValueError):
            pass
    return out


def cell(rows, key, digits=0):
    v = vals(rows, key)
    if not v:
        return "-"
    m = statistics.median(v)
    sp = spread_of(v)
    s = f"{m:.{digits}f}"
    return s + (f" ±{sp:.0f}%" if sp is not None else "")


def pathprof_totals(d):
    """{transport: kernel instructions per operation}, and the workload"""
    wl, out = None, {}
    with open(os.path.join(d, "plan")) as f:
        for line in f:
            m = re.search(r"fuse_bench \S+ (\S+) ", line)
            if m:
                wl = m.group(1)
    with open(os.path.join(d, "profile.md")) as f:
        lines = f.read().splitlines()
    head = next((ln for ln in lines if ln.startswith("| function |")), None)
    tot = next((ln for ln in lines if ln.startswith("| **kernel total**")),
               None)
    if not head or not tot:
        return wl, out
    names = [c.strip() for c in head.strip("|").split("|")][1:]
    nums = [c.strip() for c in tot.strip("|").split("|")][1:]
    for name, num in zip(names, nums):
        if name.startswith("Δ"):
            break
        mod, mode = name.split(":")
        t = BENCH.get((mod, mode))
        if t:
            out[t] = float(num)
    return wl, out


def main():
    outp, rundir, pdirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    bench, fios = parse(rundir)
    fio = fios.get("hp", {})
    gate = Gate("wall-clock tables")
    lines = []
    say = lines.append
    ncpu = max([k[2] for k in bench] + [k[2] for f in fios.values()
                                        for k in f] + [1])
    paths = {}
    for d in pdirs:
        if os.path.exists(os.path.join(d, "profile.md")):
            wl, tot = pathprof_totals(d)
            paths[wl] = tot

    say("### One row per transport\n")
    say(f"Medians of the runs ± their spread. getattr and 4 KiB read: "
        f"fuse_bench's raw server, 1 caller and {ncpu} (one per vCPU), "
        f"operations/s; own CPU / node: the share of requests read on "
        f"the issuing CPU / its node ({ncpu} callers). fio: passthrough_hp over tmpfs, "
        f"{ncpu} jobs, direct 4 KiB random reads (IOPS), 128 KiB "
        f"buffered sequential reads (MiB/s, 1 job), fio's filestat "
        f"(stat()/s). Instructions: kernel instructions per operation "
        f"on QEMU's instruction clock, 1 caller, 2 vCPUs.\n")
    say("| transport | getattr 1 | getattr %d | read %d | own CPU / node | "
        "fio psync | fio io_uring qd1 | fio io_uring qd4 | seqread | "
        "stat | insn/getattr | insn/read |" % (ncpu, ncpu))
    say("| --- " * 12 + "|")
    for t in TRANSPORTS:
        g1 = bench.get((t, "getattr", 1))
        gn = bench.get((t, "getattr", ncpu))
        rn = bench.get((t, "read", ncpu))
        if not (g1 or gn or rn or any(k[0] == t for k in fio)):
            continue
        ins = [paths.get(w, {}).get(t) for w in ("getattr", "read")]
        say("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            LABEL[t], cell(g1, "ops_s"), cell(gn, "ops_s"),
            cell(rn, "ops_s"),
            cell(gn, "local_cpu") + " / " + cell(gn, "local_node"),
            cell(fio.get((t, "randread-psync", ncpu, 1)), "iops"),
            cell(fio.get((t, "randread-io_uring", ncpu, 1)), "iops"),
            cell(fio.get((t, "randread-io_uring", ncpu, 4)), "iops"),
            cell(fio.get((t, "seqread", 1, 1)), "mibs", 1),
            cell(fio.get((t, "stat", ncpu, 1)), "iops"),
            "-" if ins[0] is None else f"{ins[0]:.0f}",
            "-" if ins[1] is None else f"{ins[1]:.0f}"))

    say("\n### fuse_bench, operations/s (own CPU %)\n")
    say("| workload | callers | " + " | ".join(LABEL[t] for t in TRANSPORTS)
        + " | cpu / io-uring | cpu / stock | node / io-uring |")
    say("| --- " * (len(TRANSPORTS) + 5) + "|")
    for wl, th in sorted({(k[1], k[2]) for k in bench}):
        row = [bench.get((t, wl, th)) for t in TRANSPORTS]
        cells = [cell(r, "ops_s") + (" (%s)" % cell(r, "local_cpu")
                                     if r else "") for r in row]
        rat = [gate.ratio_of(vals(bench.get((a, wl, th)), "ops_s"),
                             vals(bench.get((b, wl, th)), "ops_s"))
               for a, b in (("cpu", "io-uring"), ("cpu", "stock"),
                            ("node", "io-uring"))]
        say(f"| {wl} | {th} | " + " | ".join(cells) + " | " +
            " | ".join(rat) + " |")

    for dm in sorted(fios):
        fio = fios[dm]
        ft = [t for t in TRANSPORTS if any(k[0] == t for k in fio)]
        say(f"\n### fio against {DAEMON[dm]} (IOPS; MiB/s for seqread)\n")
        say("| workload | jobs | depth | " + " | ".join(LABEL[t] for t in ft) +
            " | cpu / io-uring | cpu / stock | node / io-uring |")
        say("| --- " * (len(ft) + 6) + "|")
        for wl, j, d in sorted({k[1:] for k in fio}):
            key = "mibs" if wl == "seqread" else "iops"
            cells = [cell(fio.get((t, wl, j, d)), key,
                          1 if key == "mibs" else 0) for t in ft]
            rat = [gate.ratio_of(vals(fio.get((a, wl, j, d)), key),
                                 vals(fio.get((b, wl, j, d)), key))
                   for a, b in (("cpu", "io-uring"), ("cpu", "stock"),
                                ("node", "io-uring"))]
            say(f"| {wl} | {j} | {d} | " + " | ".join(cells) + " | " +
                " | ".join(rat) + " |")

    if paths:
        say("\n### Kernel instructions per operation (instruction clock)\n")
        say("| workload | " + " | ".join(LABEL[t] for t in TRANSPORTS) +
            " | cpu / io-uring |")
        say("| --- " * (len(TRANSPORTS) + 2) + "|")
        for wl, tot in sorted(paths.items()):
            r = "-"
            if tot.get("cpu") and tot.get("io-uring"):
                r = f"{tot['cpu'] / tot['io-uring']:.2f}x"
            say(f"| {wl} | " + " | ".join(
                "-" if tot.get(t) is None else f"{tot[t]:.0f}"
                for t in TRANSPORTS) + f" | {r} |")
    say(f"\nVerdict: {gate.noisy} of {gate.ratios} wall-clock ratios "
        f"noisy (a side's runs spread by more than 10 %).")
    text = "\n".join(lines) + "\n"
    with open(outp, "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
