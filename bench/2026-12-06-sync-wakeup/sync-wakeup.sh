#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# results.md: the series with and without "fuse: keep the synchronous
# wakeup hint for bound devices", alternating in one boot of the 7.3
# benchmark kernel (4 vCPUs, 2 nodes), fuse_bench (rig/tests) per module:
# bound by node (a reader thread per node, free on the node's CPUs), by
# node with a reader per CPU (nodecpus), and by CPU (pinned readers).
# Run from the repository root after make bench-uring has built
# build/7.3/modules-bench and build/7.3/tests:
#   bash bench/2026-12-06-sync-wakeup/sync-wakeup.sh OUT [FIRST]
# FIRST (hint or without) goes first in rounds 1 and 3.  Prints the table.
set -eu
out=$(realpath -m "$1") first=${2:-without}
here=$(cd "$(dirname "$0")" && pwd)
mods=build/7.3/modules-bench
patch=$(ls patches/7.3/*-fuse-keep-the-synchronous-wakeup-hint-*.patch)
mkdir -p "$out/mods"
# hint: the series; without: the series less that patch
cp "$mods/ours.ko" "$out/mods/hint.ko"
rm -rf "$out/without.src"
cp -r "$mods/ours.src" "$out/without.src"
patch -s -R -p3 -d "$out/without.src" < "$patch"
make -s -C build/7.3/kernel-bench M="$out/without.src" -j"$(nproc)" modules
cp "$out/without.src/fuse.ko" "$out/mods/without.ko"
other=$([ "$first" = hint ] && echo without || echo hint)
for r in 1 2 3 4; do
	if [ $((r % 2)) = 1 ]; then order="$first $other"; else order="$other $first"; fi
	for m in $order; do
		echo "module $m"
		for w in "node getattr 1" "node getattr 4" "nodecpus getattr 4" \
			 "node read 4" "nodecpus read 4" "bound getattr 4"; do
			echo "run 120 fuse_bench $w 2000"
		done
	done
done > "$out/plan"
rig/initramfs.sh "$out/initramfs.cpio.gz" "$out/plan" "$out/mods" build/7.3/tests
BASE=7.3 rig/guest.sh build/7.3/kernel-bench/arch/x86/boot/bzImage \
	"$out/initramfs.cpio.gz" "$out" 2node 1500
python3 "$here/sync_table.py" "$out/results.log"
