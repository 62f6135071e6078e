#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-manycore: make bench sized for a host with 16 or more cores,
# where each vCPU gets a host core of its own and cross-CPU wakeups cost
# what they cost on hardware.  Guests of MANYCORE_CPUS vCPUs (default: the
# host's cores, at most 32, rounded down to a multiple of 4) in 2 and in 4
# NUMA nodes, under KVM when it boots a guest here (tried first, with a
# 60 s limit), else under TCG.  Lock statistics on the first topology,
# fio on 2 nodes; the 2-vCPU instruction-clock table as in make bench.
# Writes build/bench-manycore/.  Set MANYCORE_FORCE=1 to run it on fewer
# cores anyway (the figures then measure the host's overcommit).  A box
# that has no packages runs make bench-bundle's one file instead.
. "$(dirname "$0")/lib.sh"

cores=$(nproc)
cpus=${MANYCORE_CPUS:-$((cores < 32 ? cores : 32))}
cpus=$((cpus / 4 * 4))
if [ "$cpus" -lt 16 ] && [ "${MANYCORE_FORCE:-0}" != 1 ]; then
	die "this host has $cores cores; make bench-manycore wants 16 or more (MANYCORE_FORCE=1 runs it anyway)"
fi
[ "$cpus" -ge 4 ] || die "MANYCORE_CPUS must be at least 4"

bench_build
"$TOP/rig/selftests.sh"

out=$B/bench-manycore
mkdir -p "$out"

# Does KVM boot a guest here?  A plan that only powers off, 60 s at most.
accel=tcg
if [ -w /dev/kvm ] && [ "${GUEST_ACCEL:-}" != tcg ]; then
	probe=$out/kvm-probe
	mkdir -p "$probe"
	echo "sh 10 true" > "$probe/plan"
	"$TOP/rig/initramfs.sh" "$probe/initramfs.cpio.gz" "$probe/plan" \
		"$B/modules-bench" "$B/tests"
	GUEST_ACCEL=kvm "$TOP/rig/guest.sh" "$B/kernel-bench/arch/x86/boot/bzImage" \
		"$probe/initramfs.cpio.gz" "$probe" "smp=2 nodes=1" 60
	grep -q '^### DONE' "$probe/results.log" 2>/dev/null && accel=kvm
fi
log "many-core benchmark: $cpus vCPUs, accelerator $accel"
echo "accel $accel" > "$out/accel.txt"

topos="smp=$cpus nodes=2|smp=$cpus nodes=4"
GUEST_ACCEL=$accel BENCH_OUT=$out BENCH_TOPOS=$topos \
	BENCH_LOCKSTAT_TOPO="smp=$cpus nodes=2" FIO_TOPO="smp=$cpus nodes=2" \
	BENCH_TIMEOUT=${BENCH_TIMEOUT:-7200} "$TOP/rig/bench.sh"
