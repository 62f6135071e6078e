#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: stock fuse.ko and ours in the same guest boot, unloaded and
# loaded in turn with alternating order, on a kernel without debug options;
# then the same workloads on a CONFIG_LOCK_STAT kernel for input-queue lock
# contention.  Writes build/bench/<topology>/ and prints the table.
# Environment: BENCH_TOPOS (default "smp=2 nodes=1|2node"; "none": only
# the lock statistics), BENCH_REPEATS
# (3), BENCH_OPS (operations per thread, 2000), BENCH_LOCKSTAT (1),
# BENCH_MIXED_OPS (operations per thread of the mixed workload, 1000),
# BENCH_ICOUNT (1: also 2 vCPUs on QEMU's instruction clock, where ops/s
# measure instructions per request, to compare the unbound paths within a
# few percent), BENCH_ICOUNT_REPEATS (5), BENCH_FIO (1: also fio against
# libfuse daemons, rig/fio-bench.sh).
. "$(dirname "$0")/lib.sh"

FRAG=$SELFTEST_DIR/config
bench_build
"$TOP/rig/selftests.sh"

reps=${BENCH_REPEATS:-3}
ops=${BENCH_OPS:-2000}
IFS='|' read -r -a topos <<< "${BENCH_TOPOS:-smp=2 nodes=1|2node}"
[ "${BENCH_TOPOS:-}" = none ] && topos=()
out=$B/bench
mkdir -p "$out"

plan() {	# NCPU
	local ncpu=$1 r m wl t mode order
	for ((r = 1; r <= reps; r++)); do
		order="stock ours"
		[ $((r % 2)) = 0 ] && order="ours stock"
		for m in $order; do
			echo "module $m"
			for wl in getattr read open create; do
				threads="1 $ncpu"
				[ $wl = getattr ] && threads=$(seq 1 "$ncpu")
				for t in $threads; do
					for mode in single unbound bound; do
						[ $m = stock ] && [ $mode = bound ] && continue
						echo "run 300 fuse_bench $mode $wl $t $ops"
					done
				done
			done
		done
		echo "run 60 fuse_bench pipe same $((ops * 10))"
		echo "run 60 fuse_bench pipe cross $((ops * 10))"
		# Slow requests among fast ones: what work-conserving routing is for
		for m in $order; do
			echo "module $m"
			for mode in unbound strict bound; do
				[ $m = stock ] && [ $mode != unbound ] && continue
				echo "run 300 fuse_bench $mode mixed $((4 * ncpu)) ${BENCH_MIXED_OPS:-1000}"
			done
		done
	done
}

results=()
for topo in ${topos[@]+"${topos[@]}"}; do
	name=$(echo "$topo" | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//')
	case "$topo" in
	2node|1node) ncpu=4 ;;
	*) ncpu=$(echo "$topo" | sed -n 's/.*smp=\([0-9]*\).*/\1/p') ;;
	esac
	dir=$out/$name
	mkdir -p "$dir"
	plan "$ncpu" > "$dir/plan"
	"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
		"$B/modules-bench" "$B/tests"
	"$TOP/rig/guest.sh" "$B/kernel-bench/arch/x86/boot/bzImage" \
		"$dir/initramfs.cpio.gz" "$dir" "$topo" 3000
	results+=("$dir")
done

if [ "${BENCH_ICOUNT:-1}" = 1 ]; then
	dir=$out/icount-smp-2
	mkdir -p "$dir"
	for ((r = 1; r <= ${BENCH_ICOUNT_REPEATS:-5}; r++)); do
		order="stock ours"
		[ $((r % 2)) = 0 ] && order="ours stock"
		for m in $order; do
			echo "module $m"
			for wl in getattr read open; do
				for t in 1 2; do
					for mode in single unbound bound; do
						[ $m = stock ] && [ $mode = bound ] && continue
						echo "run 600 fuse_bench $mode $wl $t $ops"
					done
				done
			done
		done
	done > "$dir/plan"
	"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
		"$B/modules-bench" "$B/tests"
	GUEST_ICOUNT=1 "$TOP/rig/guest.sh" "$B/kernel-bench/arch/x86/boot/bzImage" \
		"$dir/initramfs.cpio.gz" "$dir" "smp=2 nodes=1" 5400
	results+=("$dir")
fi

if [ "${BENCH_LOCKSTAT:-1}" = 1 ]; then
	"$TOP/rig/kernel.sh" lockstat "$FRAG" "$TOP/rig/bench.config" "$TOP/rig/lockstat.config"
	"$TOP/rig/modules.sh" "$B/kernel-lockstat" "$B/modules-lockstat" stock ours
	dir=$out/lockstat
	mkdir -p "$dir"
	for m in stock ours; do
		echo "module $m"
		for mode in unbound bound; do
			[ $m = stock ] && [ $mode = bound ] && continue
			echo "sh 60 echo 0 > /proc/lock_stat"
			echo "run 300 fuse_bench $mode getattr 4 $ops"
			echo "sh 60 echo LOCKSTAT $m $mode; grep -E '&fiq->' /proc/lock_stat"
		done
	done > "$dir/plan"
	"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
		"$B/modules-lockstat" "$B/tests"
	"$TOP/rig/guest.sh" "$B/kernel-lockstat/arch/x86/boot/bzImage" \
		"$dir/initramfs.cpio.gz" "$dir" 2node 1500
	results+=("lockstat:$dir")
fi

python3 "$TOP/rig/bench_report.py" "$out" "${results[@]}"

# fio against libfuse daemons, stock against ours (BENCH_FIO=0: not)
if [ "${BENCH_FIO:-1}" = 1 ]; then
	"$TOP/rig/fio-bench.sh"
fi
