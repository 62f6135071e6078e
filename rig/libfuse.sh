#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libfuse 3 from Debian's own source package (fuse3, the version of the
# installed libfuse3-dev if apt still has it), built twice with meson:
#
#   build/libfuse/stock   Debian's source as Debian builds it (its patches)
#   build/libfuse/ours    the same with libfuse/patches/ applied on top
#
# each with the library (shared and static) and the example daemons
# (passthrough_ll, passthrough_hp, ...).  build/libfuse/work is a git tree
# of the source: tag "base" is Debian's source with Debian's patches, the
# commits on top are libfuse/patches/ (git am).  Edit and commit there,
# then "make libfuse-patches" writes them back to libfuse/patches/.
. "$(dirname "$0")/lib.sh"

LF=$BROOT/libfuse
work=$LF/work
pdir=$TOP/libfuse/patches
stamp=$(series_stamp "$pdir")

command -v meson > /dev/null || die "no meson: apt-get install meson"
command -v dpkg-source > /dev/null || die "no dpkg-source: apt-get install dpkg-dev"

# The source package: the installed libfuse3-dev's version, else the newest
ver=$(dpkg-query -W -f='${Version}' libfuse3-dev 2>/dev/null || true)
dsc=
[ -n "$ver" ] && dsc=$("$TOP/rig/debsrc.sh" "fuse3=$ver" "$LF/pkg" 2>/dev/null || true)
[ -n "$dsc" ] || dsc=$("$TOP/rig/debsrc.sh" fuse3 "$LF/pkg")

if [ -d "$work/.git" ] && [ "$(cat "$work/.rig-stamp" 2>/dev/null)" = "$stamp" ] &&
   [ "$(cat "$work/.rig-dsc" 2>/dev/null)" = "${dsc##*/}" ]; then
	:
else
	if [ -d "$work/.git" ] &&
	   [ "$(git -C "$work" rev-parse HEAD)" != "$(cat "$work/.rig-applied" 2>/dev/null)" ] &&
	   [ "${FORCE_WORK:-0}" != 1 ]; then
		die "build/libfuse/work has commits not in libfuse/patches/: run 'make libfuse-patches' first (or FORCE_WORK=1 to drop them)"
	fi
	log "creating build/libfuse/work from ${dsc##*/} and libfuse/patches/"
	rm -rf "$work" "$LF/stock-src"
	tmp=$(mktemp -d "$LF/src.XXXXXX")
	# apt checked the files against the archive's signed index
	dpkg-source -q -x "$dsc" "$tmp/src" > "$tmp/log" 2>&1 ||
		{ cat "$tmp/log" >&2; die "dpkg-source -x ${dsc##*/} failed"; }
	rm -rf "$tmp/src/.pc"
	mv "$tmp/src" "$work"
	rm -rf "$tmp"
	git_series "$work" "$pdir" libfuse "base: Debian's ${dsc##*/} with debian/patches applied" "$stamp"
	echo "${dsc##*/}" > "$work/.rig-dsc"
fi

# The untouched source, for the stock build
if [ "$(cat "$LF/stock-src/.rig-base" 2>/dev/null)" != "$(git -C "$work" rev-parse base)" ]; then
	rm -rf "$LF/stock-src" "$LF/stock"
	mkdir -p "$LF/stock-src"
	git -C "$work" archive base | tar -xf - -C "$LF/stock-src"
	git -C "$work" rev-parse base > "$LF/stock-src/.rig-base"
fi

build() {	# SRC BUILDDIR
	if [ ! -f "$2/build.ninja" ]; then
		rm -rf "$2"
		meson setup -Dutils=false -Dtests=false -Dexamples=true \
			-Duseroot=false -Ddefault_library=both \
			--buildtype=debugoptimized "$2" "$1" > "$LF/${2##*/}.setup.log" 2>&1 ||
			{ cat "$LF/${2##*/}.setup.log" >&2; die "meson setup $2 failed"; }
	fi
	ninja -C "$2" -j "$JOBS" > "$LF/${2##*/}.build.log" 2>&1 ||
		{ tail -n 40 "$LF/${2##*/}.build.log" >&2; die "building $2 failed"; }
}
build "$LF/stock-src" "$LF/stock"
build "$work" "$LF/ours"
for d in stock ours; do
	for f in lib/libfuse3.so.3 lib/libfuse3.a example/passthrough_ll example/passthrough_hp; do
		[ -e "$LF/$d/$f" ] || die "no $LF/$d/$f after the build"
	done
done
log "built libfuse $(cat "$work/.rig-dsc"): build/libfuse/stock and build/libfuse/ours"
