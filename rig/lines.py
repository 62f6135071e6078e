#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cacheline transfers per request, from the counts of rig/pathprof/lines.c.

usage: lines.py same DIR AGAIN       how many measured runs of two boots
                                     of one plan counted differently
       lines.py check DIR PROBE [AGAIN]
                                     the lines_probe cases of DIR, as TAP;
                                     with AGAIN, a second boot of the same
                                     plan, whose counts must be DIR's
       lines.py report OUT SYSTEM.MAP DIR... [--pathlen DIR] [--sat DIR...]
                [--mixed DIR...]     the tables of make bench-lines, the
                                     projection, the saturated workload's
                                     table and the slow-request table

A guest DIR holds plan, results.log and lines.N: one file per stretch
between two marks.  Every plan entry that marks (fuse_bench with
FUSE_BENCH_MARK=1, lines_probe) cuts two marks, just before and just after
what it measures, so the k-th such entry measured lines.(2k+1).  A report
DIR's name is its topology ("smp-8-nodes-2", "sat-smp-8-nodes-2" for the
saturated workload); its plan loads "module stock"
(or "module ab", LINES_AB) and "module ours", each followed by a dump of
the module's kallsyms.
"""
import bisect
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_report import FIELDS, MIXED  # noqa: E402
from pathprof import Resolver, load_map, module_syms  # noqa: E402

KINDS = ("ld_same", "ld_cross", "st_same", "st_cross")
# The kernel's half with 5-level paging (its direct map at
# 0xff11000000000000) as with 4 levels (at 0xffff888000000000)
KERNEL = 0xff00000000000000


def read_counts(path):
    """{'total': [...], 'pc': {vaddr: [4]}, 'line': [(paddr, vaddr, ld, st,
    cross, [(pc, n)...])]} of one stretch."""
    out = {"total": [0] * 6, "pc": {}, "line": []}
    with open(path) as f:
        for row in f:
            p = row.split()
            if p[0] == "total":
                out["total"] = [int(x) for x in p[1:7]] + [0] * (7 - len(p))
            elif p[0] == "pc":
                out["pc"][int(p[1], 16)] = [int(x) for x in p[2:6]]
            elif p[0] == "line":
                tops = [(int(p[i], 16), int(p[i + 1])) for i in range(6, len(p), 2)
                        if int(p[i + 1])]
                out["line"].append((int(p[1], 16), int(p[2], 16), int(p[3]),
                                    int(p[4]), int(p[5]), tops))
    return out


def runs_of(d):
    """The plan's entries that ran, in order: dicts with the plan line,
    the module loaded then, its output lines and exit code."""
    plan = []
    with open(os.path.join(d, "plan")) as f:
        plan = [ln.rstrip("\n") for ln in f if ln.split()[:1] in (["run"], ["sh"])]
    blocks, cur = [], None
    with open(os.path.join(d, "results.log"), errors="replace") as f:
        for ln in f:
            ln = ln.rstrip("\r\n")
            if ln.startswith("### RUN "):
                cur = {"module": ln.split()[2] if len(ln.split()) > 3 else "",
                       "out": [], "rc": None}
                blocks.append(cur)
            elif ln.startswith("### EXIT") and cur is not None:
                cur["rc"] = int(ln.split()[2])
                cur = None
            elif cur is not None:
                cur["out"].append(ln)
    for entry, b in zip(plan, blocks):
        b["plan"] = entry
        b["marks"] = "FUSE_BENCH_MARK=1" in entry or "lines_probe" in entry
    return blocks[:len(plan)], len(plan)


def measured(d):
    """(run, counts) for every marking run of DIR, with its stretch."""
    runs, planned = runs_of(d)
    marking = [r for r in runs if r["marks"]]
    out = []
    for k, r in enumerate(marking):
        path = os.path.join(d, "lines.%d" % (2 * k + 1))
        out.append((r, read_counts(path) if os.path.exists(path) else None))
    return out, len(runs) == planned


def symbols_of(binary):
    syms = []
    res = subprocess.run(["nm", "-n", binary], capture_output=True, text=True,
                         check=True).stdout
    for ln in res.splitlines():
        p = ln.split()
        if len(p) == 3:
            syms.append((int(p[0], 16), p[2]))
    return syms


def compare(d1, d2):
    """How many measured runs of two boots of one plan counted differently
    (a run missing from either counts as different), and how many there
    were."""
    m1, m2 = measured(d1)[0], measured(d2)[0]
    total = max(len(m1), len(m2))
    same = sum(a is not None and a == b for (_, a), (_, b) in zip(m1, m2))
    return total - same, total


def check(d, probe, again=None):
    """TAP: each lines_probe case's counts in its loop functions, and that
    a second boot counted the same."""
    syms = symbols_of(probe)
    addrs = [a for a, _ in syms]

    def span(name):
        for i, (a, n) in enumerate(syms):
            if n == name:
                return a, syms[i + 1][0]
        raise KeyError(name)

    meas, complete = measured(d)
    n = bad = 0
    for r, counts in meas:
        if "lines_probe" not in r["plan"]:
            continue
        line = next((o for o in r["out"] if o.startswith("lines_probe ")), None)
        n += 1
        desc = r["plan"].split(None, 2)[2]
        if line is None or r["rc"] != 0 or counts is None:
            print("not ok %d %s\n#   no result (exit %s, counts %s)" %
                  (n, desc, r["rc"], "missing" if counts is None else "present"))
            bad += 1
            continue
        want = dict(kv.split("=") for kv in line.split()[2:])
        got = [0, 0, 0, 0]
        for f in want["loops"].split(","):
            lo, hi = span(f)
            for pc, c in counts["pc"].items():
                if lo <= pc < hi:
                    got = [x + y for x, y in zip(got, c)]
        loads, stores = got[0] + got[1], got[2] + got[3]
        lmin, lmax = (int(x) for x in want["loads"].split("-"))
        errs = []
        if stores != int(want["stores"]):
            errs.append("stores %d, want %s" % (stores, want["stores"]))
        if not lmin <= loads <= lmax:
            errs.append("loads %d, want %d-%d" % (loads, lmin, lmax))
        cross = want["cross"]
        if cross == "none" and got[1] + got[3]:
            errs.append("%d cross-node transfers, want none" % (got[1] + got[3]))
        elif cross == "all" and got[0] + got[2]:
            errs.append("%d same-node transfers, want none" % (got[0] + got[2]))
        elif cross not in ("none", "all") and got[3] < int(cross):
            errs.append("%d cross-node stores, want at least %s" % (got[3], cross))
        status = "ok" if not errs else "not ok"
        bad += bool(errs)
        print("%s %d %s" % (status, n, desc))
        print("#   loads %d (%d cross-node), stores %d (%d cross-node)" %
              (loads, got[1], stores, got[3]))
        for e in errs:
            print("#   " + e)
    if not complete:
        n += 1
        bad += 1
        print("not ok %d the guest ran every plan entry" % n)
    if not meas:
        n += 1
        bad += 1
        print("not ok %d lines_probe ran" % n)
    if again:
        n += 1
        differ, total = compare(d, again)
        bad += bool(differ or not total)
        print("%s %d a second boot of the same kernel and initramfs counts "
              "the same" % ("not ok" if differ or not total else "ok", n))
        print("#   %d of %d measured runs differ" % (differ, total))
    print("1..%d" % n)
    return 1 if bad else 0


# --- make bench-lines ---

def topo_of(name):
    m = re.search(r"smp-(\d+)-nodes-(\d+)", name)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


class Naming:
    """Kernel text and data symbols, and fuse.ko's for each module load."""

    def __init__(self, smap, d):
        self.text = load_map(smap)
        data = sorted(load_map(smap, "dDbBrR"))
        self.data_addrs = [a for a, _ in data]
        self.data_names = [n for _, n in data]
        self.mods = module_syms(os.path.join(d, "results.log"))

    def resolver(self, which):
        """which: 0 for the first module load (stock), 1 for the second"""
        mods = self.mods[which] if which < len(self.mods) else []
        return Resolver(self.text + mods)

    def data(self, vaddr, tops, res):
        """What a line is: its static symbol, or its region and the
        functions that moved it most."""
        if vaddr < KERNEL:
            where = "user memory"
        elif vaddr >= 0xffffffff80000000 and self.data_addrs:
            i = bisect.bisect_right(self.data_addrs, vaddr) - 1
            where = "static %s" % self.data_names[i] if i >= 0 else "kernel image"
        elif (0xffffc90000000000 <= vaddr < 0xffffe90000000000 or
              0xffa0000000000000 <= vaddr < 0xffd2000000000000):
            where = "vmalloc (task stack)"
        elif (0xffff888000000000 <= vaddr < 0xffffc88000000000 or
              0xff11000000000000 <= vaddr < 0xff91000000000000):
            where = "slab/page"
        else:
            where = "kernel"
        fns = []
        for pc, _ in sorted(tops, key=lambda t: -t[1]):
            fn = res.name(pc)
            if fn not in fns:
                fns.append(fn)
        return where, fns


