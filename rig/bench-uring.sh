#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-uring: bound /dev/fuse beside FUSE-over-io-uring, on one
# kernel (7.3's benchmark kernel, FUSE_IO_URING=y) and in one boot.  Each
# transport runs the same workloads, the modules taking turns going first:
#   stock     stock fuse.ko, a clone per CPU (libfuse -o clone_fd)
#   io-uring  stock fuse.ko, a ring queue per CPU (enable_uring=1)
#   unbound   ours, a clone per CPU, not bound
#   cpu       ours, a clone bound to each CPU (-o clone_bind=cpu)
#   node      ours, a clone bound to each node, one reader thread each
#             (-o clone_bind=node): what io-uring cannot serve, since it
#             wants a queue, and a thread, for every CPU
# Workloads: fuse_bench's getattr and 4 KiB direct reads against its raw
# server (the same minimal daemon on every transport: its ring mode for
# io-uring), one caller and one per vCPU; fio against libfuse 3.18's
# passthrough_hp and passthrough_ll (sid's fuse3, rig/libfuse318.sh:
# clone_fd, -o io_uring, -o clone_bind=cpu|node): 4 KiB direct random
# reads with the psync and io_uring engines, one job and one per vCPU, iodepth 1 and
# 4, sequential buffered reads (readahead), and fio's metadata jobs.
# Then kernel instructions per getattr and per 4 KiB read of each
# transport on QEMU's instruction clock (rig/pathprof.sh, 2 vCPUs), and
# the cacheline model with the same transports at 4 to 32 vCPUs in 1, 2
# and 4 nodes (rig/bench-lines.sh, without its probe boot, go-fuse and
# the slow-request runs; about 40 minutes).
# Writes build/7.3/bench-uring/results.md (rig/uring_report.py) and
# build/7.3/bench-uring/lines/results.md.
# Environment: URING_TOPO (2node), URING_REPEATS (3), URING_OPS
# (fuse_bench operations per caller, 2000), URING_FIO_RUNTIME (3 s),
# URING_PATHPROF (1; 0: no instruction-clock part), URING_PATHPROF_OPS
# (5000), URING_LINES (1; 0: no cacheline model; LINES_* narrow it),
# URING_OUT.
. "$(dirname "$0")/lib.sh"

[ "$BASE" = 7.3 ] || die "make bench-uring runs on 7.3 (FUSE-over-io-uring is Linux 6.14 and later)"
export RIG_LIBFUSE=3.18
bench_build
"$TOP/rig/fio.sh"
"$TOP/rig/selftests.sh"

reps=${URING_REPEATS:-3}
ops=${URING_OPS:-2000}
rt=${URING_FIO_RUNTIME:-3}
topo=${URING_TOPO:-2node}
out=${URING_OUT:-$B/bench-uring}
case "$topo" in
2node|1node) ncpu=4 ;;
*) ncpu=$(echo "$topo" | sed -n 's/.*smp=\([0-9]*\).*/\1/p') ;;
esac
rm -rf "$out"
mkdir -p "$out/transports"

for ((r = 1; r <= reps; r++)); do
	for m in $(module_order "$r"); do
		echo "module $m"
		if [ $m = stock ]; then
			modes="unbound uring"
			fmodes="hp-stock hp-uring ll-stock ll-uring"
		else
			modes="unbound bound node"
			fmodes="hp-ours hp-node ll-ours ll-node"
		fi
		for wl in getattr read; do
			for t in 1 "$ncpu"; do
				for mode in $modes; do
					echo "run 300 fuse_bench $mode $wl $t $ops"
				done
			done
		done
		for fm in $fmodes; do
			echo "sh 1200 FIO_ENGINES='psync io_uring' FIO_SEQ=1 /tests/fuse_fio_bench.sh $fm $rt '1 $ncpu' '1 4' '$ncpu'"
		done
	done
done > "$out/transports/plan"
"$TOP/rig/initramfs.sh" "$out/transports/initramfs.cpio.gz" \
	"$out/transports/plan" "$B/modules-bench" "$B/tests"
t0=$(date +%s)
"$TOP/rig/guest.sh" "$B/kernel-bench/arch/x86/boot/bzImage" \
	"$out/transports/initramfs.cpio.gz" "$out/transports" "$topo" \
	"${URING_TIMEOUT:-5400}"
log "bench-uring transports: $(($(date +%s) - t0)) s"
grep -q '^### DONE' "$out/transports/results.log" ||
	die "the guest did not finish: see $out/transports/console.log"

pdirs=()
if [ "${URING_PATHPROF:-1}" = 1 ]; then
	for wl in getattr read; do
		PATHPROF_OUT=$out/pathprof-$wl PATHPROF_WORKLOAD=$wl \
			PATHPROF_OPS=${URING_PATHPROF_OPS:-5000} \
			PATHPROF_STOCK_MODES="unbound uring" \
			PATHPROF_MODES="unbound bound node" \
			"$TOP/rig/pathprof.sh" > /dev/null
		pdirs+=("$out/pathprof-$wl")
	done
fi
if [ "${URING_LINES:-1}" = 1 ]; then
	log "the cacheline model, 4 to 32 vCPUs (log: $out/lines.log)"
	LINES_PROBE=0 LINES_GOFUSE=0 LINES_REPEAT=0 LINES_MIXED_TOPOS=none \
		LINES_OUT=$out/lines "$TOP/rig/bench-lines.sh" > "$out/lines.log"
fi
python3 "$TOP/rig/uring_report.py" "$out/results.md" "$out/transports" \
	${pdirs[@]+"${pdirs[@]}"}
[ "${URING_LINES:-1}" != 1 ] ||
	echo "The cacheline model of the same transports: $out/lines/results.md"
