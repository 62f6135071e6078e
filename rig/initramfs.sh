#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pack a guest initramfs: busybox-static, /init, the modules, the tests and
# a plan.  usage: initramfs.sh OUT.cpio.gz PLAN MODDIR TESTDIR
. "$(dirname "$0")/lib.sh"

out=$1 plan=$2 moddir=$3 testdir=$4
bb=/bin/busybox
[ -x "$bb" ] || die "no $bb: apt-get install busybox-static"
root=$(mktemp -d "$B/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,tmp,lib/fuse,tests}
cp "$bb" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$TOP/rig/guest-init.sh" "$root/init"
chmod +x "$root/init"
cp "$plan" "$root/plan"
cp "$moddir"/*.ko "$root/lib/fuse/"
cp "$testdir"/* "$root/tests/" 2>/dev/null || true
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out"
