#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn guest runs into a verdict.

usage: verdict.py RUNDIR|tap:NAME:FILE...

Each RUNDIR holds results.log (what /init wrote to ttyS1: section markers,
kselftest TAP) and console.log (the kernel log).
Every kselftest case counts as a test; so do each
module load, each test binary's exit, the guest reaching its end, and a
kernel log free of WARNING/BUG/lockdep/KASAN/hung-task reports, and of
KCSAN reports that name fuse code.  Prints one
line per test and ends with 'N passed, N failed, N skipped'; exits 1 if any
failed.
"""
import os
import re
import sys

SPLAT = re.compile(
    r"WARNING:|BUG:|Oops|general protection fault|Kernel panic|"
    r"possible circular locking|possible recursive locking|"
    r"inconsistent lock state|bad unlock balance|suspicious RCU usage|"
    r"lock held when returning to user space|held lock freed|"
    r"DEBUG_LOCKS_WARN_ON|non-static key|"
    r"KASAN|UBSAN|list_add corruption|list_del corruption|"
    r"sleeping function called from invalid context|"
    r"INFO: task .* blocked for more than|soft lockup|hard LOCKUP|"
    r"rcu_.*detected stall|kmemleak: .*new suspected|"
    r"unreferenced object|Call Trace:")
# "ok 3 name # SKIP why"; older kselftest harnesses (Linux 6.1's) print a
# skip as "ok 3 # SKIP why", with the name only on the "#  RUN" line
TAP = re.compile(r"^(\s*)(not ok|ok) (\d+)(?: (.*?))??(?:\s*#\s*(SKIP|TODO)\b.*)?$")
HARNESS_RUN = re.compile(r"^#\s+RUN\s+(\S+) \.\.\.")


class Verdict:
    def __init__(self):
        self.results = []

    def add(self, name, status, why=""):
        self.results.append((name, status, why))

    def run(self, rundir):
        tag = os.path.basename(os.path.normpath(rundir))
        res = os.path.join(rundir, "results.log")
        con = os.path.join(rundir, "console.log")
        lines = []
        if os.path.exists(res):
            with open(res, errors="replace") as f:
                lines = [l.rstrip("\r\n").replace("\r", "") for l in f]
        module = "?"
        section = None
        prog = None
        seen = 0
        planned = None
        failed_in_prog = 0
        booted = done = False
        for line in lines:
            if line.startswith("### BOOT"):
                booted = True
                continue
            if line.startswith("### DONE"):
                done = True
                continue
            m = re.match(r"### (MODULE|RMMOD) (\S+) rc=(\d+)", line)
            if m:
                verb, name, rc = m.groups()
                if verb == "MODULE":
                    module = name
                self.add(f"{tag}/{name}/" +
                         ("insmod" if verb == "MODULE" else "rmmod"),
                         "pass" if rc == "0" else "fail", f"rc={rc}")
                continue
            m = re.match(r"### RUN (\S+) (\S+)", line)
            if m:
                section, prog, seen, planned, failed_in_prog = \
                    "tap", m.group(2), 0, None, 0
                last_run = None
                continue
            m = re.match(r"### EXIT (\d+)", line)
            if m and section == "tap":
                rc = int(m.group(1))
                ok = rc in (0, 4) or (rc == 1 and failed_in_prog)
                if planned is not None and seen < planned:
                    ok = False
                why = f"exit {rc}, {seen}/{planned} results"
                if rc == 137:
                    why += " (killed by the watchdog)"
                self.add(f"{tag}/{module}/{prog}/exit",
                         "pass" if ok else "fail", why)
                section = None
                continue
            if section == "tap":
                p = re.match(r"^1\.\.(\d+)", line)
                if p and planned is None:
                    planned = int(p.group(1))
                    continue
                r = HARNESS_RUN.match(line)
                if r:
                    last_run = r.group(1)
                    continue
                t = TAP.match(line)
                if t and not t.group(1):
                    seen += 1
                    status = "skip" if t.group(5) == "SKIP" else \
                        ("pass" if t.group(2) == "ok" else "fail")
                    if status == "fail":
                        failed_in_prog += 1
                    name = t.group(4) or last_run or t.group(3)
                    self.add(f"{tag}/{module}/{prog}/{name}", status)
        self.add(f"{tag}/guest-booted", "pass" if booted else "fail")
        self.add(f"{tag}/guest-finished", "pass" if done else "fail",
                 "" if done else "no ### DONE: hang, panic or timeout")

        splats = []
        if os.path.exists(con):
            with open(con, errors="replace") as f:
                for l in f:
                    # KCSAN (its own guest) reports races anywhere in the
                    # kernel; only those in fuse are ours to fail on
                    if "KCSAN:" in l and "fuse" not in l:
                        continue
                    if SPLAT.search(l):
                        splats.append(l.strip())
        self.add(f"{tag}/kernel-log-clean", "fail" if splats else "pass",
                 "; ".join(splats[:5]))

    def report(self):
        counts = {"pass": 0, "fail": 0, "skip": 0}
        for name, status, why in self.results:
            counts[status] += 1
            if status != "pass" or not os.environ.get("QUIET"):
                print(f"{status.upper():5} {name}" + (f"  ({why})" if why else ""))
        print(f"{counts['pass']} passed, {counts['fail']} failed, "
              f"{counts['skip']} skipped")
        return 1 if counts["fail"] else 0


    def tap(self, name, path):
        """A plain TAP file from a host-side check (series, checkpatch)."""
        lines = []
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                lines = f.read().splitlines()
        seen = 0
        planned = None
        for line in lines:
            p = re.match(r"^1\.\.(\d+)$", line)
            if p:
                planned = int(p.group(1))
                continue
            t = TAP.match(line)
            if t and not t.group(1):
                seen += 1
                self.add(f"{name}/{t.group(4)}",
                         "pass" if t.group(2) == "ok" else "fail")
        if not seen:
            self.add(f"{name}/ran", "fail", f"no results in {path}")
        elif planned != seen:
            # Each check prints its plan last: without it, it stopped early
            self.add(f"{name}/{os.path.basename(path)}", "fail",
                     f"{seen} results, plan {planned}: stopped early")


def main():
    v = Verdict()
    for arg in sys.argv[1:]:
        if arg.startswith("tap:"):
            _, name, path = arg.split(":", 2)
            v.tap(name, path)
        else:
            v.run(arg)
    sys.exit(v.report())


if __name__ == "__main__":
    main()
