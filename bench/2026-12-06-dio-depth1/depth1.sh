#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# results.md: one caller beside idle vCPUs, stock fuse.ko against the
# series, alternating in one boot of the 7.3 benchmark kernel (4 vCPUs, 2
# nodes) after a warm-up phase, ROUNDS rounds (4).  Run from the
# repository root after make bench-uring has built build/7.3/modules-bench
# and build/7.3/tests:
#   bash bench/2026-12-06-dio-depth1/depth1.sh fio|raw|pipe OUT [ROUNDS [MODES]]
# fio: one fio job of 4 KiB random direct reads pinned to CPU 1 at
#   iodepth 1 (libaio, and psync for a synchronous reference) against
#   libfuse 3.18.3's passthrough_hp over tmpfs (profile-depth.sh of
#   2026-12-06-depth-profile): stock with --clone-fd, the series with
#   each of MODES (ours: -o clone_bind=cpu, node: -o clone_bind=node;
#   default both).  PROFILE=0: without profile-depth.sh's sampler and
#   trace window.
# raw: fuse_bench (rig/tests), one caller on CPU 0: read (a synchronous
#   READ) and dread (async direct I/O its caller waits for); stock with a
#   clone per CPU, its reader pinned there (unbound), the series with each
#   of MODES (default: bound, those clones bound to their CPUs, and
#   nodecpus, a clone per node read by a thread per CPU free on the
#   node's CPUs; boot 5 ran node, one reader thread per node).
# pipe: no FUSE, fuse_bench pipe: two threads or two processes passing a
#   byte over two pipes on one vCPU or on two, 20,000 round trips, ROUNDS
#   rounds, no warm-up.
set -eu
kind=$1 out=$(realpath -m "$2") rounds=${3:-4}
pre=${PROFILE:+PROFILE=$PROFILE }
here=$(cd "$(dirname "$0")" && pwd)
case $kind in
fio)	modes=${4:-"ours node"} timeout=3000
	warm="sh 300 ${pre}/tests/profile-depth.sh stock libaio:1" ;;
raw)	modes=${4:-"bound nodecpus"} timeout=1500
	warm="run 120 fuse_bench unbound read 1 3000" ;;
pipe)	modes= timeout=600 warm= ;;
*)	echo "usage: $0 fio|raw|pipe OUT [ROUNDS [MODES]]" >&2; exit 2 ;;
esac
# One phase of module $1
phase() {
	local m=$1 o w
	[ "$m" = stock ] && set -- stock || set -- $modes
	if [ "$kind" = fio ]; then
		for o; do
			echo "sh 300 ${pre}/tests/profile-depth.sh $o libaio:1 psync:1"
		done
		return
	fi
	[ "$m" = stock ] && set -- unbound
	for w in read dread; do
		for o; do
			echo "run 120 fuse_bench $o $w 1 6000"
		done
	done
}
mkdir -p "$out"
if [ "$kind" = pipe ]; then
	for r in $(seq "$rounds"); do
		for m in same same-process cross cross-process; do
			echo "run 60 fuse_bench pipe $m 20000"
		done
	done > "$out/plan"
else {
	if [ "$kind" = fio ]; then
		# Events without the command-line recorder (as rig/guest-init.sh
		# does since): enabling it patches the scheduler's wakeup path,
		# which stopped this TCG guest once with an int3 oops
		t=/sys/kernel/tracing
		echo "sh 10 mount -t tracefs nodev $t; echo 0 > $t/options/record-cmd; echo 0 > $t/options/record-tgid"
	fi
	echo "module stock"
	echo "$warm"
	for r in $(seq "$rounds"); do
		if [ $((r % 2)) = 1 ]; then order="stock ours"; else order="ours stock"; fi
		for m in $order; do
			echo "module $m"
			phase "$m"
		done
	done
} > "$out/plan"
fi
rig/initramfs.sh "$out/initramfs.cpio.gz" "$out/plan" build/7.3/modules-bench build/7.3/tests
BASE=7.3 rig/guest.sh build/7.3/kernel-bench/arch/x86/boot/bzImage \
	"$out/initramfs.cpio.gz" "$out" 2node "$timeout"
if [ "$kind" = pipe ]; then
	grep '^pipe-' "$out/results.log" | cut -f1,6
else
	python3 "$here/depth1_table.py" "$out/results.log"
fi
