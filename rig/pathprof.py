#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per operation by function, from rig/pathprof.sh's counts.

usage: pathprof.py DIR SYSTEM.MAP OPS NAME...

DIR holds counts.N (one per stretch of the run: counts.0 is the boot,
counts.1.. stock's workloads, then the module switch, then ours' workloads)
and results.log, where the guest printed /proc/kallsyms' fuse lines after
each module load.  NAME labels the workload stretches in order
(stock:unbound stock:uring ours:bound ...), stock's first.  Prints a
Markdown table of the functions whose count differs from the first
column's, per operation, and the totals.
"""
import bisect
import collections
import os
import sys


def load_map(path, types="tTwW"):
    """(address, name) of the System.map symbols of those types (text)"""
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in types:
                syms.append((int(parts[0], 16), parts[2]))
    return syms


def module_syms(results):
    """kallsyms [fuse] lines per module, in load order."""
    out, cur = [], None
    with open(results, errors="replace") as f:
        for line in f:
            if line.startswith("### RUN ") and line.rstrip().endswith(" sh"):
                cur = []
            elif line.startswith("### EXIT") and cur is not None:
                if cur:
                    out.append(cur)
                cur = None
            elif cur is not None and "[fuse]" in line:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in "tT":
                    cur.append((int(parts[0], 16), "fuse:" + parts[2]))
    return out


class Resolver:
    def __init__(self, syms):
        syms = sorted(syms)
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    def name(self, addr):
        if addr < 0xffff800000000000:
            return "(user space)"
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else "(unknown)"


def profile(path, res, ops):
    per = collections.Counter()
    with open(path) as f:
        for line in f:
            a, n, c = line.split()
            per[res.name(int(a, 16))] += int(n) * int(c)
    return {k: v / ops for k, v in per.items()}


def main():
    d, smap, ops, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    kern = load_map(smap)
    mods = module_syms(os.path.join(d, "results.log"))
    if len(mods) < 2:
        sys.exit("pathprof.py: no kallsyms of both modules in results.log")
    stock_res, ours_res = Resolver(kern + mods[0]), Resolver(kern + mods[1])
    # counts.1..S: stock's S workloads, counts.S+1 the module switch,
    # counts.S+2..: ours'
    nstock = sum(1 for n in names if n.startswith("stock"))
    files = list(range(1, nstock + 1)) + \
        [nstock + 2 + i for i in range(len(names) - nstock)]
    profs = []
    for name, k in zip(names, files):
        res = stock_res if name.startswith("stock") else ours_res
        profs.append(profile(os.path.join(d, "counts.%d" % k), res, ops))
    base = profs[0]
    funcs = set()
    for p in profs:
        funcs |= set(p)
    rows = []
    for fn in funcs:
        vals = [p.get(fn, 0.0) for p in profs]
        if max(abs(v - vals[0]) for v in vals) >= 1.0:
            rows.append((max(abs(v - vals[0]) for v in vals), fn, vals))
    rows.sort(key=lambda r: (-r[0], r[1]))
    print("Instructions per operation (%d operations), by function; rows where "
          "a column differs from %s by 1 or more.\n" % (ops, names[0]))
    print("| function | " + " | ".join(names) + " | " +
          " | ".join("Δ " + n for n in names[1:]) + " |")
    print("| --- " * (2 * len(names)) + "|")
    for _, fn, vals in rows:
        print("| %s | " % fn + " | ".join("%.1f" % v for v in vals) + " | " +
              " | ".join("%+.1f" % (v - vals[0]) for v in vals[1:]) + " |")
    for label, pick in (("fuse.ko total", lambda k: k.startswith("fuse:")),
                        ("kernel total", lambda k: not k.startswith("(user")),
                        ("user space", lambda k: k.startswith("(user"))):
        vals = [sum(v for k, v in p.items() if pick(k)) for p in profs]
        print("| **%s** | " % label + " | ".join("%.1f" % v for v in vals) +
              " | " + " | ".join("%+.1f" % (v - vals[0]) for v in vals[1:]) + " |")


if __name__ == "__main__":
    main()
