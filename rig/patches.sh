#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make patches: write the commits of build/work back to patches/ and series.
. "$(dirname "$0")/lib.sh"

work=$B/work
[ -d "$work/.git" ] || die "no build/work: run make work"
git -C "$work" diff --quiet HEAD || die "build/work has uncommitted changes"
rm -f "$TOP"/patches/*.patch
git -C "$work" format-patch -q --no-signature --zero-commit --no-stat \
	-o "$TOP/patches" base..HEAD
(cd "$TOP/patches" && ls *.patch) > "$TOP/patches/series"
git -C "$work" rev-parse HEAD > "$work/.rig-applied"
(cd "$TOP/patches" && hash_files series $(cat series)) > "$work/.rig-stamp"
log "patches/: $(wc -l < "$TOP/patches/series") patches"
