#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make KDIR=...: our fuse.ko (and cuse.ko and virtiofs.ko, where the kernel
# builds them) for a kernel build tree, from the series of that kernel's
# base: 7.3.y kernels get patches/7.3, 6.12.y kernels patches/6.12, 6.1.y
# kernels patches/6.1.
# Anything else is refused, saying why.  Prints the directory of the
# modules on its last line.
# usage: module.sh KDIR
. "$(dirname "$0")/lib.sh"

kdir=$1
[ -f "$kdir/Makefile" ] || die "$kdir is not a kernel build tree (install the kernel's linux-headers package)"
rel=$(kdir_release "$kdir")
base=$(base_of_release "$rel")
[ -n "$base" ] || die "$kdir is kernel $rel: the series exists for Linux ${BASES// /.y and }.y only"
out=$(base_build "$base")/module
BASE=$base "$TOP/rig/base.sh"
BASE=$base "$TOP/rig/modules.sh" "$kdir" "$out" ours
log "built $out/ours.src/fuse.ko (Linux $base series) for $rel"
echo "$out/ours.src"
