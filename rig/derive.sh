#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bring a backport's work tree (BASE=6.12 or 6.1) up to the primary
# series' own files: each file the series adds is written as the repo's
# copy derives it (rig/backport.sed), left uncommitted for a
# "git commit --fixup" to the patch that adds it.
. "$(dirname "$0")/lib.sh"

[ "$BASE" != "$PRIMARY" ] || die "BASE=$BASE is the primary series: make patches writes its files"
work=$B/work
[ -d "$work/.git" ] || die "no ${work#"$TOP"/}: make work BASE=$BASE"
for f in $(own_files "$work"); do
	own_expected "$f" > "$work/$f"
done
git -C "$work" status --short
