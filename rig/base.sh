#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make the untouched base tree (Linux $BASE) available under build/base, or
# build/6.1/base (or check KSRC).
. "$(dirname "$0")/lib.sh"

check_version() {
	local dir=$1 v
	v=$(tree_version "$dir")
	[ "$v" = "$BASE" ] || die "$dir is Linux $v, not $BASE (BASE=$BASE)"
	[ -f "$dir/fs/fuse/dev.c" ] || die "$dir has no fs/fuse/dev.c"
}

# KSRC is the base of its own version; the other base comes from its tarball
if [ -n "${KSRC:-}" ]; then
	case " $BASES " in
	*" $(tree_version "$KSRC") "*) ;;
	*) die "KSRC=$KSRC is Linux $(tree_version "$KSRC"): the bases are ${BASES// / and }" ;;
	esac
	if [ "$(tree_version "$KSRC")" = "$BASE" ]; then
		check_version "$KSRC"
		exit 0
	fi
fi

tarball=$(ls /usr/src/linux-source-"$BASE".tar.* 2>/dev/null | head -n1 || true)
# Mainline's base is not in bookworm: its linux-source package comes from
# trixie-backports, fetched (not installed) with private apt lists, and the
# tarball is read out of the .deb
if [ -z "$tarball" ] && [ "$BASE" = 7.3 ]; then
	deb=$("$TOP/rig/debsuite.sh" trixie-backports binary linux-source-7.3 "$BROOT/apt/debs")
	tarball=$B/linux-source-$BASE.tar.xz
	if [ ! -f "$tarball" ] || [ "$deb" -nt "$tarball" ]; then
		mkdir -p "$B"
		dpkg-deb --fsys-tarfile "$deb" |
			tar -xO --wildcards "./usr/src/linux-source-$BASE.tar.*" > "$tarball.tmp"
		mv "$tarball.tmp" "$tarball"
	fi
fi
[ -n "$tarball" ] || die "no /usr/src/linux-source-$BASE.tar.*: apt-get install linux-source-$BASE, or give KSRC=/path/to/$BASE"
id=$(stat -c '%s %Y' "$tarball")
if [ -f "$B/base/.rig-base-id" ] && [ "$(cat "$B/base/.rig-base-id")" = "$id" ]; then
	exit 0
fi
log "extracting $tarball"
rm -rf "$B/base" "$B/base.tmp"
mkdir -p "$B/base.tmp"
tar -xf "$tarball" -C "$B/base.tmp" --strip-components=1
echo "$id" > "$B/base.tmp/.rig-base-id"
mv "$B/base.tmp" "$B/base"
check_version "$B/base"
log "base: $(make -s -C "$B/base" kernelversion 2>/dev/null)"