def summarize(r, counts, res):
    """Per-request figures of one run."""
    fields = r["out"][-1].split("\t") if r["out"] else []
    # fuse_bench's line: FIELDS, or MIXED for the mixed workload
    names = MIXED if fields[:1] == ["mixed"] else FIELDS
    reqs = int(fields[-1]) if fields and fields[-1].isdigit() else 0
    kern = [0, 0, 0, 0]
    user = [0, 0, 0, 0]
    byfn = collections.Counter()
    for pc, c in counts["pc"].items():
        tgt = kern if pc >= KERNEL else user
        for i in range(4):
            tgt[i] += c[i]
        if pc >= KERNEL:
            byfn[res.name(pc)] += sum(c)
    hot = max((ld + st for pa, va, ld, st, cr, tp in counts["line"]), default=0)
    hot_cross = max(((ld + st, cr) for pa, va, ld, st, cr, tp in counts["line"]),
                    default=(0, 0))[1]
    got = dict(zip(names, fields)) if len(fields) == len(names) else {}
    local = float(got.get("local_cpu", 0))
    return {"reqs": reqs, "kern": kern, "user": user, "byfn": byfn, "local": local,
            "local_node": float(got.get("local_node", 0)),
            "accesses": counts["total"][0], "insns": counts["total"][5],
            "hot": hot, "hot_cross": hot_cross}


