#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make stress FLAVOR=gofuse: go-fuse with gofuse/patches in a guest of
# Debian 12's own kernel binary with the Debian userland of make check's
# sshfs guest (rig/debroot.sh), with Debian's fuse.ko (stock) and then
# ours built against Debian's headers (BASE=6.1), in one boot:
#   go-fuse's own test suite (rig/tests/gofuse_suite.sh): the unpatched
#   go-fuse's on stock, the baseline; then the patched go-fuse's, every
#   mount it makes with the option off and with GOFUSE_CLONE_BIND=node,
#   on stock and on ours: each test must give the baseline's result in
#   all four (rig/gofuse_compare.py; gofuse/README.md says what fails in
#   all five, and why)
#   Debian's gocryptfs on the patched go-fuse with the checksum workload
#   (rig/tests/gofuse_daemon.sh): on stock with GOFUSE_CLONE_BIND=node
#   (the logged fallback), on ours with the option off, node and cpu
# go-fuse mounts through fusermount3, which hands the fd over an AF_UNIX
# socket: the debug guest kernels have no networking, Debian's has.
# Builds what it needs: rig/gofuse.sh, rig/debroot.sh, and
# Debian's kernel with the modules (lib.sh debian_guest_build), unless
# GOFUSE_MODDIR names a directory with stock.ko and ours.ko for it.
# Writes build/6.1/runs/gofuse (the guest), build/6.1/runs/host/gofuse.tap
# (the comparison) and prints the verdict.
# usage: gofuse-check.sh [TOPOLOGY]
#   GOFUSE_SUITE=0: the gocryptfs runs alone (minutes, not an hour)
BASE=6.1
. "$(dirname "$0")/lib.sh"

topo=${1:-2node}
GF=$BROOT/gofuse
"$TOP/rig/gofuse.sh" all
"$TOP/rig/debroot.sh"
if [ -n "${GOFUSE_MODDIR:-}" ]; then
	mods=$GOFUSE_MODDIR
	"$TOP/rig/debkernel.sh"
else
	"$TOP/rig/base.sh"
	"$TOP/rig/work.sh"
	debian_guest_build
	mods=$B/modules-debian
fi
. "$B/debian/env"
for m in stock ours; do
	[ -f "$mods/$m.ko" ] || die "no $mods/$m.ko"
done

dir=$B/runs/gofuse
rm -rf "$dir"
mkdir -p "$dir/tests" "$B/runs/host"
cp "$TOP/rig/tests/gofuse_suite.sh" "$TOP/rig/tests/gofuse_daemon.sh" "$dir/tests/"
# The guest's root: Debian's userland, the patched go-fuse's test
# binaries, gocryptfs and the benchmark daemon in /gofuse/bin, the
# unpatched go-fuse's test binaries in /gofuse/stock
cp "$BROOT/libfuse/debroot.tar" "$dir/root.tar"
tar -rf "$dir/root.tar" -C "$GF/bin/ours" --exclude=./clone.test --transform 's,^\.,./gofuse/bin,' .
tar -rf "$dir/root.tar" -C "$GF/bin/stock" --transform 's,^\.,./gofuse/stock,' .

# go test's binaries take minutes each on the TCG guest
suite=${GOFUSE_SUITE:-1}
st=2400
plan=("module stock")
[ "$suite" = 0 ] || plan+=("run $st GOFUSE_BIN=/gofuse/stock gofuse_suite.sh unpatched"
			   "run $st gofuse_suite.sh off" "run $st gofuse_suite.sh node")
plan+=("run 900 gofuse_daemon.sh gocryptfs node fallback" "module ours")
[ "$suite" = 0 ] || plan+=("run $st gofuse_suite.sh off" "run $st gofuse_suite.sh node")
plan+=("run 900 gofuse_daemon.sh gocryptfs off plain" "run 900 gofuse_daemon.sh gocryptfs node bound"
       "run 900 gofuse_daemon.sh gocryptfs cpu bound")
printf '%s\n' "${plan[@]}" > "$dir/plan"
tmo=$(awk '$1 == "run" { t += $2 } END { print t + 600 }' "$dir/plan")
INITRAMFS_BASE=$dir/root.tar "$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" \
	"$dir/plan" "$mods" "$dir/tests"
rm -f "$dir/root.tar"
GUEST_MEM=1024 GUEST_CMDLINE=initramfs_async=0 \
	"$TOP/rig/guest.sh" "$DEB_VMLINUZ" "$dir/initramfs.cpio.gz" "$dir" "$topo" "$tmo"
rm -f "$dir/initramfs.cpio.gz"
tr -d '\r' < "$dir/results.log" | grep '^gofuse-pkg\|^# fuse:' || true
[ "$suite" != 0 ] || exec python3 "$TOP/rig/verdict.py" "$dir"
tap=$B/runs/host/gofuse.tap
python3 "$TOP/rig/gofuse_compare.py" "$dir/results.log" > "$tap" || true
grep -v '^#   ' "$tap" || true
exec python3 "$TOP/rig/verdict.py" "$dir" "tap:gofuse-suite:$tap"
