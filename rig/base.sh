#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make the untouched 6.12 base tree available under build/base (or check KSRC).
. "$(dirname "$0")/lib.sh"

check_version() {
	local dir=$1 v p
	v=$(sed -n 's/^VERSION = //p' "$dir/Makefile")
	p=$(sed -n 's/^PATCHLEVEL = //p' "$dir/Makefile")
	[ "$v.$p" = "6.12" ] || die "$dir is Linux $v.$p, not 6.12"
	[ -f "$dir/fs/fuse/dev.c" ] || die "$dir has no fs/fuse/dev.c"
}

if [ -n "${KSRC:-}" ]; then
	check_version "$KSRC"
	exit 0
fi

tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1 || true)
[ -n "$tarball" ] || die "no /usr/src/linux-source-6.12.tar.*: apt-get install linux-source-6.12, or give KSRC=/path/to/6.12"
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
