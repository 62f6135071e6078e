#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The routing tests of this commit against the fuse.ko of an earlier
# commit's series (REV, default f1285f9: the reservation core), then
# against this commit's, in two boots of the 6.12 debug guest (4 vCPUs,
# 2 nodes).  The earlier series is applied to the same 6.12 base; the
# tests, the kernel and the stock module are this commit's.
# usage: bench/2026-12-06-old-core/run.sh [REV]   (from the repository)
set -euo pipefail
export BASE=6.12
. "$(git rev-parse --show-toplevel)/rig/lib.sh"
rev=${1:-f1285f9}
old=$B/old-core
plan=("module ours" "run 300 fuse_dev_test" "run 600 fuse_bind_test"
      "run 1200 fuse_readers_test" "run 600 fuse_fire_test")

"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
"$TOP/rig/kernel.sh" debug
"$TOP/rig/modules.sh" "$B/kernel-debug" "$B/modules-debug" stock ours
"$TOP/rig/selftests.sh"

base=$(git -C "$B/work" log --format=%H --grep='^base: ' -1)
rm -rf "$old"
git -C "$B/work" worktree prune
git -C "$B/work" worktree add -q --detach "$old/tree" "$base"
git -C "$TOP" show "$rev:patches/$BASE/series" > "$old/series"
while read -r p; do
	git -C "$TOP" show "$rev:patches/$BASE/$p"
done < "$old/series" > "$old/series.mbox"
git -C "$old/tree" -c user.name=rig -c user.email=rig@localhost \
	am -q -3 "$old/series.mbox"
mkdir -p "$old/src/include/uapi/linux" "$old/modules"
cp -r "$old/tree/fs/fuse/." "$old/src/"
cp "$old/tree/include/uapi/linux/fuse.h" "$old/src/include/uapi/linux/"
oot_kbuild "$old/src" "$(make -s -C "$(base_dir)" kernelversion)"
make -s -C "$B/kernel-debug" M="$old/src" -j"$JOBS" modules
cp "$old/src/fuse.ko" "$old/modules/ours.ko"
git -C "$B/work" worktree remove --force "$old/tree"

guest_plan "old-core-$rev" "$B/kernel-debug/arch/x86/boot/bzImage" \
	"$old/modules" 2node "${plan[@]}"
guest_plan old-core-head "$B/kernel-debug/arch/x86/boot/bzImage" \
	"$B/modules-debug" 2node "${plan[@]}"
for r in "old-core-$rev" old-core-head; do
	echo "== $r"
	python3 "$TOP/rig/verdict.py" "$B/runs/$r" | grep -v '^PASS' || true
done
