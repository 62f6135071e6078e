#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make patches: write the commits of build/work (build/6.1/work for
# BASE=6.1, build/7.3/work for 7.3) back to patches/BASE and its series
# file, and, for the primary series (7.3), our own files (those the series
# adds) to the repo, whole.
. "$(dirname "$0")/lib.sh"

work=$B/work
[ -d "$work/.git" ] || die "no ${work#$TOP/}: run make work BASE=$BASE"
git -C "$work" diff --quiet HEAD || die "${work#$TOP/} has uncommitted changes"
mkdir -p "$PATCHES"
rm -f "$PATCHES"/*.patch
git -C "$work" format-patch -q --no-signature --zero-commit --no-stat \
	-o "$PATCHES" base..HEAD
(cd "$PATCHES" && ls [0-9]*.patch) > "$PATCHES/series"
# Our files: the primary series' versions replace the repo's; a
# backport's must be what the repo's derive (rig/backport.sed)
if [ "$BASE" = "$PRIMARY" ]; then
	for f in $(cd "$TOP" && git ls-files $OWN_PATHS | grep -vxF "$OWN_GLUE"); do
		[ -e "$work/$f" ] || rm -f "$TOP/$f"
	done
	for f in $(own_files "$work"); do
		mkdir -p "$TOP/$(dirname "$f")"
		cp "$work/$f" "$TOP/$f"
	done
else
	for f in $(own_files "$work"); do
		own_expected "$f" 2>/dev/null | cmp -s "$work/$f" - ||
			log "warning: $f differs from what patches/$PRIMARY's derives: rig/derive.sh BASE=$BASE writes that"
	done
fi
git -C "$work" rev-parse HEAD > "$work/.rig-applied"
(cd "$PATCHES" && hash_files series $(cat series)) > "$work/.rig-stamp"
log "patches/$BASE: $(wc -l < "$PATCHES/series") patches; our files: $(own_files "$work" | wc -l)"
