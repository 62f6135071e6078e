#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# results.md, second boot: one caller on CPU 0 against the raw server
# (fuse_bench, rig/tests): 4 KiB reads of a direct-io file (read, a
# synchronous READ) and O_DIRECT reads with async direct I/O on (dread, a
# background READ its caller waits for); stock fuse.ko with a clone per
# CPU and its reader pinned there (unbound), against the series with
# those clones bound to their CPUs (bound) and with a clone per node read
# by a thread per CPU free on the node's CPUs (nodecpus), alternating
# after a warm-up phase, ROUNDS rounds (4):
#   bash bench/2026-12-06-dio-depth1/raw-depth1.sh OUT [ROUNDS]
set -eu
out=$(realpath -m "$1") rounds=${2:-4}
mods=build/7.3/modules-bench
mkdir -p "$out"
{
	echo "module stock"
	echo "run 120 fuse_bench unbound read 1 3000"
	for r in $(seq "$rounds"); do
		if [ $((r % 2)) = 1 ]; then order="stock ours"; else order="ours stock"; fi
		for m in $order; do
			echo "module $m"
			for w in read dread; do
				if [ "$m" = stock ]; then
					echo "run 120 fuse_bench unbound $w 1 6000"
				else
					for o in $modes; do
						echo "run 120 fuse_bench $o $w 1 6000"
					done
				fi
			done
		done
	done
} > "$out/plan"
rig/initramfs.sh "$out/initramfs.cpio.gz" "$out/plan" "$mods" build/7.3/tests
BASE=7.3 rig/guest.sh build/7.3/kernel-bench/arch/x86/boot/bzImage \
	"$out/initramfs.cpio.gz" "$out" 2node 1500
grep -P '^(unbound|bound|nodecpus)\t' "$out/results.log"