def label(r):
    p = r["plan"].split()
    mod = r["module"]
    if "gofuse_bench" in p:
        i = p.index("gofuse_bench")
        mode, wl, threads = p[i + 1], p[i + 2], int(p[i + 3])
        return wl, threads, "%s go-fuse %s" % (mod, GO_NAMES.get(mode, mode))
    i = p.index("fuse_bench")
    mode, wl, threads = p[i + 1], p[i + 2], int(p[i + 3])
    if mod == "stock":
        name = {"unbound": "stock clone_fd", "uring": "stock io-uring"}[mode]
    elif mod == "ab":
        name = "other " + mode
    else:
        name = "ours " + mode
    return wl, threads, name


# FUSE-over-io-uring (a ring queue per CPU, on stock) and ours bound by
# node (a clone and one reader per node) where the run has them
MODES = ["stock clone_fd", "stock io-uring", "ours unbound", "ours bound",
         "ours node", "other bound", "other node"]
# go-fuse's benchmark daemon (gofuse/bench): the mount fd alone, as go-fuse
# reads it, on stock and ours; on ours clones pinned per CPU but unbound,
# and bound by node and by CPU (MountOptions.CloneBind)
GO_NAMES = {"single": "one fd", "unbound": "clones unbound",
            "node": "bound node", "cpu": "bound CPU"}
