#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch a package from a Debian suite the host does not use (trixie-
# backports for linux-source-7.3, sid for the fuse3 source), with private
# apt lists and cache under build/apt/SUITE: nothing on the host is
# installed or upgraded from that suite.
#
# usage: debsuite.sh SUITE binary|source PACKAGE DIR
#   binary: DIR gets PACKAGE's .deb (apt-get download); source: its .dsc
#   and files (apt-get source --download-only).  The .deb or .dsc path is
#   printed; nothing is fetched when DIR already has one.
. "$(dirname "$0")/lib.sh"

suite=$1 kind=$2 pkg=$3 dir=$4
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
case "$kind" in
binary) want="$dir/${pkg}_*.deb" ;;
source) want="$dir/${pkg}_*.dsc" ;;
*) die "debsuite.sh: binary or source, not '$kind'" ;;
esac
found() {
	local f
	# shellcheck disable=SC2086
	for f in $want; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
found && exit 0

# The mirror the host uses (deb822 or one-line lists), Debian's by default
mirror=$(sed -n 's/^URIs:[[:space:]]*\(http[^[:space:]]*\/debian\)\/\{0,1\}$/\1/p' \
	/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
A=$BROOT/apt/$suite
mkdir -p "$A/parts" "$A/preferences.d" "$A/lists/partial" "$A/cache/archives/partial"
key=/usr/share/keyrings/debian-archive-keyring.gpg
printf 'deb [signed-by=%s] %s %s main\ndeb-src [signed-by=%s] %s %s main\n' \
	"$key" "$mirror" "$suite" "$key" "$mirror" "$suite" > "$A/sources.list"
opts=(-o "Dir::Etc::SourceList=$A/sources.list"
      -o "Dir::Etc::SourceParts=$A/parts"
      -o "Dir::Etc::PreferencesParts=$A/preferences.d"
      -o "Dir::State::Lists=$A/lists"
      -o "Dir::Cache=$A/cache"
      -o "APT::Sandbox::User=root")
log "fetching $pkg ($kind) from $suite (apt, private lists in ${A#"$TOP"/})"
apt-get -qq "${opts[@]}" update >&2 || die "apt-get update ($suite) failed"
if [ "$kind" = binary ]; then
	(cd "$dir" && apt-get -qq "${opts[@]}" download "$pkg" >&2) ||
		die "apt-get download $pkg ($suite) failed"
else
	(cd "$dir" && apt-get -qq "${opts[@]}" source --download-only "$pkg" >&2) ||
		die "apt-get source $pkg ($suite) failed"
fi
found || die "no $want after apt-get"
