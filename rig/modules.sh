#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build fuse.ko twice against one kernel build tree: "stock" from the
# untouched base and "ours" from build/work (the series) plus our own files.
# usage: modules.sh KDIR OUTDIR [stock] [ours]
#   KDIR:   a kernel build tree (a guest kernel, or /lib/modules/*/build)
#   OUTDIR: gets stock/fuse.ko and ours/fuse.ko
# Extra kbuild variables can be passed in KBUILD_EXTRA (e.g.
# CONFIG_FUSE_CLONE_QUEUE_KUNIT_TEST=y for the KUnit build).
. "$(dirname "$0")/lib.sh"

kdir=$(realpath "$1") out=$(realpath -m "$2"); shift 2
which=${*:-stock ours}
base=$(base_dir)
work=$B/work

check_kdir() {
	local rel
	[ -f "$kdir/Makefile" ] || die "$kdir is not a kernel build tree"
	rel=$(cat "$kdir/include/config/kernel.release" 2>/dev/null || true)
	case "$rel" in
	6.12|6.12.*|6.12-*) ;;
	*) die "$kdir is kernel '${rel:-unknown}', not 6.12.y: this patchset is for Linux 6.12 only" ;;
	esac
	if grep -q '^CONFIG_FUSE_FS=y' "$kdir/.config" 2>/dev/null; then
		die "$kdir has FUSE built in (CONFIG_FUSE_FS=y), so no fuse.ko can replace it: apply patches/ to your kernel source instead (git am patches/*.patch, and copy fs/fuse/clone_queue*.[ch] there)"
	fi
	grep -q '^CONFIG_FUSE_FS=m' "$kdir/.config" 2>/dev/null ||
		die "$kdir has no CONFIG_FUSE_FS=m"
}

# Copy a fs/fuse tree into $1 and build it there.  $2: uapi include dir or "".
build_one() {
	local dst=$1 uapi=$2
	rm -rf "$dst"
	mkdir -p "$dst"
	cp -rL "$3"/. "$dst"/
	if [ -n "$uapi" ]; then
		mkdir -p "$dst/include/uapi/linux"
		cp "$uapi/linux/fuse.h" "$dst/include/uapi/linux/fuse.h"
		# Our uapi header must win over the one in the kernel tree;
		# modinfo and the load message name the base of the sources.
		printf '%s\n' 'NOSTDINC_FLAGS += -I$(src)/include/uapi' \
			'include $(src)/Makefile' \
			"ccflags-y += -DFUSE_CQ_BASE='\"$base_rel\"'" > "$dst/Kbuild"
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
		build_one "$out/ours.src" "$work/include/uapi" "$work/fs/fuse"
		cp "$out/ours.src/fuse.ko" "$out/ours.ko" ;;
	esac
	log "built $out/$w.ko"
done
