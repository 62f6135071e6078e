#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-bundle: the many-core benchmark as one self-contained file,
# build/bench-bundle/fuse-manycore.run, for a 16+ core Linux box that has
# no packages and no network: QEMU with the libraries it loads and the
# firmware it reads, the benchmark kernel, stock and our fuse.ko, the
# guest initramfs (fuse_bench, go-fuse's gofuse_bench, and a plan that
# fits any vCPU count), a
# static busybox and the runner (rig/bundle/run.sh, report.awk).  Its
# head is a POSIX sh script that needs only coreutils: it cuts busybox
# out of itself, unpacks the rest with it and runs the runner under it.
#   sh fuse-manycore.run [OUTDIR]      (default ./fuse-manycore-results)
# bench-bundle.sh check: build it, then run it from a directory outside
# the clone with PATH holding coreutils alone, MANYCORE_FORCE=1 and
# MANYCORE_CPUS=4, and check its tables (host TAP on stdout).
. "$(dirname "$0")/lib.sh"

out=$B/bench-bundle
stage=$out/stage
ops=${BUNDLE_OPS:-2000}
reps=${BUNDLE_REPEATS:-2}

bench_build
"$TOP/rig/selftests.sh"
"$TOP/rig/gofuse.sh" bench
rm -rf "$stage"
mkdir -p "$stage"/{bin,lib,share/qemu} "$out"

# QEMU, every library ldd finds for it, and its loader under a fixed name
qemu=$(command -v qemu-system-x86_64)
cp -L "$qemu" "$stage/bin/"
ldd "$qemu" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
while read -r lib; do
	cp -L "$lib" "$stage/lib/"
done
mv "$stage/lib/$(basename "$(ldd "$qemu" | awk '$1 ~ /^\// { print $1 }')")" \
	"$stage/lib/ld-linux-x86-64.so.2" 2>/dev/null || true
[ -f "$stage/lib/ld-linux-x86-64.so.2" ] || die "no loader for $qemu"
# The firmware a -kernel boot of the pc machine reads (no VGA, no NIC)
# (Debian's QEMU finds SeaBIOS in /usr/share/seabios)
for f in bios-256k.bin linuxboot_dma.bin kvmvapic.bin; do
	src=$(ls /usr/share/qemu/$f /usr/share/seabios/$f 2>/dev/null | head -n1 || true)
	[ -n "$src" ] || die "no $f for QEMU"
	cp -L "$src" "$stage/share/qemu/"
done
# Debian's QEMU loads its TCG accelerator as a module (QEMU_MODULE_DIR)
mkdir -p "$stage/qemu-modules"
cp /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so "$stage/qemu-modules/"
cp /bin/busybox "$stage/busybox"
cp "$B/kernel-bench/arch/x86/boot/bzImage" "$stage/bzImage"
cp "$TOP/rig/bundle/run.sh" "$TOP/rig/bundle/report.awk" "$stage/"
echo "$(git -C "$TOP" describe --always --dirty) $(date -u +%Y-%m-%d)" > "$stage/VERSION"

# The guests' plans: THREADS 0 is one caller per CPU, -4 four (fuse_bench)
mkdir -p "$out/tests"
cp "$B/tests/fuse_bench" "$BROOT/gofuse/bin/ours/gofuse_bench" "$out/tests/"
{
	for ((r = 1; r <= reps; r++)); do
		for m in $(module_order "$r"); do
			echo "module $m"
			for wl in getattr read; do
				for t in 1 0; do
					[ $wl = read ] && [ $t = 1 ] && continue
					for mode in single unbound bound; do
						[ $m = stock ] && [ $mode = bound ] && continue
						echo "run 60 fuse_bench $mode $wl $t $ops"
					done
					# go-fuse's daemon: the mount fd alone,
					# and on ours clones bound by node, by CPU
					for mode in single node cpu; do
						[ $m = stock ] && [ $mode != single ] && continue
						echo "run 60 gofuse_bench $mode $wl $t $ops"
					done
				done
			done
			for mode in unbound bound; do
				[ $m = stock ] && [ $mode != unbound ] && continue
				echo "run 60 fuse_bench $mode mixed -4 300"
			done
		done
	done
} > "$out/bench.plan"
echo "sh 10 true" > "$out/probe.plan"
"$TOP/rig/initramfs.sh" "$stage/bench.cpio.gz" "$out/bench.plan" "$B/modules-bench" "$out/tests"
mkdir -p "$out/none"
"$TOP/rig/initramfs.sh" "$stage/probe.cpio.gz" "$out/probe.plan" "$out/none" "$out/none"

