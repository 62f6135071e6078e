#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The many-core benchmark bundle's runner (rig/bench-bundle.sh packs it):
# stock fuse.ko against ours in guests of one vCPU per host core (at most
# 32, a multiple of 4) in 2 and in 4 NUMA nodes, under KVM where it boots
# a guest and under TCG otherwise, with nothing from the host but the
# kernel: QEMU, its libraries and firmware, the guest kernel, both modules
# and the initramfs come in the bundle, and this runs under its busybox.
#   usage: run.sh OUTDIR        (the bundle's own directory is $BUNDLE)
# Environment: MANYCORE_CPUS (vCPUs), MANYCORE_FORCE=1 (run on fewer than
# 16 cores), MANYCORE_ACCEL (kvm or tcg: skip the probe), MANYCORE_MEM
# (MiB per node, 1024), MANYCORE_TIMEOUT (seconds per guest, 210).
set -eu
out=$1
B=$BUNDLE
mkdir -p "$out"
cores=$(nproc)
cpus=${MANYCORE_CPUS:-$cores}
[ "$cpus" -le 32 ] || cpus=32
cpus=$((cpus / 4 * 4))
if [ "$cpus" -lt 16 ] && [ "${MANYCORE_FORCE:-0}" != 1 ]; then
	echo "fuse-manycore: this host has $cores cores; the bundle wants 16 or more (MANYCORE_FORCE=1 runs it anyway)" >&2
	exit 2
fi
[ "$cpus" -ge 4 ] || { echo "fuse-manycore: at least 4 vCPUs" >&2; exit 2; }
mem=${MANYCORE_MEM:-1024}

# guest DIR INITRAMFS NODES TIMEOUT ACCEL...: one boot, its two serial
# lines in DIR/console.log (kernel) and DIR/results.log (the plan)
guest() {
	dir=$1 initrd=$2 nodes=$3 tmo=$4
	shift 4
	per=$((cpus / nodes))
	numa=
	n=0
	while [ $n -lt "$nodes" ]; do
		numa="$numa -object memory-backend-ram,id=m$n,size=${mem}M"
		numa="$numa -numa node,nodeid=$n,cpus=$((n * per))-$((n * per + per - 1)),memdev=m$n"
		n=$((n + 1))
	done
	mkdir -p "$dir"
	# shellcheck disable=SC2086
	# QEMU through the bundle's own loader, libraries and modules
	QEMU_MODULE_DIR=$B/qemu-modules timeout -s KILL "$tmo" \
		"$B/lib/ld-linux-x86-64.so.2" --library-path "$B/lib" \
		"$B/bin/qemu-system-x86_64" -L "$B/share/qemu" \
		"$@" -m $((nodes * mem))M \
		-smp "$cpus,sockets=$nodes,cores=$per,threads=1" $numa \
		-kernel "$B/bzImage" -initrd "$initrd" \
		-append "console=ttyS0 loglevel=7 panic=-1 oops=panic tsc=reliable" \
		-display none -vga none -nic none -no-reboot -monitor none \
		-serial "file:$dir/console.log" -serial "file:$dir/results.log" \
		</dev/null >"$dir/qemu.log" 2>&1 || echo "qemu: exit $?" >> "$dir/qemu.log"
}

accel=${MANYCORE_ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	if [ -w /dev/kvm ]; then
		saved=$cpus
		cpus=4
		guest "$out/kvm-probe" "$B/probe.cpio.gz" 1 60 -accel kvm -cpu host
		cpus=$saved
		grep -q '^### DONE' "$out/kvm-probe/results.log" 2>/dev/null && accel=kvm
	fi
fi
case "$accel" in
kvm) args="-accel kvm -cpu host" ;;
*) args="-accel tcg,thread=multi -cpu max" ;;
esac

{
	echo "date $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "bundle $(cat "$B/VERSION")"
	echo "host_cores $cores"
	echo "host_nodes $(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)"
	echo "host_cpu $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "host_kernel $(uname -r)"
	echo "vcpus $cpus"
	echo "accel $accel"
} > "$out/host.txt"
echo "fuse-manycore: $cpus vCPUs under $accel, results in $out" >&2

for nodes in 2 4; do
	t0=$(date +%s)
	dir=$out/smp-$cpus-nodes-$nodes
	# shellcheck disable=SC2086
	guest "$dir" "$B/bench.cpio.gz" $nodes "${MANYCORE_TIMEOUT:-210}" $args
	# A guest that never reached its plan's first line is booted once
	# more, and says so: no module was loaded yet.  Seen under
	# multi-threaded TCG, 1 boot in 10 to 20 on 2 host cores: a panic at
	# 1 s, a vCPU running code that the kernel patched at boot (a static
	# key: RIP inside the patched instruction, sched_clock_cpu())
	if [ ! -s "$dir/results.log" ]; then
		echo "fuse-manycore: $nodes nodes: the guest did not start its plan ($(tail -n 1 "$dir/qemu.log" 2>/dev/null)); booting it again" >&2
		rm -rf "$dir.failed"
		mv "$dir" "$dir.failed"
		# shellcheck disable=SC2086
		guest "$dir" "$B/bench.cpio.gz" $nodes "${MANYCORE_TIMEOUT:-210}" $args
	fi
	echo "fuse-manycore: $nodes nodes: $(($(date +%s) - t0)) s" >&2
done
awk -f "$B/report.awk" "$out/host.txt" "$out"/smp-*/results.log > "$out/results.md"
cat "$out/results.md"
