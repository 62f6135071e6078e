#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make libfuse-patches: write the commits of build/libfuse/work (on top of
# its tag "base", Debian's fuse3 source) back to libfuse/patches/ and series.
. "$(dirname "$0")/lib.sh"

work=$BROOT/libfuse/work
pdir=$TOP/libfuse/patches
[ -d "$work/.git" ] || die "no build/libfuse/work: run make libfuse-work"
git -C "$work" diff --quiet HEAD || die "build/libfuse/work has uncommitted changes"
rm -f "$pdir"/*.patch
git -C "$work" format-patch -q --no-signature --zero-commit -o "$pdir" base..HEAD
(cd "$pdir" && ls *.patch) > "$pdir/series"
git -C "$work" rev-parse HEAD > "$work/.rig-applied"
(cd "$pdir" && hash_files series $(grep -v "^#" series)) > "$work/.rig-stamp"
log "libfuse/patches/: $(wc -l < "$pdir/series") patches"
