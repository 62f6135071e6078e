#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: stock fuse.ko and ours in the same guest boot, unloaded and
# loaded in turn with alternating order, on a kernel without debug options;
# then the same workloads on 2 vCPUs under QEMU's instruction clock
# (-icount: one host thread, guest time counts instructions), where the
# table is of instructions per request and what ours adds to stock's
# kernel path; then a CONFIG_LOCK_STAT kernel for input-queue lock
# contention.  Writes build/bench/<topology>/ and prints the tables and a
# verdict line saying how many ratios are noise (rig/bench_report.py).
# Environment: BENCH_TOPOS (default "smp=2 nodes=1|2node"; "none": no
# wall-clock run), BENCH_REPEATS (3), BENCH_OPS (operations per thread,
# 2000), BENCH_LOCKSTAT (1), BENCH_MIXED_OPS (operations per thread of the
# mixed workload, 1000), BENCH_ICOUNT (1), BENCH_ICOUNT_REPEATS (3),
# BENCH_FIO (1: also fio against libfuse daemons, rig/fio-bench.sh),
# GUEST_ACCEL (tcg; kvm where KVM boots guests), GUEST_MEM (MiB per node,
# 512), BENCH_OUT (build/bench), BENCH_LOCKSTAT_TOPO (topologies of the
# lockstat runs, "2node"; "2node|smp=8 nodes=2" wants 8 host cores).
# make bench-manycore sets these for a machine with 16 or more cores.
. "$(dirname "$0")/lib.sh"

bench_build
"$TOP/rig/selftests.sh"

reps=${BENCH_REPEATS:-3}
ops=${BENCH_OPS:-2000}
IFS='|' read -r -a topos <<< "${BENCH_TOPOS:-smp=2 nodes=1|2node}"
[ "${BENCH_TOPOS:-}" = none ] && topos=()
out=${BENCH_OUT:-$B/bench}
mkdir -p "$out"

# 1..N on small guests; powers of two and N on many-core ones
thread_counts() {
	local n=$1 t
	if [ "$n" -le 4 ]; then
		seq 1 "$n"
		return
	fi
	for ((t = 1; t < n; t *= 2)); do
		echo $t
	done
	echo "$n"
}

plan() {	# NCPU
	local ncpu=$1 r m wl t mode
	for ((r = 1; r <= reps; r++)); do
		for m in $(module_order "$r"); do
			echo "module $m"
			for wl in getattr read dread open create; do
				threads="1 $ncpu"
				[ $wl = getattr ] && threads=$(thread_counts "$ncpu")
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
		# Slow requests among fast ones: a bound clone whose reader is
		# busy must not hold its CPU's requests
		for m in $order; do
			echo "module $m"
			for mode in unbound bound; do
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
		"$dir/initramfs.cpio.gz" "$dir" "$topo" "${BENCH_TIMEOUT:-3000}"
	results+=("$dir")
done

if [ "${BENCH_ICOUNT:-1}" = 1 ]; then
	dir=$out/icount-smp-2
	mkdir -p "$dir"
	for ((r = 1; r <= ${BENCH_ICOUNT_REPEATS:-3}; r++)); do
		for m in $(module_order "$r"); do
			echo "module $m"
			# One caller: the path is serial and its length exact;
			# with more, how the vCPUs interleave decides the result
			for wl in getattr read dread open create; do
				for mode in single unbound bound; do
					[ $m = stock ] && [ $mode = bound ] && continue
					echo "run 600 fuse_bench $mode $wl 1 $ops"
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
	"$TOP/rig/kernel.sh" lockstat "$TOP/rig/bench.config" "$TOP/rig/lockstat.config"
	"$TOP/rig/modules.sh" "$B/kernel-lockstat" "$B/modules-lockstat" stock ours
	# Instant getattr by 64 callers, and the saturated mixed workload
	# (4 callers per vCPU, one request in 100 held 20 ms by its handler)
	IFS='|' read -r -a ltopos <<< "${BENCH_LOCKSTAT_TOPO:-2node}"
	for topo in "${ltopos[@]}"; do
		dir=$out/lockstat-${topo//[ =]/}
		mkdir -p "$dir"
		for m in stock ours; do
			echo "module $m"
			for mode in unbound bound; do
				[ $m = stock ] && [ $mode = bound ] && continue
				for wl in "getattr 64 $ops" "mixed -4 ${BENCH_MIXED_OPS:-1000}"; do
					echo "sh 60 echo 0 > /proc/lock_stat"
					echo "run 300 fuse_bench $mode $wl"
					echo "sh 60 echo LOCKSTAT $m $mode ${wl%% *}; grep -E '&fiq->lock|fuse_bound_lock_key' /proc/lock_stat"
				done
			done
		done > "$dir/plan"
		"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
			"$B/modules-lockstat" "$B/tests"
		"$TOP/rig/guest.sh" "$B/kernel-lockstat/arch/x86/boot/bzImage" \
			"$dir/initramfs.cpio.gz" "$dir" "$topo" 2400
		results+=("lockstat:$dir")
	done
fi

python3 "$TOP/rig/bench_report.py" "$out" "${results[@]}"

# fio against libfuse daemons, stock against ours (BENCH_FIO=0: not)
if [ "${BENCH_FIO:-1}" = 1 ]; then
	"$TOP/rig/fio-bench.sh"
fi

# One line for the whole run: which of its figures are noise
echo "make bench: $(sed -n 's/^Verdict: \(.*\)\.$/\1/p' "$out/results.md" \
	$([ "${BENCH_FIO:-1}" = 1 ] && echo "$out/fio/results.md") | paste -sd ';' | sed 's/;/; /g')."
