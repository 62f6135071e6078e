#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make stress [DURATION=seconds] [TOPO=2node|1node|"smp=N nodes=M"]: a long
# soak of fuse_stress_test on our fuse.ko in the debug guest (lockdep,
# KASAN, kmemleak), then a kmemleak scan; the verdict as make check prints
# it.  The short form of the same test runs in make check.
. "$(dirname "$0")/lib.sh"

duration=${1:-600}
topo=${2:-2node}
case "$duration" in ''|*[!0-9]*) die "DURATION must be a number of seconds" ;; esac

"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
"$TOP/rig/kernel.sh" debug "$SELFTEST_DIR/config"
KBUILD_EXTRA="CONFIG_FUSE_CLONE_QUEUE_KUNIT_TEST=y" \
	"$TOP/rig/modules.sh" "$B/kernel-debug" "$B/modules-debug" ours
"$TOP/rig/selftests.sh"

dir=$B/runs/stress
rm -rf "$dir"
mkdir -p "$dir"
printf '%s\n' "module ours" \
	"run $((duration + 300)) fuse_stress_test -d $duration -r 5 -s ${SEED:-$RANDOM}" \
	"run 300 fuse_kmemleak.sh" > "$dir/plan"
"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
	"$B/modules-debug" "$B/tests"
"$TOP/rig/guest.sh" "$B/kernel-debug/arch/x86/boot/bzImage" \
	"$dir/initramfs.cpio.gz" "$dir" "$topo" $((duration + 900))
tr -d '\r' < "$dir/results.log" | grep '^# ' | grep -v '^# *\(RUN\|OK\)' || true
python3 "$TOP/rig/verdict.py" "$dir"
