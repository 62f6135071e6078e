#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make series-range: the series of every base applied to its base (the
# work trees, rig/work.sh), and git range-diff of each backport (6.12,
# 6.1) against the primary series (7.3), so that only the hunks that
# differ between the bases need review: build/series-range.txt.  Prints
# TAP: every series applies, the backports have the primary's subjects
# and messages in the same order, and our own files (one copy in the
# repo) as rig/backport.sed derives them.
# usage: series-range.sh [OUT]
. "$(dirname "$0")/lib.sh"

out=$(realpath -m "${1:-$BROOT/series-range.txt}")
repo=$BROOT/series-range-git
n=0 rc=0
result() { tap_result "$@"; }

rm -rf "$repo"
mkdir -p "$repo"
g() { git -C "$repo" -c user.name=rig -c user.email=rig@localhost "$@"; }
g init -q
for b in $BASES; do
	r=0
	{ BASE=$b "$TOP/rig/base.sh" && BASE=$b "$TOP/rig/work.sh"; } > "$repo.log" 2>&1 || r=1
	result $r "the $b series applies to Linux $b (patches/$b)" "$repo.log"
	[ $r = 0 ] || continue
	# The work tree's history, fetched as branches base-B and series-B
	w=$(base_build "$b")/work
	g fetch -q "$w" "+refs/tags/base:refs/heads/base-$b" "+HEAD:refs/heads/series-$b"
done
[ $rc = 0 ] || { echo "1..$n"; exit 1; }

first=$PRIMARY
msgs() { g log --reverse --format='%B%x00' "base-$1..series-$1"; }
: > "$out"
for second in $BASES; do
	[ "$second" != "$first" ] || continue
	r=0
	diff <(g log --reverse --format=%s "base-$first..series-$first") \
		<(g log --reverse --format=%s "base-$second..series-$second") > "$repo.log" 2>&1 || r=1
	result $r "the $second backport has the subjects of the $first series, in the same order" "$repo.log"
	r=0
	diff <(msgs "$first") <(msgs "$second") > "$repo.log" 2>&1 || r=1
	result $r "the $second backport has the messages of the $first series" "$repo.log"
	# Our files: the same, the kernel ones as rig/backport.sed derives them
	r=0
	: > "$repo.log"
	for f in $(g diff --name-only --diff-filter=A "base-$first" "series-$first" -- $OWN_PATHS |
		   grep -vxF "$OWN_GLUE"); do
		case "$f" in
		Documentation/*|tools/*) want=(cat) ;;
		*) want=(sed -E -f "$TOP/rig/backport.sed") ;;
		esac
		if ! cmp -s <(g show "series-$first:$f" | "${want[@]}") \
			    <(g show "series-$second:$f" 2>/dev/null); then
			echo "$f differs" >> "$repo.log"
			r=1
		fi
	done
	result $r "our own files in the $second backport are the $first series' (rig/backport.sed)" "$repo.log"

	{
		echo "# git range-diff of the Linux $second backport against the Linux $first series"
		echo "# ($(g rev-parse --short "series-$first") on $(g log -1 --format=%s "base-$first");"
		echo "#  $(g rev-parse --short "series-$second") on $(g log -1 --format=%s "base-$second"))"
		g range-diff --no-color --creation-factor=100 "base-$first..series-$first" "base-$second..series-$second"
	} > "$out.$second"
	cat "$out.$second" >> "$out"
	# Every patch paired with one of the other series, none left alone
	r=0
	paired=$(grep -Ec '^ *[0-9]+: +[0-9a-f]+ [=!] +[0-9]+:' "$out.$second" || true)
	alone=$(grep -Ec '^ *(-|[0-9]+): +(-+|[0-9a-f]+) [<>] ' "$out.$second" || true)
	[ "$paired" = "$(g rev-list --count "base-$first..series-$first")" ] && [ "$alone" = 0 ] || r=1
	result $r "git range-diff pairs every patch of the $first and $second series ($paired paired, $alone alone): ${out#$TOP/}" "$out.$second"
	log "range-diff $first..$second: $(grep -Ec '^ *[0-9]+: +[0-9a-f]+ = ' "$out.$second") patches identical, $(grep -Ec '^ *[0-9]+: +[0-9a-f]+ ! ' "$out.$second") differ"
	rm -f "$out.$second"
done
echo "1..$n"
exit $rc