GO_MODES = ["stock go-fuse one fd", "ours go-fuse one fd",
            "ours go-fuse clones unbound", "ours go-fuse bound node",
            "ours go-fuse bound CPU"]


def path_lengths(d):
    """Guest instructions per request of one caller's getattr, by mode"""
    out = {}
    meas, _ = measured(d)
    for r, counts in meas:
        if "fuse_bench" not in r["plan"] or counts is None or r["rc"] != 0:
            continue
        wl, threads, mode = label(r)
        fields = r["out"][-1].split("\t") if r["out"] else []
        if wl == "getattr" and threads == 1 and fields and fields[-1].isdigit():
            out[mode] = counts["total"][5] / max(1, int(fields[-1]))
    return out


def summaries(d, smap):
    """(run, its summary, counts, naming, resolver) of each measured run
    of DIR that finished"""
    naming = Naming(smap, d)
    meas, complete = measured(d)
    if not complete:
        print("lines.py: %s did not run its whole plan" % d, file=sys.stderr)
    for r, counts in meas:
        res = naming.resolver(0 if r["module"] in ("stock", "ab") else 1)
        if counts is None or r["rc"] != 0:
            continue
        yield r, summarize(r, counts, res), counts, naming, res


def report(out, dirs, smap, mixed_dirs=(), pathlen=None, sat_dirs=()):
    results = {}	# (cpus, nodes) -> {(wl, callers, mode): summary}
    tops = {}	# (cpus, nodes) -> {mode: [(summary, counts, naming, res)]}
    for d in dirs:
        cpus, nodes = topo_of(os.path.basename(d.rstrip("/")))
        cell = results.setdefault((cpus, nodes), {})
        for r, s, counts, naming, res in summaries(d, smap):
            wl, threads, mode = label(r)
            key = (wl, threads // cpus, mode)
            cell.setdefault(key, []).append(s)
            if wl == "getattr" and threads == cpus:
                tops.setdefault((cpus, nodes), {}).setdefault(mode, []).append(
                    (s, counts, naming, res))
    lines = []
    w = lines.append
    w("Cacheline transfers per request, by the TCG plugin's directory model "
      "(rig/pathprof/lines.c): guest kernel code only, same-node + cross-node; "
      "in brackets the transfers of user space (caller and daemon); the "
      "median of the runs, and after ± their spread (half their range, in "
      "% of the median). One caller per CPU, or two.\n")
    have_go = any(k[2] in GO_MODES for c in results.values() for k in c)
    # the columns: the modes this run has
    present = {k[2] for c in results.values() for k in c}
    tables = [[m for m in MODES if m in present]] + ([GO_MODES] if have_go else [])
    for (cpus, nodes) in sorted(results):
        cell = results[(cpus, nodes)]
        w("\n### %d vCPUs, %d node%s\n" % (cpus, nodes, "s" if nodes > 1 else ""))
        for modes in tables:
            if modes is GO_MODES:
                w("\ngo-fuse's daemon (gofuse/bench):\n")
            w("| workload | callers/CPU | " + " | ".join(modes) + " |")
            w("| --- " * (2 + len(modes)) + "|")
            for wl in ("getattr", "read"):
                for callers in (1, 2):
                    row = []
                    for m in modes:
                        ss = cell.get((wl, callers, m))
                        if not ss:
                            row.append("-")
                            continue
                        row.append(fmt_cell(ss))
                    w("| %s | %d | %s |" % (wl, callers, " | ".join(row)))
    # Growth with the machine's size
    w("\n### How the figures grow (getattr, one caller per CPU; kernel transfers "
      "per request, cross-node in brackets, and the share of requests read on "
      "the CPU that issued them)\n")
    for modes in tables:
        if modes is GO_MODES:
            w("\ngo-fuse's daemon:\n")
        w("| vCPUs × nodes | " + " | ".join(modes) + " |")
        w("| --- " * (1 + len(modes)) + "|")
        for (cpus, nodes) in sorted(results):
            row = []
            for m in modes:
                ss = results[(cpus, nodes)].get(("getattr", 1, m))
                if not ss:
                    row.append("-")
                    continue
                row.append("%.1f (%.1f), %.0f %%" % (
                    median([per_req(s, range(4)) for s in ss]),
                    median([per_req(s, (1, 3)) for s in ss]),
                    median([s["local"] for s in ss])))
            w("| %d × %d | %s |" % (cpus, nodes, " | ".join(row)))
    # Where they come from, on the largest machine
    if tops:
        big = max(tops)
        w("\n### Where the transfers are (getattr, one caller per CPU, %d vCPUs, "
          "%d nodes)\n" % big)
        for m in MODES:
            if m not in tops[big]:
                continue
            # the run of the median total
            runs = sorted(tops[big][m], key=lambda t: per_req(t[0], range(4)))
            s, counts, naming, res = runs[len(runs) // 2]
            reqs = max(1, s["reqs"])
            w("**%s**: top functions (kernel transfers per request; the run of "
              "the median total)\n" % m)
            w("| function | transfers/request |")
            w("| --- | --- |")
            for fn, c in s["byfn"].most_common(8):
                w("| %s | %.2f |" % (fn, c / reqs))
            w("\ntop lines\n")
            w("| line | what | moved by | transfers/request | cross-node |")
            w("| --- | --- | --- | --- | --- |")
            kl = [x for x in counts["line"] if x[1] >= KERNEL]
            kl.sort(key=lambda x: -(x[2] + x[3]))
            for pa, va, ld, st, cr, tp in kl[:8]:
                where, fns = naming.data(va, tp, res)
                w("| %#x | %s | %s | %.2f | %.2f |" %
                  (pa, where, ", ".join(fns[:3]), (ld + st) / reqs, cr / reqs))
            w("")
    lines.extend(projection(results, path_lengths(pathlen) if pathlen else {}))
    if not results:	# the saturated workload alone (LINES_TOPOS=none)
        del lines[:]
    if sat_dirs:
        lines.extend(sat_report(sat_dirs, smap))
    if mixed_dirs:
        lines.extend(mixed_report(mixed_dirs))
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return results


def per_req(s, idx):
    """Kernel transfers per request of one run: the kinds in idx"""
    return sum(s["kern"][i] for i in idx) / max(1, s["reqs"])


def median(vals):
    v = sorted(vals)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def spread_pct(vals):
    """Half the range of the runs, in % of their median"""
    m = median(vals)
    return 50.0 * (max(vals) - min(vals)) / m if m else 0.0


def fmt_cell(ss):
    """Median same-node + cross-node kernel transfers per request, user
    space's in brackets, and the runs' spread"""
    same = median([per_req(s, (0, 2)) for s in ss])
    cross = median([per_req(s, (1, 3)) for s in ss])
    user = median([sum(s["user"]) / max(1, s["reqs"]) for s in ss])
    spread = ""
    if len(ss) > 1:
        spread = " ±%.0f%%" % spread_pct([per_req(s, range(4)) for s in ss])
    return "%.1f + %.1f [%.1f]%s" % (same, cross, user, spread)

# --- The projection: a model, not a measurement ---
# Latencies of one cacheline transfer (ns), same node and across nodes, and
# the rate kernel code retires instructions at (instructions per ns), for
# two machine classes.  Round figures of the order the sources in the
# README report; LINES_LAT="name:same:cross:ipns,..." replaces them.
MACHINES = [("2-socket Intel Xeon (Skylake-SP to Sapphire Rapids)", 2, 50.0, 130.0, 2.0),
            ("multi-node AMD EPYC (Rome to Genoa, NPS4 or 2 sockets)", 4, 100.0, 200.0, 2.0)]


def machines():
    env = os.environ.get("LINES_LAT")
    if not env:
        return MACHINES
    out = []
    for part in env.split(","):
        name, nodes, same, cross, ipns = part.split(":")
        out.append((name, int(nodes), float(same), float(cross), float(ipns)))
    return out


def projection(results, plen):
    """Per-request cost and throughput against CPUs, from the counts of the
    machines with each class's node count (getattr, one caller per CPU)."""
    out = []
    w = out.append
    w("\n## Projection (a model, not a measurement)\n")
    if plen:
        w("Path length of a getattr with one caller (guest instructions a "
          "request, caller and daemon): " + ", ".join(
              "%s %.0f" % (m, plen[m]) for m in MODES if m in plen) + ".\n")
    w("Cost of a request = its guest instructions at the machine's rate, plus "
      "each cacheline transfer at the machine's latency, as if every transfer "
      "stalled (an upper bound: out-of-order cores hide some).  Throughput "
      "with N CPUs = N / cost, capped by the hottest line: every transfer of "
      "that line is serial, so no more than 1 / (its transfers per request x "
      "their latency) requests a second.  Figures at 4 to 32 CPUs use the "
      "counts measured at that size; 128 CPUs, with the counts of the largest "
      "machine measured, is an extrapolation: the counts grow with the "
      "machine, so it flatters every mode.\n")
    for name, nodes, same, cross, ipns in machines():
        sizes = sorted(c for (c, n) in results if n == nodes)
        if not sizes:
            continue
        w("**%s**: %g ns a transfer within a node, %g ns across, %g instructions "
          "a ns; the %d-node machines.\n" % (name, same, cross, ipns, nodes))
        cols = sizes + [128]
        w("| mode | ns a request (at %d CPUs) | hottest line, transfers/request | "
          % sizes[-1] + " | ".join("Mreq/s at %d CPUs" % c for c in cols) + " |")
        w("| --- " * (3 + len(cols)) + "|")
        for m in MODES:
            row, cost_last, hot_last = [], None, None
            pts = {}
            for c in sizes:
                ss = results[(c, nodes)].get(("getattr", 1, m))
                if not ss:
                    continue
                same_t = median([per_req(x, (0, 2)) for x in ss])
                cross_t = median([per_req(x, (1, 3)) for x in ss])
                # One caller's path length where measured: with many, the
                # instructions include the spinning of round-robin vCPUs
                ins = plen.get(m, median([x["insns"] / max(1, x["reqs"]) for x in ss]))
                cost = ins / ipns + same_t * same + cross_t * cross
                hot = median([x["hot"] / max(1, x["reqs"]) for x in ss])
                hcr = median([x["hot_cross"] / max(1, x["reqs"]) for x in ss])
                hot_ns = max(0.0, hot - hcr) * same + hcr * cross
                pts[c] = (cost, hot, hot_ns)
            if not pts:
                continue
            for c in cols:
                # beyond the largest machine measured: its counts
                cost, hot, hot_ns = pts[c] if c in pts else pts[max(pts)]
                rate = c / cost * 1e3
                if hot_ns > 0:
                    rate = min(rate, 1e3 / hot_ns)
                row.append("%.1f" % rate)
            cost, hot, _ = pts[max(pts)]
            w("| %s | %.0f | %.2f | %s |" % (m, cost, hot, " | ".join(row)))
        w("")
    return out


# Functions that take the connection's input queue (fc->chan->iq) in every
# mode: its send_req numbers each request from the queue's counter, then
# (bound) dev_bind.c routes it to a device; dev_bind.c's fuse_iq_ready
# looks at the connection's queue alone.  The others take any input queue
# (stock and ours unbound have no other).
SHARED_FNS = {"fuse_dev_queue_req", "fuse_request_assign_unique",
              "fuse_iq_ready"}
QUEUE_FNS = SHARED_FNS | {"fuse_dev_wake_and_unlock", "fuse_dev_queue_forget",
                          "fuse_dev_queue_interrupt", "fuse_dev_do_read"}


def shared_queue(counts, res, bound):
    """Transfers of the connection-wide input queue's lines in one run, and
    how many of them cross nodes.  The queue is struct fuse_chan's iq, in
    its first three lines (bytes 16 to 151; struct fuse_chan is a kmalloc
    object of 256 bytes or more, so aligned to 128): the block whose lines
    the queue's functions moved most (QUEUE_FNS; bound, SHARED_FNS alone:
    the devices' queues are moved by the others too).  A contended queue's
    lines are moved most by the spinlock's code, and a request's lines by
    fuse_dev_do_read too, but far fewer times.  Read from each line's three
    busiest instructions: where none of them is these functions' in any
    of the block's lines, the queue is missed (0)."""
    blocks = collections.Counter()
    fns_of = SHARED_FNS if bound else QUEUE_FNS
    for pa, va, ld, st, cr, tp in counts["line"]:
        if va < KERNEL:
            continue
        if {res.name(pc).split(":")[-1].split(".")[0] for pc, _ in tp} & fns_of:
            blocks[pa & ~0x7f] += ld + st
    if not blocks:
        return 0, 0
    base = blocks.most_common(1)[0][0]
    moved = [(ld + st, cr) for pa, va, ld, st, cr, tp in counts["line"]
             if base <= pa < base + 192]
    return sum(m for m, _ in moved), sum(c for _, c in moved)


SAT_MODES = ["stock clone_fd", "stock io-uring", "ours unbound", "ours bound",
             "ours node", "ours nodecpus", "other bound", "other node"]


def sat_report(dirs, smap):
    """The saturated workload (fuse_bench mixed) under the plugin: kernel
    transfers per request, cross-node, and the connection-wide queue's"""
    out = ["\n## Saturated: slow requests among fast ones, under the plugin\n",
           "fuse_bench mixed: four callers per vCPU (fuse_bench takes 80 at "
           "most, caller i on vCPU i mod N), one request in 100 a "
           "LOOKUP the daemon holds 20 ms (guest time), so callers queue "
           "behind held readers.  Kernel transfers per request as above "
           "(same-node + cross-node [user space] ±spread of the total); "
           "cross-node alone; the transfers of the connection-wide input "
           "queue's three lines (struct fuse_chan's iq), cross-node in "
           "brackets; the share of requests read on the CPU that issued "
           "them, and on its node.  Medians of the runs; ± half their range in % of the "
           "median.\n"]
    w = out.append
    for d in dirs:
        cpus, nodes = topo_of(os.path.basename(d.rstrip("/")))
        by, callers = {}, set()
        for r, s, counts, naming, res in summaries(d, smap):
            wl, threads, mode = label(r)
            if wl != "mixed":
                continue
            # fuse_bench's own count: it takes at most FSRV_MAX_FDS callers
            callers.add(r["out"][-1].split("\t")[2])
            q, qc = shared_queue(counts, res, mode.split()[-1] in
                                 ("bound", "node", "nodecpus"))
            s["queue"], s["queue_cross"] = q, qc
            by.setdefault(mode, []).append(s)
        w("\n### %d vCPUs, %d nodes, %s callers\n" % (
            cpus, nodes, " or ".join(sorted(callers))) if by else
          "\n### %s: no runs\n" % d)
        if not by:
            continue
        w("| mode | runs | kernel transfers/request | cross-node/request | "
          "connection-wide queue lines/request (cross-node) | "
          "read on issuing CPU / node |")
        w("| --- " * 6 + "|")
        med = {}
        for m in SAT_MODES:
            ss = by.get(m)
            if not ss:
                continue
            cross = [per_req(x, (1, 3)) for x in ss]
            q = [x["queue"] / max(1, x["reqs"]) for x in ss]
            qc = [x["queue_cross"] / max(1, x["reqs"]) for x in ss]
            med[m] = (median(cross), median(q), median(qc))
            w("| %s | %d | %s | %.2f ±%.0f%% | %.3f ±%.0f%% (%.3f) | %.0f / %.0f %% |" % (
                m, len(ss), fmt_cell(ss), med[m][0], spread_pct(cross),
                med[m][1], spread_pct(q), med[m][2],
                median([x["local"] for x in ss]),
                median([x["local_node"] for x in ss])))
        base = med.get("stock clone_fd")
        if base:
            w("\nAgainst stock clone_fd (ratio of medians): " + "; ".join(
                "%s: cross-node %s, connection-wide queue lines %s" % (
                    m, ratio(v[0], base[0]), ratio(v[1], base[1]))
                for m, v in med.items() if m != "stock clone_fd") + ".")
        ring = med.get("stock io-uring")
        if ring:
            w("\nCross-node transfers against stock io-uring (ratio of "
              "medians): " + "; ".join(
                  "%s %s" % (m, ratio(v[0], ring[0]))
                  for m, v in med.items() if m.startswith("ours")) + ".")
    return out


def ratio(a, b):
    return "%.2fx" % (a / b) if b else "-"


def mixed_report(dirs):
    """The slow-request workload on the instruction clock, and its verdict"""
    import bench_report
    out = ["\n## Slow requests among fast ones, on the instruction clock\n",
           "fuse_bench mixed: four callers per CPU, one request in 100 held 20 ms "
           "by the daemon; guest time counts instructions, so a held request is "
           "a sleep and the figures measure the routing's decisions, not the "
           "host's scheduling.\n"]
    for d in dirs:
        rows = []
        bench_report.parse(d, rows)
        if not rows:
            out.append("\n%s: no results\n" % d)
            continue
        cpus, nodes = topo_of(os.path.basename(d.rstrip("/")).replace("mixed-", ""))
        gate = bench_report.Gate("icount mixed")
        out.extend(bench_report.mixed_table("%d vCPUs, %d nodes" % (cpus, nodes),
                                            rows, gate))

        def p99(module, mode):
            v = [float(r["fast_p99"]) for r in rows
                 if r["module"] == module and r["mode"] == mode]
            return sorted(v)[len(v) // 2] if v else None

        def own(module, mode):
            v = [float(r["local_cpu"]) for r in rows
                 if r["module"] == module and r["mode"] == mode]
            return sorted(v)[len(v) // 2] if v else None
        ob, stock = p99("ours", "bound"), p99("stock", "unbound")
        if None in (ob, stock):
            continue
        checks = [("bound fast p99 no worse than stock clone_fd", ob <= stock,
                   "%.0f µs against %.0f µs stock" % (ob, stock)),
                  ("own CPU at least 95 %", own("ours", "bound") >= 95,
                   "%.1f %%" % own("ours", "bound"))]
        out.append("\nGoal at %d vCPUs, %d nodes: %s." % (cpus, nodes, "; ".join(
            "%s: %s (%s)" % (what, "met" if ok else "NOT met", why)
            for what, ok, why in checks)))
    return out


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "same":
        print("%d of %d measured runs differ" % compare(*sys.argv[2:]))
        return
    if len(sys.argv) in (4, 5) and sys.argv[1] == "check":
        sys.exit(check(*sys.argv[2:]))
    if len(sys.argv) >= 4 and sys.argv[1] == "report":
        args = sys.argv[4:]
        mixed, pathlen, sat = [], None, []
        if "--mixed" in args:
            mixed = args[args.index("--mixed") + 1:]
            args = args[:args.index("--mixed")]
        if "--sat" in args:
            sat = args[args.index("--sat") + 1:]
            args = args[:args.index("--sat")]
        if "--pathlen" in args:
            pathlen = args[args.index("--pathlen") + 1]
            args = args[:args.index("--pathlen")]
        report(sys.argv[2], args, sys.argv[3], mixed, pathlen, sat)
        return
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
