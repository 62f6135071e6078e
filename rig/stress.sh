#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make stress [DURATION=seconds] [TOPO=2node|1node|"smp=N nodes=M"]
#             [FLAVOR=debug|kcsan|rt]: a long soak of fuse_stress_test on
# our fuse.ko, and the verdict as make check prints it.  FLAVOR=debug (the
# default): the debug guest (lockdep, KASAN, kmemleak), then a kmemleak
# scan.  FLAVOR=kcsan: a guest with the KCSAN data-race detector instead
# of KASAN, which first runs the bind, paths and work-conserving tests;
# a KCSAN report that names fuse fails the run.  FLAVOR=rt: PREEMPT_RT.
# The short form of the same test runs in make check.
. "$(dirname "$0")/lib.sh"

duration=${1:-600}
topo=${2:-2node}
case "$duration" in ''|*[!0-9]*) die "DURATION must be a number of seconds" ;; esac

flavor=${FLAVOR:-debug}
frags=()
case "$flavor" in
debug) ;;
kcsan|rt) frags+=("$TOP/rig/$flavor.config") ;;
*) die "FLAVOR must be debug, kcsan or rt" ;;
esac

"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
"$TOP/rig/kernel.sh" "$flavor" ${frags[@]+"${frags[@]}"}
KBUILD_EXTRA="CONFIG_FUSE_DEV_QUEUE_KUNIT_TEST=m" \
	"$TOP/rig/modules.sh" "$B/kernel-$flavor" "$B/modules-$flavor" ours
"$TOP/rig/selftests.sh"

dir=$B/runs/stress-$flavor
rm -rf "$dir"
mkdir -p "$dir"
plan=("module ours")
[ "$flavor" = debug ] || plan+=("run 900 fuse_bind_test" "run 900 fuse_paths_test" \
				"run 900 fuse_wc_test")
plan+=("run $((duration + 300)) fuse_stress_test -d $duration -r 5 -s ${SEED:-$RANDOM}")
[ "$flavor" = debug ] && plan+=("run 300 fuse_kmemleak.sh")
printf '%s\n' "${plan[@]}" > "$dir/plan"
"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
	"$B/modules-$flavor" "$B/tests"
"$TOP/rig/guest.sh" "$B/kernel-$flavor/arch/x86/boot/bzImage" \
	"$dir/initramfs.cpio.gz" "$dir" "$topo" $((duration + 3600))
tr -d '\r' < "$dir/results.log" | grep '^# ' | grep -v '^# *\(RUN\|OK\)' || true
python3 "$TOP/rig/verdict.py" "$dir"
