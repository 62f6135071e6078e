#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make patches: write the commits of build/work back to patches/ and
# series, and our own files (those the series adds) to the repo, whole.
. "$(dirname "$0")/lib.sh"

work=$B/work
[ -d "$work/.git" ] || die "no build/work: run make work"
git -C "$work" diff --quiet HEAD || die "build/work has uncommitted changes"
rm -f "$TOP"/patches/*.patch
git -C "$work" format-patch -q --no-signature --zero-commit --no-stat \
	-o "$TOP/patches" base..HEAD
(cd "$TOP/patches" && ls [0-9]*.patch) > "$TOP/patches/series"
# Our files: the series' versions replace the repo's
for f in $(cd "$TOP" && git ls-files $OWN_PATHS); do
	[ -e "$work/$f" ] || rm -f "$TOP/$f"
done
for f in $(own_files "$work"); do
	mkdir -p "$TOP/$(dirname "$f")"
	cp "$work/$f" "$TOP/$f"
done
git -C "$work" rev-parse HEAD > "$work/.rig-applied"
(cd "$TOP/patches" && hash_files series $(cat series)) > "$work/.rig-stamp"
log "patches/: $(wc -l < "$TOP/patches/series") patches; our files: $(own_files "$work" | wc -l)"
