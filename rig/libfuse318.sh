#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libfuse 3.18 from Debian sid's fuse3 source package (fetched with private
# apt lists, rig/debsuite.sh: nothing on the host comes from sid), built
# twice with meson:
#
#   build/libfuse318/stock   sid's source as Debian ships it (its patches)
#   build/libfuse318/ours    the same with libfuse/patches-3.18/ applied
#
# each with the library (shared, libfuse3.so.4, and static) and the example
# daemons (passthrough_ll, passthrough_hp, ...), with fuse-over-io-uring
# where meson finds liburing (with IORING_SETUP_SQE128) and libnuma
# (liburing-dev, libnuma-dev).  build/libfuse318/work is a git tree of the
# source: tag "base" is sid's source with Debian's patches, the commits on
# top are libfuse/patches-3.18/ (git am).  Edit and commit there, then
# "rig/libfuse318.sh patches" writes them back to libfuse/patches-3.18/.
#
# usage: libfuse318.sh [patches]
. "$(dirname "$0")/lib.sh"

LF=$BROOT/libfuse318
work=$LF/work
pdir=$TOP/libfuse/patches-3.18

if [ "${1:-}" = patches ]; then
	export_series "$work" "$pdir"
	exit 0
fi
[ $# = 0 ] || die "usage: libfuse318.sh [patches]"

stamp=$(series_stamp "$pdir")

command -v meson > /dev/null || die "no meson: apt-get install meson"
command -v dpkg-source > /dev/null || die "no dpkg-source: apt-get install dpkg-dev"
command -v g++ > /dev/null || die "no g++ (passthrough_hp): apt-get install g++"

# The source package: whatever sid has now
dsc=$("$TOP/rig/debsuite.sh" sid source fuse3 "$LF/pkg")

if [ -d "$work/.git" ] && [ "$(cat "$work/.rig-stamp" 2>/dev/null)" = "$stamp" ] &&
   [ "$(cat "$work/.rig-dsc" 2>/dev/null)" = "${dsc##*/}" ]; then
	:
else
	if [ -d "$work/.git" ] &&
	   [ "$(git -C "$work" rev-parse HEAD)" != "$(cat "$work/.rig-applied" 2>/dev/null)" ] &&
	   [ "${FORCE_WORK:-0}" != 1 ]; then
		die "build/libfuse318/work has commits not in libfuse/patches-3.18/: run 'rig/libfuse318.sh patches' first (or FORCE_WORK=1 to drop them)"
	fi
	log "creating build/libfuse318/work from ${dsc##*/} and libfuse/patches-3.18/"
	rm -rf "$work" "$LF/stock-src"
	tmp=$(mktemp -d "$LF/src.XXXXXX")
	# apt checked the files against the archive's signed index
	dpkg-source -q -x "$dsc" "$tmp/src" > "$tmp/log" 2>&1 ||
		{ cat "$tmp/log" >&2; die "dpkg-source -x ${dsc##*/} failed"; }
	rm -rf "$tmp/src/.pc"
	mv "$tmp/src" "$work"
	rm -rf "$tmp"
	git_series "$work" "$pdir" libfuse-3.18 "base: Debian's ${dsc##*/} with debian/patches applied" "$stamp"
	echo "${dsc##*/}" > "$work/.rig-dsc"
fi

# The untouched source, for the stock build
if [ "$(cat "$LF/stock-src/.rig-base" 2>/dev/null)" != "$(git -C "$work" rev-parse base)" ]; then
	rm -rf "$LF/stock-src" "$LF/stock"
	mkdir -p "$LF/stock-src"
	git -C "$work" archive base | tar -xf - -C "$LF/stock-src"
	git -C "$work" rev-parse base > "$LF/stock-src/.rig-base"
fi

# io-uring needs both; without them meson builds the library without it
for p in liburing:liburing-dev numa:libnuma-dev; do
	pkg-config --exists "${p%%:*}" 2>/dev/null ||
		log "no ${p%%:*} for pkg-config: libfuse 3.18 builds without io-uring (apt-get install ${p#*:})"
done

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
	for f in lib/libfuse3.so.4 lib/libfuse3.a example/passthrough_ll example/passthrough_hp; do
		[ -e "$LF/$d/$f" ] || die "no build/libfuse318/$d/$f after the build"
	done
	if grep -q '^#define HAVE_URING' "$LF/$d/fuse_config.h"; then
		uring=with
	else
		uring=without
	fi
	log "build/libfuse318/$d: libfuse3.so.4 ($(readlink "$LF/$d/lib/libfuse3.so.4")), libfuse3.a, $(find "$LF/$d/example" -maxdepth 1 -type f -executable -printf '%f\n' | sort | wc -l) examples incl. passthrough_ll and passthrough_hp, $uring io-uring"
done
# The option shows in the low-level help, which passthrough_hp prints
help=$("$LF/ours/example/passthrough_hp" --help 2>&1) || true
[[ $help == *"-o clone_bind=cpu|node"* ]] ||
	die "build/libfuse318/ours: passthrough_hp --help does not list -o clone_bind"
help=$("$LF/stock/example/passthrough_hp" --help 2>&1) || true
[[ $help != *clone_bind* ]] ||
	die "build/libfuse318/stock: passthrough_hp --help lists -o clone_bind"
log "built libfuse $(cat "$work/.rig-dsc"): build/libfuse318/stock and build/libfuse318/ours"
