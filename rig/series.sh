#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make series: write the series as it would be mailed to build/series/:
# 0000-cover-letter.patch and one patch per logical change, our new files
# added by the patch that first builds or links them.  It is made in a
# scratch git repo, build/series-git (the files the series touches, from
# the base), so build/work and patches/ are left alone.
. "$(dirname "$0")/lib.sh"

base=$(base_dir)
repo=$B/series-git
out=$B/series
base_rel=$(make -s -C "$base" kernelversion)

# The patch (file name) that brings in our file $1: the first whose added
# lines build it (foo.o in a Makefile), include it ("foo.h") or list it in
# a documentation index (foo).
patch_of() {
	local f=$1 stem pat p
	stem=$(basename "$f")
	case $f in
	*.c) pat="^\+.*[[:space:]]${stem%.c}\.o([[:space:]]|$)" ;;
	*.h) pat="^\+#include \"$stem\"" ;;
	*.rst) pat="^\+[[:space:]]+${stem%.rst}$" ;;
	*) die "$f: no rule for where it goes in the series" ;;
	esac
	while IFS= read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		if grep -qE "$pat" "$TOP/patches/$p"; then
			echo "$p"
			return
		fi
	done < "$TOP/patches/series"
	die "$f: no patch of the series builds, includes or indexes it"
}

declare -A own=()
while IFS= read -r f; do
	p=$(patch_of "$f")
	own[$p]="${own[$p]:-} $f"
done < <(cd "$TOP" && git ls-files -co --exclude-standard fs Documentation)

author=$(sed -n 's/^From: //p' "$TOP/patches/$(grep -v '^#' "$TOP/patches/series" | head -n1)" | head -n1)
g() {
	git -C "$repo" -c user.name="${author% <*}" -c user.email="$(echo "$author" | sed 's/.*<\(.*\)>/\1/')" "$@"
}

rm -rf "$repo" "$out"
mkdir -p "$repo"
(cd "$base" && tar -cf - $WORK_PATHS) | tar -xf - -C "$repo"
g init -q
g config core.autocrlf false
g add -A
# Fixed dates: the same patches give the same series, commit ids and all
GIT_AUTHOR_DATE="@0 +0000" GIT_COMMITTER_DATE="@0 +0000" g commit -q -m "Linux $base_rel"
g tag base
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	g am -q --keep-cr --committer-date-is-author-date "$TOP/patches/$p" ||
		die "patch $p does not apply"
	[ -n "${own[$p]:-}" ] || continue
	for f in ${own[$p]}; do
		mkdir -p "$repo/$(dirname "$f")"
		cp "$TOP/$f" "$repo/$f"
		g add "$f"
	done
	GIT_COMMITTER_DATE=$(g log -1 --format=%ad --date=raw) g commit -q --amend --no-edit
	log "$p: with${own[$p]}"
done < "$TOP/patches/series"

GIT_COMMITTER_DATE=$(g log -1 --format=%ad --date=raw) \
	g format-patch -q --cover-letter --no-signature -o "$out" base..HEAD
# The latest benchmark run: its throughput and lock contention tables
latest=$(ls -d "$TOP"/bench/*/ | sort | tail -n1)
python3 "$TOP/rig/series_cover.py" "$out/0000-cover-letter.patch" \
	"$TOP/Documentation/filesystems/fuse-clone-queues.rst" "$base_rel" \
	$(for f in results.md lockstat.md; do [ ! -f "$latest$f" ] || echo "$latest$f"; done)
log "build/series: $(ls "$out" | wc -l) files (cover letter and $(($(ls "$out" | wc -l) - 1)) patches), against Linux $base_rel"