# fuse-manycore.run: the head (fixed size), busybox, then the tar.xz
tar -C "$stage" -cf - --exclude=./busybox . | xz -T0 -6 > "$out/payload.tar.xz"
bbsize=$(stat -c %s "$stage/busybox")
head_sh() {	# HEAD_SIZE
	cat <<-EOF
	#!/bin/sh
	# FUSE per-device input queues: the many-core benchmark, self-contained.
	# usage: sh fuse-manycore.run [OUTDIR]   (needs only coreutils; see run.sh)
	set -eu
	out=\${1:-./fuse-manycore-results}
	case "\$out" in /*) ;; *) out=\$(pwd)/\$out ;; esac
	d=\$(mktemp -d "\${TMPDIR:-/tmp}/fuse-manycore.XXXXXX")
	trap 'rm -rf "\$d"' EXIT
	tail -c +$(($1 + 1)) "\$0" | head -c $bbsize > "\$d/busybox"
	chmod 755 "\$d/busybox"
	tail -c +$(($1 + bbsize + 1)) "\$0" | "\$d/busybox" tar -xJf - -C "\$d"
	BUNDLE=\$d PATH="\$d/bin-bb:\$PATH" "\$d/busybox" sh -c 'mkdir -p "\$BUNDLE/bin-bb" && "\$BUNDLE/busybox" --install -s "\$BUNDLE/bin-bb" && exec sh "\$BUNDLE/run.sh" "\$0"' "\$out"
	exit \$?
	EOF
}
# The head's size appears in the head: pad it to a fixed width
size=1500
head_sh $size > "$out/head"
[ "$(stat -c %s "$out/head")" -le $size ] || die "the bundle's head outgrew $size bytes"
truncate -s $size "$out/head"
# what pads the head must not be run: a newline, then comment bytes
printf '%*s' $((size - $(head_sh $size | wc -c))) '' | tr ' ' '#' |
	dd of="$out/head" bs=1 seek="$(head_sh $size | wc -c)" conv=notrunc status=none
cat "$out/head" "$stage/busybox" "$out/payload.tar.xz" > "$out/fuse-manycore.run"
chmod 755 "$out/fuse-manycore.run"
mib=$(( $(stat -c %s "$out/fuse-manycore.run") / 1048576 ))
[ "$mib" -lt 60 ] || die "the bundle is $mib MiB, over 60"
log "bundle: $out/fuse-manycore.run ($mib MiB)"

[ "${1:-}" = check ] || exit 0

# Run it the way a bare box would: outside the clone, coreutils alone
n=0
rc=0
chk=$(mktemp -d /tmp/fuse-manycore-check.XXXXXX)
mkdir -p "$chk/cu"
for f in $(dpkg -L coreutils | grep -E '^/(usr/)?bin/'); do
	[ -x "$f" ] && ln -sf "$f" "$chk/cu/"
done
cp "$out/fuse-manycore.run" "$chk/"
ran=0
(cd "$chk" && env -i PATH="$chk/cu" MANYCORE_FORCE=1 MANYCORE_CPUS=4 MANYCORE_ACCEL=tcg \
	MANYCORE_MEM=512 MANYCORE_TIMEOUT=${BUNDLE_TIMEOUT:-900} \
	/bin/sh ./fuse-manycore.run results > "$chk/run.log" 2>&1) || ran=$?
tap_result $ran "the bundle runs outside the clone with only coreutils on PATH" "$chk/run.log"
for nodes in 2 4; do
	f=$chk/results/smp-4-nodes-$nodes/results.log
	r=0
	grep -q '^### DONE' "$f" 2>/dev/null || r=1
	g=$chk/results/smp-4-nodes-$nodes
	# A first boot that never reached the plan was booted again: say why
	[ ! -d "$g.failed" ] || { cat "$g.failed/qemu.log"
		tail -n 15 "$g.failed/console.log"; } 2>&1 |
		sed "s/^/# $nodes-node guest, first boot: /"
	# what QEMU said, then how far the plan and the kernel got
	[ $r = 0 ] || { cat "$g/qemu.log"; tail -n 4 "$g/results.log"
		tail -n 15 "$g/console.log"; } > "$chk/why-$nodes" 2>&1
	tap_result $r "its $nodes-node guest ran its whole plan" "$chk/why-$nodes"
	r=0
	grep -q '^### EXIT 0' "$f" 2>/dev/null && ! grep -q '^### EXIT [^0]' "$f" || r=1
	tap_result $r "every fuse_bench run of the $nodes-node guest exited 0" "$f"
	r=0
	sed -n "/^## smp-4-nodes-$nodes\$/,/^## /p" "$chk/results/results.md" 2>/dev/null |
		grep -qE '^\| getattr \| [0-9]+ \| bound \| - \| [0-9]+ \| [0-9.]+x \|' || r=1
	tap_result $r "its table has the $nodes-node bound row with a ratio to stock" "$chk/results/results.md"
	r=0
	sed -n "/^## smp-4-nodes-$nodes\$/,/^## /p" "$chk/results/results.md" 2>/dev/null |
		grep -qE '^\| getattr \| [0-9]+ \| go-node \| - \| [0-9]+ \| [0-9.]+x \|' || r=1
	tap_result $r "and go-fuse's bound-by-node row, with a ratio to stock go-fuse" "$chk/results/results.md"
done
rm -rf "$B/runs/bundle"
mkdir -p "$B/runs/bundle"
cp -r "$chk/results"/. "$B/runs/bundle/" 2>/dev/null || true
cp "$chk/run.log" "$B/runs/bundle/run.log" 2>/dev/null || true
rm -rf "$chk"
echo "1..$n"
exit $rc
