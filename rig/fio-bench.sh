#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench (and make bench-fio alone): fio against libfuse's example
# daemons over tmpfs in the benchmark guest (no debug options), stock and
# ours side by side in one boot, alternating which goes first: Debian's
# libfuse with -o clone_fd on stock fuse.ko against our libfuse with
# -o clone_bind=cpu on ours, for passthrough_ll and passthrough_hp, and fio
# on tmpfs without FUSE as the ceiling.  Writes build/bench/fio/results.md.
# Environment: FIO_TOPO (2node), FIO_REPEATS (3), FIO_RUNTIME (seconds per
# fio run, 3), FIO_DEPTHS ("1 4 8"), FIO_JOBS (1..vCPUs), FIO_MODES (all:
# "nofuse ll-stock ll-ours hp-stock hp-ours").
. "$(dirname "$0")/lib.sh"

FRAG=$SELFTEST_DIR/config
"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
"$TOP/rig/kernel.sh" bench "$FRAG" "$TOP/rig/bench.config"
"$TOP/rig/modules.sh" "$B/kernel-bench" "$B/modules-bench" stock ours
"$TOP/rig/fio.sh"
"$TOP/rig/selftests.sh"

topo=${FIO_TOPO:-2node}
reps=${FIO_REPEATS:-3}
rt=${FIO_RUNTIME:-3}
depths=${FIO_DEPTHS:-1 4 8}
modes=${FIO_MODES:-nofuse ll-stock ll-ours hp-stock hp-ours}
dir=$B/bench/fio
mkdir -p "$dir"

has() { case " $modes " in *" $1 "*) return 0 ;; esac; return 1; }
for ((r = 1; r <= reps; r++)); do
	order="stock ours"
	[ $((r % 2)) = 0 ] && order="ours stock"
	for m in $order; do
		echo "module $m"
		if [ $m = stock ]; then
			runs="nofuse ll-stock hp-stock"
		else
			runs="ll-ours hp-ours"
		fi
		for mode in $runs; do
			has $mode || continue
			echo "sh 1200 /tests/fuse_fio_bench.sh $mode $rt '${FIO_JOBS:-}' '$depths'"
		done
	done
done > "$dir/plan"	# an empty FIO_JOBS: one job per vCPU, 1..N

"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
	"$B/modules-bench" "$B/tests"
start=$(date +%s)
"$TOP/rig/guest.sh" "$B/kernel-bench/arch/x86/boot/bzImage" \
	"$dir/initramfs.cpio.gz" "$dir" "$topo" "${FIO_TIMEOUT:-7200}"
log "fio guest: $(($(date +%s) - start)) s"
grep -q '^### DONE' "$dir/results.log" || die "the guest did not finish: see $dir/console.log"
python3 "$TOP/rig/fio_report.py" "$dir/results.md" "$dir"
