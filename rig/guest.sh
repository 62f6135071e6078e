#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a guest under QEMU/TCG and wait for it to power off.
# usage: guest.sh KERNEL INITRAMFS OUTDIR TOPOLOGY [TIMEOUT]
#   TOPOLOGY: 2node (4 CPUs, nodes 0-1 and 2-3), 1node (4 CPUs on node 0
#   and a memory-only node 1), or "smp=N nodes=M" (N CPUs in M equal nodes)
# OUTDIR gets console.log (ttyS0: the kernel) and results.log (ttyS1: tests).
. "$(dirname "$0")/lib.sh"

kernel=$1 initrd=$2 out=$3 topo=$4 tmo=${5:-1500}
mkdir -p "$out"
rm -f "$out/console.log" "$out/results.log"
mem=${GUEST_MEM:-512}	# MiB per node
numa=()
case "$topo" in
2node)
	smp=4,sockets=2,cores=2,threads=1
	numa=(-object memory-backend-ram,id=m0,size=${mem}M
	      -object memory-backend-ram,id=m1,size=${mem}M
	      -numa node,nodeid=0,cpus=0-1,memdev=m0
	      -numa node,nodeid=1,cpus=2-3,memdev=m1) ;;
1node)
	smp=4,sockets=1,cores=4,threads=1
	numa=(-object memory-backend-ram,id=m0,size=${mem}M
	      -object memory-backend-ram,id=m1,size=${mem}M
	      -numa node,nodeid=0,cpus=0-3,memdev=m0
	      -numa node,nodeid=1,memdev=m1) ;;
*)
	eval "$topo"	# smp=N nodes=M: one socket per node
	per=$((smp / nodes))
	for ((n = 0; n < nodes; n++)); do
		numa+=(-object memory-backend-ram,id=m$n,size=${mem}M
		       -numa node,nodeid=$n,cpus=$((n * per))-$((n * per + per - 1)),memdev=m$n)
	done
	smp=$smp,sockets=$nodes,cores=$per,threads=1 ;;
esac
total=$(( ${#numa[@]} / 4 * mem ))
[ "$topo" = 2node ] || [ "$topo" = 1node ] && total=$((2 * mem))

# GUEST_ICOUNT=1: one host thread runs the vCPUs in turn and the guest
# clock counts their instructions (1 ns each), so guest timings measure
# path length, free of host noise; parallelism gains nothing there.  The
# guest's random numbers (RDRAND) come from a fixed seed and its real-time
# clock starts at a fixed date and runs on the instruction clock: with the
# same kernel and initramfs, two boots then run the same instructions in
# the same order (rig/bench-lines.sh check compares two).
# GUEST_QEMU_EXTRA: more QEMU arguments (rig/pathprof.sh: a TCG plugin).
# GUEST_ACCEL=kvm: hardware virtualization, for a host where KVM boots
# guests (the many-core benchmark); TCG, the default, runs anywhere.
accel=(-accel tcg,thread=multi -cpu max)
[ "${GUEST_ACCEL:-tcg}" = kvm ] && accel=(-accel kvm -cpu host)
# On the instruction clock one host thread runs the vCPUs in turn, 100 ms
# of guest time each: a vCPU spinning for a lock or a store another vCPU
# owes it sees that time pass, so RCU's 21 s stall warning can fire for a
# wait that is the clock's, not the kernel's; such guests wait 300 s.
icount_cmdline=
[ "${GUEST_ICOUNT:-0}" = 1 ] && accel=(-accel tcg,thread=single -icount shift=0,sleep=off -cpu max
	-seed 1 -rtc base=2026-01-01T00:00:00,clock=vm) &&
	icount_cmdline="rcupdate.rcu_cpu_stall_timeout=300"

# A KASAN kernel boots with 4-level paging.  With 5-level paging (-cpu max
# has LA57), 7.3's pgtable_l5_enabled() reads the LA57 feature bit, which
# identify_cpu() clears for a moment while it re-reads the boot CPU's
# CPUID; KASAN called from an interrupt in that window takes the direct
# map for unshadowed memory and reports a wild access (rcu_is_watching()
# from common_interrupt(), at about 1.2 s of boot), in no code of ours.
paging_cmdline=
tree=${kernel%/arch/x86/boot/bzImage}
[ "$tree" != "$kernel" ] && grep -q '^CONFIG_KASAN=y' "$tree/.config" 2>/dev/null &&
	paging_cmdline=no5lvl

# The host's load around the run, for benchmark reports (host.txt): the
# 1-minute load average before and after, and the shares of host CPU time
# during the run stolen by a hypervisor and used by anything but this
# guest.
host_stat() {	# total busy steal: aggregate USER_HZ ticks of /proc/stat
	# (user to steal; guest time is already counted in user)
	awk '/^cpu /{t = 0; for (i = 2; i <= 9; i++) t += $i;
		print t, t - $5 - $6, $9; exit}' /proc/stat
}
read -r load_before _ < /proc/loadavg
read -r t0 busy0 st0 < <(host_stat)
TIMEFORMAT='%U %S'

log "booting the guest ($topo, timeout ${tmo}s)"
set +e
{ time timeout -s KILL "$tmo" qemu-system-x86_64 \
	"${accel[@]}" -m "${total}M" -smp "$smp" \
	"${numa[@]}" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 loglevel=7 panic=-1 oops=panic no_hash_pointers hung_task_panic=0 $icount_cmdline $paging_cmdline ${GUEST_CMDLINE:-}" \
	-display none -no-reboot -monitor none ${GUEST_QEMU_EXTRA:-} \
	-serial "file:$out/console.log" -serial "file:$out/results.log" \
	</dev/null >"$out/qemu.log" 2>&1; } 2>"$out/qemu.time"
rc=$?
set -e
read -r load_after _ < /proc/loadavg
read -r t1 busy1 st1 < <(host_stat)
read -r qu qs < "$out/qemu.time" || qu=0 qs=0
{
	echo "load_before $load_before"
	echo "load_after $load_after"
	awk -v t=$((t1 - t0)) -v b=$((busy1 - busy0)) -v s=$((st1 - st0)) \
		-v q="$qu $qs" -v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(q, c, " "); g = (c[1] + c[2]) * hz; o = b - g
		if (t <= 0) exit
		printf "steal_pct %.1f\nothers_pct %.1f\n", 100 * s / t,
			(o > 0 ? 100 * o / t : 0) }'
	echo "host_cpus $(nproc)"
} > "$out/host.txt"
[ $rc = 0 ] || log "qemu exited with $rc (137: the ${tmo}s timeout)"
exit 0
