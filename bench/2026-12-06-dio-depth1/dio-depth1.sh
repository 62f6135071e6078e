#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# results.md: one fio job of 4 KiB random direct reads pinned to CPU 1 at
# iodepth 1 (libaio, and psync for a synchronous reference) beside three
# idle vCPUs, against libfuse 3.18.3's passthrough_hp over tmpfs:
# stock fuse.ko with --clone-fd against the series with -o clone_bind=cpu
# and -o clone_bind=node, alternating in one boot of the 7.3 benchmark
# kernel (4 vCPUs, 2 nodes) after a warm-up phase, ROUNDS rounds (4).
# Run from the repository root after make bench-uring has built
# build/7.3/modules-bench and build/7.3/tests:
#   bash bench/2026-12-06-dio-depth1/dio-depth1.sh OUT [ROUNDS]
set -eu
out=$(realpath -m "$1") rounds=${2:-4}
here=$(cd "$(dirname "$0")" && pwd)
mods=build/7.3/modules-bench
cases="libaio:1 psync:1"
mkdir -p "$out"
{
	# Events without the command-line recorder: enabling that patches
	# the scheduler's wakeup path, which once stopped this TCG guest with
	# an int3 oops in ttwu_do_activate()
	t=/sys/kernel/tracing
	echo "sh 10 mount -t tracefs nodev $t; echo 0 > $t/options/record-cmd; echo 0 > $t/options/record-tgid"
	echo "module stock"
	echo "sh 300 /tests/profile-depth.sh stock libaio:1"
	for r in $(seq "$rounds"); do
		if [ $((r % 2)) = 1 ]; then order="stock ours"; else order="ours stock"; fi
		for m in $order; do
			echo "module $m"
			if [ "$m" = stock ]; then
				echo "sh 300 /tests/profile-depth.sh stock $cases"
			else
				echo "sh 300 /tests/profile-depth.sh ours $cases"
				echo "sh 300 /tests/profile-depth.sh node $cases"
			fi
		done
	done
} > "$out/plan"
rig/initramfs.sh "$out/initramfs.cpio.gz" "$out/plan" "$mods" build/7.3/tests
BASE=7.3 rig/guest.sh build/7.3/kernel-bench/arch/x86/boot/bzImage \
	"$out/initramfs.cpio.gz" "$out" 2node 3000
python3 "$here/depth1_table.py" "$out/results.log"
