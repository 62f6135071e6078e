#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: build fuse.ko (stock and ours), boot a 4-CPU, 2-node guest,
# and run the same workload through one clone per CPU three times: on
# stock fuse.ko with unbound clones (what libfuse -o clone_fd gets today);
# on ours with unbound clones; and on ours with each clone bound to its
# CPU.  Prints them side by side, clone by clone, and each one's share of
# requests served on the issuing CPU and node; for ours also what the
# tracepoint fuse:fuse_request_read counted (stock has none).
# BASE=6.1: on Debian 12's own kernel binary, Debian's fuse.ko against ours
# built for it (rig/debkernel.sh).
. "$(dirname "$0")/lib.sh"

"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
if [ "$BASE" = 6.1 ]; then
	debian_guest_build
	kernel=$DEB_VMLINUZ mods=$B/modules-debian
	what="Debian's kernel $DEB_KREL: Debian's own fuse.ko, then ours"
	stock="Debian's fuse.ko, clone_fd"
else
	"$TOP/rig/kernel.sh" debug
	"$TOP/rig/modules.sh" "$B/kernel-debug" "$B/modules-debug" stock ours
	kernel=$B/kernel-debug/arch/x86/boot/bzImage mods=$B/modules-debug
	what="Linux $(cat "$B/kernel-debug/include/config/kernel.release"): stock fuse.ko, then ours"
	stock="stock fuse.ko, clone_fd"
fi
"$TOP/rig/selftests.sh"

dir=${DEMO_DIR:-$B/runs/demo}
mkdir -p "$dir"
printf '%s\n' "module stock" "run 300 fuse_demo unbound data" \
	"module ours" "run 300 fuse_demo unbound data" \
	"run 300 fuse_demo bound data" > "$dir/plan"
"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" "$mods" "$B/tests"
log "demo on $what"
"$TOP/rig/guest.sh" "$kernel" "$dir/initramfs.cpio.gz" "$dir" 2node 900
grep -q '^### DONE' "$dir/results.log" || die "the guest did not finish: see $dir/console.log"

# fuse_demo's "@" lines of the three runs, one table
python3 - "$dir/results.log" "$what" "$stock" <<'EOF'
import re
import sys

runs, cur, bad = [], None, []
for line in open(sys.argv[1], errors="replace"):
    line = line.rstrip("\r\n")
    m = re.match(r"### RUN \S+ fuse_demo (\S+)", line)
    if m:
        cur = {"clones": [], "hist": [], "mode": m.group(1)}
        continue
    m = re.match(r"### EXIT (\d+)", line)
    if m and cur is not None:
        if m.group(1) != "0":
            bad.append("fuse_demo %s exited with %s" %
                       (cur.get("mode", "?"), m.group(1)))
        cur = None
        continue
    if cur is None or not line.startswith("@"):
        continue
    tag, _, rest = line.partition(" ")
    kv = dict(f.split("=", 1) for f in rest.split())
    if tag == "@run":
        cur.update(kv)
        runs.append(cur)
    elif tag == "@clone":
        cur["clones"].append({k: float(v) for k, v in kv.items()})
    elif tag == "@hist":
        cur["hist"].append({k: int(v) for k, v in kv.items()})

# The plan's order: stock unbound, ours unbound, ours bound
if [r["mode"] for r in runs] != ["unbound", "unbound", "bound"]:
    for e in bad:
        print("demo: " + e, file=sys.stderr)
    sys.exit("demo: not every fuse_demo run gave results (see results.log)")
s, u, b = runs
names = [sys.argv[3], "ours, unbound clones", "ours, clones bound to CPUs"]


def pct(a, b, w):
    return ("%.1f %%" % (100.0 * a / b) if b else "-").rjust(w)


def cells(c):
    return "%7d  %s" % (c["served"], pct(c["own_cpu"], c["lookups"], 8))


def total(run):
    return {k: sum(c[k] for c in run["clones"])
            for k in ("served", "lookups", "own_cpu", "own_node")}


def traced(run):
    """What the tracepoint counted: every request, those read on the
    issuing CPU, on its node, and from the reader's own device queue"""
    h = run["hist"]
    return (sum(e["hits"] for e in h),
            sum(e["hits"] for e in h if e["cpu"] == e["read_cpu"]),
            sum(e["hits"] for e in h if e["node"] == e["read_node"]),
            sum(e["own"] for e in h))


nodes = len({c["node"] for c in s["clones"] if c["idx"]})
row = "%-11s  %-17s   %-17s   %-17s"


def line(*cols):
    print((row % cols).rstrip())


print()
print("On %s." % sys.argv[2])
print("The same workload three times: one thread pinned to each of %s CPUs"
      % s["cpus"])
print("(%d %s) does %s stat() and %s read() on a FUSE mount; the daemon"
      % (nodes, "node" if nodes == 1 else "nodes", s["ops"], s["reads"]))
print("serves it through one /dev/fuse clone per CPU, each read by a thread")
print("pinned to that CPU.")
print()
line("", sys.argv[3].split(",")[0], "ours", "ours")
line("", "unbound clones", "unbound clones", "bound to CPUs")
line("clone", *(["%7s  %8s" % ("served", "own CPU")] * 3))
for cs, cu, cb in zip(s["clones"], u["clones"], b["clones"]):
    if cs["idx"] == 0:
        if not cs["served"] and not cu["served"] and not cb["served"]:
            continue
        name = "mount fd"
    else:
        name = "CPU %d (n%d)" % (cs["cpu"], cs["node"])
    line(name, cells(cs), cells(cu), cells(cb))
line("all", cells(total(s)), cells(total(u)), cells(total(b)))
print()
print("served: requests the clone read; own CPU: share of its LOOKUPs issued")
print("on the CPU its reader runs on (from the daemon's own log).  Unbound,")
print("ours is stock: a request waits on the connection's shared queue and")
print("wakes the reader that has waited longest.  Bound, a request waits on")
print("the clone bound to the CPU that issued it and wakes its reader if it")
print("sleeps, else an idle reader of the node, else of the other node, and")
print("the first reader free takes it.  No times: the guest's vCPUs share")
print("this host's cores, so its wall clock says more about the host than")
print("about either fuse.ko (make pathprof counts instructions).")
print()
print("LOOKUPs served on the CPU / node that issued them:")
for name, r in zip(names, runs):
    t = total(r)
    print("  %-32s %s  %s" % (name, pct(t["own_cpu"], t["lookups"], 8),
                              pct(t["own_node"], t["lookups"], 8)))
print()
print("Every request, as the tracepoint fuse:fuse_request_read counted it")
print("(\"-\" where fuse.ko has none): read on the issuing CPU, on its node,")
print("and from the reading clone's own queue rather than another's or the shared one:")
for name, r in zip(names, runs):
    n, c, nd, own = traced(r)
    print("  %-32s %s  %s  %s" % (name, pct(c, n, 8), pct(nd, n, 8),
                                  pct(own, n, 8)))
for e in bad:
    print("demo: " + e, file=sys.stderr)
for r in runs[1:]:
    if not r["hist"]:
        print("demo: no fuse:fuse_request_read counts from ours (%s)" %
              r["mode"], file=sys.stderr)
        bad.append(r)
for r in runs:
    if r.get("errors", "0") != "0":
        print("demo: the %s workload saw errors" % r["mode"], file=sys.stderr)
        bad.append(r)
sys.exit(1 if bad else 0)
EOF
log "guest logs: $dir (kernel: console.log, guest output: results.log)"
