#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# results.md, third boot: pingpong.c (here), two threads or two processes,
# on one vCPU or two, 3 rounds, in the 7.3 benchmark kernel (4 vCPUs, 2
# nodes), no FUSE:
#   bash bench/2026-12-06-dio-depth1/pingpong.sh OUT
set -eu
out=$(realpath -m "$1")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/tests"
cp -r build/7.3/tests/. "$out/tests"
gcc -static -O2 -Wall -pthread -o "$out/tests/pingpong" "$here/pingpong.c"
for r in 1 2 3; do
	for m in "same thread" "same process" "cross thread" "cross process"; do
		echo "run 60 pingpong $m 20000"
	done
done > "$out/plan"
rig/initramfs.sh "$out/initramfs.cpio.gz" "$out/plan" build/7.3/modules-bench "$out/tests"
BASE=7.3 rig/guest.sh build/7.3/kernel-bench/arch/x86/boot/bzImage \
	"$out/initramfs.cpio.gz" "$out" 2node 600
grep '^@pingpong' "$out/results.log"
