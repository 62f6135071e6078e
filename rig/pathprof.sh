#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make pathprof: where the instructions of a FUSE round trip go, function by
# function, stock fuse.ko against ours.  The benchmark guest runs on QEMU's
# instruction clock with a TCG plugin (rig/pathprof/insncount.c, built
# against the qemu-plugin.h of Debian's qemu source package) that counts
# every translation block executed; a sync(2) between workloads cuts the
# counts into one file per workload.  rig/pathprof.py maps the blocks to
# kernel and fuse.ko symbols and prints instructions per operation by
# function and the difference to stock.
# Environment: PATHPROF_WORKLOAD (getattr), PATHPROF_OPS (20000),
# PATHPROF_MODES ("unbound bound"), PATHPROF_STOCK_MODES (stock's:
# "unbound"; "unbound uring" adds FUSE-over-io-uring on stock, where the
# base has it), PATHPROF_OUT (build/pathprof),
# PATHPROF_OURS (another build of our fuse.ko for the benchmark kernel, to
# profile a variant against stock), PATHPROF_STYLE (a reader style of
# fuse_styles_bench, e.g. worker: its stat() round trips instead, from
# one caller on CPU 1, PATHPROF_OPS of them and as many to warm up;
# stock unbound, ours unbound and bound).
. "$(dirname "$0")/lib.sh"

bench_build
"$TOP/rig/selftests.sh"
wl=${PATHPROF_WORKLOAD:-getattr}
ops=${PATHPROF_OPS:-20000}
modes=${PATHPROF_MODES:-unbound bound}
smodes=${PATHPROF_STOCK_MODES:-unbound}
out=${PATHPROF_OUT:-$B/pathprof}
rm -rf "$out"
mkdir -p "$out"

# The plugin, against the plugin API of the QEMU that runs it
cc -O2 -Wall -shared -fPIC -I"$(qemu_plugin_include)" \
	-o "$out/insncount.so" "$TOP/rig/pathprof/insncount.c"

map=$B/kernel-bench/System.map
# the syscall's entry: 7.3's compiler inlines ksys_sync() into it
mark=$(awk '$3 == "__x64_sys_sync" { print $1 }' "$map")
[ -n "$mark" ] || die "no __x64_sys_sync in $map"

# sync(2) marks the end of each stretch: boot, then one per workload
work() {	# MODE
	if [ -z "${PATHPROF_STYLE:-}" ]; then
		echo "run 600 fuse_bench $1 $wl 1 $ops"
	else
		echo "run 600 fuse_styles_bench -$([ "$1" = bound ] && echo b || echo u) -s $PATHPROF_STYLE -n $ops -r 1"
	fi
}
if [ -n "${PATHPROF_STYLE:-}" ]; then
	smodes=unbound modes="unbound bound"
fi
{
	echo "module stock"
	echo "sh 60 grep -E '\\[fuse\\]' /proc/kallsyms"
	echo "sh 60 sync"
	for m in $smodes; do
		work "$m"
		echo "sh 60 sync"
	done
	echo "module ours"
	echo "sh 60 grep -E '\\[fuse\\]' /proc/kallsyms"
	echo "sh 60 sync"
	for m in $modes; do
		work "$m"
		echo "sh 60 sync"
	done
} > "$out/plan"
mods=$B/modules-bench
if [ -n "${PATHPROF_OURS:-}" ]; then
	mods=$out/modules
	mkdir -p "$mods"
	cp "$B/modules-bench/stock.ko" "$mods/"
	cp "$PATHPROF_OURS" "$mods/ours.ko"
fi
"$TOP/rig/initramfs.sh" "$out/initramfs.cpio.gz" "$out/plan" "$mods" "$B/tests"
GUEST_ICOUNT=1 GUEST_QEMU_EXTRA="-plugin $out/insncount.so,mark=$mark,out=$out/counts" \
	"$TOP/rig/guest.sh" "$B/kernel-bench/arch/x86/boot/bzImage" \
	"$out/initramfs.cpio.gz" "$out" "smp=2 nodes=1" 3600
# a style's run is its warm-up and the run: twice PATHPROF_OPS
per=$ops
[ -z "${PATHPROF_STYLE:-}" ] || per=$((2 * ops))
python3 "$TOP/rig/pathprof.py" "$out" "$map" "$per" \
	$(for m in $smodes; do echo "stock:$m"; done) \
	$(for m in $modes; do echo "ours:$m"; done) | tee "$out/profile.md"
