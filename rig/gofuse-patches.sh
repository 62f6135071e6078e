#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make gofuse-patches: write the commits of build/gofuse/work (on top of
# its tag "base", Debian's go-fuse source) back to gofuse/patches/ and series.
. "$(dirname "$0")/lib.sh"

work=$BROOT/gofuse/work
pdir=$TOP/gofuse/patches
[ -d "$work/.git" ] || die "no build/gofuse/work: run make gofuse-work"
git -C "$work" diff --quiet HEAD || die "build/gofuse/work has uncommitted changes"
mkdir -p "$pdir"
rm -f "$pdir"/*.patch
git -C "$work" format-patch -q --no-signature --zero-commit -o "$pdir" base..HEAD
(cd "$pdir" && ls *.patch) > "$pdir/series"
git -C "$work" rev-parse HEAD > "$work/.rig-applied"
(cd "$pdir" && hash_files series $(grep -v "^#" series)) > "$work/.rig-stamp"
log "gofuse/patches/: $(wc -l < "$pdir/series") patches"
