#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: build what is missing, run the suite in the guest against our
# fuse.ko (and stock fuse.ko where it applies) in two topologies, and print
# the verdict.  The last line is "N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"

FRAG=$SELFTEST_DIR/config
"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
"$TOP/rig/kernel.sh" debug "$FRAG"
KBUILD_EXTRA="CONFIG_FUSE_CLONE_QUEUE_KUNIT_TEST=y" \
	"$TOP/rig/modules.sh" "$B/kernel-debug" "$B/modules-debug" stock ours
"$TOP/rig/selftests.sh"

runs=()
guest_run() {	# NAME TOPOLOGY PLAN-LINES...
	local name=$1 topo=$2; shift 2
	local dir=$B/runs/$name
	mkdir -p "$dir"
	printf '%s\n' "$@" > "$dir/plan"
	"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
		"$B/modules-debug" "$B/tests"
	"$TOP/rig/guest.sh" "$B/kernel-debug/arch/x86/boot/bzImage" \
		"$dir/initramfs.cpio.gz" "$dir" "$topo" "${GUEST_TIMEOUT:-1500}"
	runs+=("$dir")
}

rm -rf "$B/runs"
guest_run 2node 2node \
	"module stock" \
	"run 300 fuse_rig_test" \
	"module ours" \
	"run 300 fuse_rig_test" \
	"run 600 fuse_bind_test" \
	"run 600 fuse_paths_test"
guest_run 1node 1node \
	"module ours" \
	"run 600 fuse_bind_test" \
	"run 600 fuse_paths_test"

# Host-side checks: each patch builds alone, checkpatch --strict and
# sparse are clean
mkdir -p "$B/runs/host"
"$TOP/rig/series-check.sh" "$B/kernel-debug" > "$B/runs/host/series.tap" || true
if "$TOP/rig/checkpatch.sh" > "$B/runs/host/checkpatch.log" 2>&1; then
	echo "ok 1 checkpatch --strict on the series and fs/fuse/*" > "$B/runs/host/checkpatch.tap"
else
	sed 's/^/# /' "$B/runs/host/checkpatch.log"
	echo "not ok 1 checkpatch --strict on the series and fs/fuse/*" > "$B/runs/host/checkpatch.tap"
fi

"$TOP/rig/sparse.sh" "$B/kernel-debug" > "$B/runs/host/sparse.tap"

python3 "$TOP/rig/verdict.py" "${runs[@]}" \
	"tap:host:$B/runs/host/series.tap" "tap:host:$B/runs/host/checkpatch.tap" \
	"tap:host:$B/runs/host/sparse.tap"
