#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-styles: the round trip of sequential requests for each way a
# daemon's readers wait (rig/tests/fuse_styles_bench.c), stock fuse.ko
# (unbound clones) and ours (unbound and bound) in one boot of the
# benchmark kernel (no debug options), 4 vCPUs in 2 nodes.  Writes
# build/bench/styles/results.md and prints it.
# Environment: STYLES_OPS (stat() calls per run, 300), STYLES_REPEATS
# (runs per cell, 3), STYLES_ONLY (one style, e.g. sigio), STYLES_TOPO
# (2node), STYLES_ICOUNT (1: on QEMU's instruction clock, one host thread
# running the vCPUs in turn, where a round trip is the instructions of
# every vCPU on the way, 1 ns each, and the host's load does not count),
# STYLES_LINGER (blocking readers again with CPU 1's reader lingering
# after each reply, one row per value: µs asleep, or spinning if
# negative; "5000 -2000"; empty: none).
. "$(dirname "$0")/lib.sh"

bench_build
"$TOP/rig/selftests.sh"

ops=${STYLES_OPS:-300} reps=${STYLES_REPEATS:-3}
only=${STYLES_ONLY:+-s $STYLES_ONLY}
dir=${BENCH_OUT:-$B/bench}/styles
mkdir -p "$dir"
linger=${STYLES_LINGER-5000 -2000}
{
	for m in stock ours; do
		u=; [ $m = ours ] || u=-u
		echo "module $m"
		echo "run 1800 fuse_styles_bench $u -n $ops -r $reps $only"
		for l in $linger; do
			echo "run 1800 fuse_styles_bench $u -n $ops -r $reps -s blocking -l $l"
		done
	done
} > "$dir/plan"
"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
	"$B/modules-bench" "$B/tests"
GUEST_ICOUNT=${STYLES_ICOUNT:-0} "$TOP/rig/guest.sh" \
	"$B/kernel-bench/arch/x86/boot/bzImage" "$dir/initramfs.cpio.gz" \
	"$dir" "${STYLES_TOPO:-2node}" 3600
grep -q '^### DONE' "$dir/results.log" || die "the guest did not finish: see $dir/console.log"

python3 - "$dir/results.log" "$dir/host.txt" "$ops" "$reps" \
	"$(git -C "$TOP" rev-parse --short HEAD)" > "$dir/results.md" <<'PY'
import os
import sys
rows, mod, tag = {}, None, ""
for line in open(sys.argv[1], errors="replace"):
    f = line.rstrip("\r\n").split("\t")
    if line.startswith("### RUN "):
        w = line.split()
        mod = w[2]
        l = int(w[w.index("-l") + 1]) if "-l" in w else 0
        tag = (", CPU 1's reader %s %d µs after each reply"
               % ("asleep" if l > 0 else "spinning", abs(l)) if l else "")
    elif len(f) == 5 and f[0] != "style" and mod:
        rows.setdefault(f[0] + tag, {})[(mod, f[1])] = f[2:]
host = dict(l.split(None, 1) for l in open(sys.argv[2]) if " " in l)
if os.environ.get("STYLES_ICOUNT") == "1":
    print("On QEMU's instruction clock (1 ns per guest instruction, "
          "the vCPUs in turn on one host thread).\n")
print("Round trip of %s stat() calls in a row from one thread pinned to "
      "CPU 1, one reader per clone pinned to its CPU, one clone per CPU; "
      "the median of %s runs' medians, µs; own CPU: the share read on the "
      "caller's CPU.  Commit %s; host load %s before, %s after.\n"
      % (sys.argv[3], sys.argv[4], sys.argv[5],
         host.get("load_before", "?").strip(), host.get("load_after", "?").strip()))
print("| reader style | stock | ours unbound | ours bound | bound / unbound "
      "| own CPU: stock, unbound, bound |")
print("| --- | --- | --- | --- | --- | --- |")
def cell(r, k):
    v = r.get(k)
    return v[0] if v and v[0] != "failed" else "-"
def own(r, k):
    v = r.get(k)
    return v[2] + " %" if v and len(v) > 2 else "-"
for s, r in rows.items():
    ub, b = cell(r, ("ours", "unbound")), cell(r, ("ours", "bound"))
    ratio = "%.2f" % (float(b) / float(ub)) if "-" not in (ub, b) else "-"
    print("| %s | %s | %s | %s | %s | %s, %s, %s |" % (
        s, cell(r, ("stock", "unbound")), ub, b, ratio,
        own(r, ("stock", "unbound")), own(r, ("ours", "unbound")),
        own(r, ("ours", "bound"))))
PY
cat "$dir/results.md"
