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
mem=512
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
# path length, free of host noise; parallelism gains nothing there.
accel=(-accel tcg,thread=multi)
[ "${GUEST_ICOUNT:-0}" = 1 ] && accel=(-accel tcg,thread=single -icount shift=0,sleep=off)

log "booting the guest ($topo, timeout ${tmo}s)"
set +e
timeout -s KILL "$tmo" qemu-system-x86_64 \
	"${accel[@]}" -cpu max -m "${total}M" -smp "$smp" \
	"${numa[@]}" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 loglevel=7 panic=-1 oops=panic no_hash_pointers hung_task_panic=0 ${GUEST_CMDLINE:-}" \
	-display none -no-reboot -monitor none \
	-serial "file:$out/console.log" -serial "file:$out/results.log" \
	</dev/null >"$out/qemu.log" 2>&1
rc=$?
set -e
[ $rc = 0 ] || log "qemu exited with $rc (137: the ${tmo}s timeout)"
exit 0
