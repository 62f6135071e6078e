#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build fuse.ko twice against one kernel build tree: "stock" from the
# untouched base and "ours" from build/work (the series) plus our own files.
# usage: modules.sh KDIR OUTDIR [stock] [ours]
#   KDIR:   a kernel build tree (a guest kernel, or /lib/modules/*/build)
#   OUTDIR: gets stock.ko and ours.ko (built in stock.src/ and ours.src/)
# Extra kbuild variables can be passed in KBUILD_EXTRA.
. "$(dirname "$0")/lib.sh"

kdir=$(realpath "$1") out=$(realpath -m "$2"); shift 2
which=${*:-stock ours}
base=$(base_dir)
work=$B/work

check_kdir() {
	local rel
	[ -f "$kdir/Makefile" ] || die "$kdir is not a kernel build tree"
	rel=$(kdir_release "$kdir")
	[ "$(base_of_release "$rel")" = "$BASE" ] ||
		die "$kdir is kernel '${rel:-unknown}', not $BASE.y (BASE=$BASE; the series exists for ${BASES// /.y and }.y)"
	if grep -q '^CONFIG_FUSE_FS=y' "$kdir/.config" 2>/dev/null; then
		die "$kdir has FUSE built in (CONFIG_FUSE_FS=y), so no fuse.ko can replace it: apply patches/$BASE to your kernel source instead (git am patches/$BASE/*.patch)"
	fi
	grep -q '^CONFIG_FUSE_FS=m' "$kdir/.config" 2>/dev/null ||
		die "$kdir has no CONFIG_FUSE_FS=m"
}

# Copy a fs/fuse tree ($3) into $1 and build it there.  $2: "oot" for our
# out-of-tree build (the series' uapi header and dkms/fuse_version.c), or
# "" for stock.
build_one() {
	local dst=$1 kind=$2
	rm -rf "$dst"
	mkdir -p "$dst"
	cp -rL "$3"/. "$dst"/
	if [ "$kind" = oot ]; then
		mkdir -p "$dst/include/uapi/linux"
		cp "$work/include/uapi/linux/fuse.h" "$dst/include/uapi/linux/fuse.h"
		oot_kbuild "$dst" "$base_rel"
	fi
	make -s -C "$kdir" M="$dst" -j"$JOBS" ${KBUILD_EXTRA:-} modules
	[ -f "$dst/fuse.ko" ] || die "no fuse.ko in $dst"
}

check_kdir
base_rel=$(make -s -C "$base" kernelversion)
mkdir -p "$out"
for w in $which; do
	case $w in
	stock)
		build_one "$out/stock.src" "" "$base/fs/fuse"
		cp "$out/stock.src/fuse.ko" "$out/stock.ko" ;;
	ours)
		"$TOP/rig/work.sh"
		build_one "$out/ours.src" oot "$work/fs/fuse"
		cp "$out/ours.src/fuse.ko" "$out/ours.ko" ;;
	esac
	log "built $out/$w.ko"
done
