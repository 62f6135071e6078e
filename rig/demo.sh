#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: build fuse.ko (stock and ours), boot a 4-CPU, 2-node guest,
# and run the same workload through one clone per CPU twice: on stock
# fuse.ko with unbound clones (what libfuse -o clone_fd gets today), and on
# ours with each clone bound to its CPU.
. "$(dirname "$0")/lib.sh"

"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
"$TOP/rig/kernel.sh" debug "$SELFTEST_DIR/config"
KBUILD_EXTRA="CONFIG_FUSE_CLONE_QUEUE_KUNIT_TEST=y" \
	"$TOP/rig/modules.sh" "$B/kernel-debug" "$B/modules-debug" stock ours
"$TOP/rig/selftests.sh"

dir=$B/runs/demo
mkdir -p "$dir"
printf '%s\n' "module stock" "run 300 fuse_demo unbound" \
	"module ours" "run 300 fuse_demo bound" > "$dir/plan"
"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
	"$B/modules-debug" "$B/tests"
"$TOP/rig/guest.sh" "$B/kernel-debug/arch/x86/boot/bzImage" \
	"$dir/initramfs.cpio.gz" "$dir" 2node 900

tr -d '\r' < "$dir/results.log" | awk '
	/^### MODULE/ { printf "\n=== %s fuse.ko ===\n", $3 }
	/^### RUN/ { show = 1; next }
	/^### EXIT/ { show = 0; if ($3 != 0) { bad = 1; print "(exit " $3 ")" } }
	show { print }
	END { exit bad }'
grep -q '^### DONE' "$dir/results.log" || die "the guest did not finish: see $dir/console.log"
log "guest logs: $dir (kernel: console.log, guest output: results.log)"
