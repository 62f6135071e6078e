#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make series: the series as it would be mailed, in build/series/ (or
# build/6.1/series for BASE=6.1): a cover letter (patches/cover-letter.txt,
# and patches/BASE/cover-note.txt where a base has one) and patches/BASE
# numbered as mails.  It is
# made in a scratch git repo, build/series-git (the files the series
# touches, from the base), with fixed dates, so the same patches give the
# same mails, commit ids and all; build/work and patches/ are left alone.
. "$(dirname "$0")/lib.sh"

base=$(base_dir)
repo=$B/series-git
out=$B/series
base_rel=$(make -s -C "$base" kernelversion)
author=$(sed -n 's/^From: //p' "$PATCHES/$(grep -v '^#' "$PATCHES/series" | head -n1)" | head -n1)
g() {
	git -C "$repo" -c user.name="${author% <*}" -c user.email="$(echo "$author" | sed 's/.*<\(.*\)>/\1/')" "$@"
}

rm -rf "$repo" "$out"
mkdir -p "$repo"
(cd "$base" && tar -cf - $(work_paths "$base")) | tar -xf - -C "$repo"
g init -q
g config core.autocrlf false
g add -A
GIT_AUTHOR_DATE="@0 +0000" GIT_COMMITTER_DATE="@0 +0000" g commit -q -m "Linux $base_rel"
g tag base
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	g am -q --keep-cr --committer-date-is-author-date "$PATCHES/$p" ||
		die "patch $p does not apply"
done < "$PATCHES/series"

GIT_COMMITTER_DATE=$(g log -1 --format=%ad --date=raw) \
	g format-patch -q --cover-letter --no-signature -o "$out" base..HEAD
python3 "$TOP/rig/series_cover.py" "$out/0000-cover-letter.patch" \
	"$TOP/patches/cover-letter.txt" "$base_rel" \
	$([ ! -f "$PATCHES/cover-note.txt" ] || echo "$PATCHES/cover-note.txt")
log "${out#$TOP/}: $(ls "$out" | wc -l) files (cover letter and $(($(ls "$out" | wc -l) - 1)) patches), against Linux $base_rel"
