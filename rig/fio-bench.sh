#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench (and make bench-fio alone): fio against libfuse's example
# daemons over tmpfs in the benchmark guest (no debug options), stock and
# ours side by side in one boot, alternating which goes first: Debian's
# libfuse with -o clone_fd on stock fuse.ko against our libfuse with
# -o clone_bind=cpu on ours, for passthrough_ll and passthrough_hp, and fio
# on tmpfs without FUSE as the ceiling.  Writes build/bench/fio/results.md.
# Then the same on 2 vCPUs under QEMU's instruction clock (-icount), free
# of host noise.  Environment: FIO_TOPO (2node), FIO_REPEATS (3),
# FIO_RUNTIME (seconds per fio run, 3), FIO_DEPTHS ("1 4 8"), FIO_JOBS
# (1..vCPUs), FIO_MODES (all: "nofuse ll-stock ll-ours hp-stock hp-ours"),
# FIO_ICOUNT (1: also the instruction-clock run), FIO_ICOUNT_RUNTIME (2).
. "$(dirname "$0")/lib.sh"

bench_build
"$TOP/rig/fio.sh"
"$TOP/rig/selftests.sh"

reps=${FIO_REPEATS:-3}
modes=${FIO_MODES:-nofuse ll-stock ll-ours hp-stock hp-ours}
out=${BENCH_OUT:-$B/bench}/fio
mkdir -p "$out"

has() { case " $modes " in *" $1 "*) return 0 ;; esac; return 1; }

# fio_guest NAME TOPOLOGY ICOUNT RUNTIME JOBS DEPTHS METAJOBS: one boot,
# $reps repeats, the modules taking turns going first; an empty JOBS
# (METAJOBS) is one job per vCPU, 1..N (1 and N)
fio_guest() {
	local name=$1 topo=$2 icount=$3 rt=$4 jobs=$5 depths=$6 metajobs=$7
	local dir=$out/$name r m mode runs start
	mkdir -p "$dir"
	for ((r = 1; r <= reps; r++)); do
		for m in $(module_order "$r"); do
			echo "module $m"
			if [ $m = stock ]; then
				runs="nofuse ll-stock hp-stock"
			else
				runs="ll-ours hp-ours"
			fi
			for mode in $runs; do
				has $mode || continue
				echo "sh 1200 /tests/fuse_fio_bench.sh $mode $rt '$jobs' '$depths' '$metajobs'"
			done
		done
	done > "$dir/plan"
	"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
		"$B/modules-bench" "$B/tests"
	start=$(date +%s)
	GUEST_ICOUNT=$icount "$TOP/rig/guest.sh" "$B/kernel-bench/arch/x86/boot/bzImage" \
		"$dir/initramfs.cpio.gz" "$dir" "$topo" "${FIO_TIMEOUT:-7200}"
	log "fio guest $name: $(($(date +%s) - start)) s"
	grep -q '^### DONE' "$dir/results.log" || die "the guest did not finish: see $dir/console.log"
}

sections=()
topo=${FIO_TOPO:-2node}	# none: only the instruction-clock run
name=$(echo "$topo" | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//')
if [ "$topo" != none ]; then
	fio_guest "$name" "$topo" 0 "${FIO_RUNTIME:-3}" "${FIO_JOBS:-}" "${FIO_DEPTHS:-1 4 8}" ""
fi
[ -f "$out/$name/results.log" ] &&
	sections+=("$topo, multi-threaded TCG (wall-clock time)|$out/$name")
# The same on QEMU's instruction clock: 2 vCPUs on one host thread, guest
# time counts instructions, free of host noise but without parallelism.
# One job only: two jobs that do not overlap in guest time would each
# report a full runtime's throughput, and their sum comes out doubled.
if [ "${FIO_ICOUNT:-1}" = 1 ]; then
	fio_guest icount-smp-2 "smp=2 nodes=1" 1 "${FIO_ICOUNT_RUNTIME:-2}" 1 \
		"${FIO_DEPTHS:-1 4 8}" 1
	sections+=("smp=2 nodes=1, QEMU instruction clock (-icount)|$out/icount-smp-2")
fi
python3 "$TOP/rig/fio_report.py" "$out/results.md" "${sections[@]}"
