#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch a Debian source package with apt, without changing the system's apt
# configuration: a private deb-src list (the system's own sources, turned
# into deb-src), private package lists and cache, all under build/apt.
#
# usage: debsrc.sh PACKAGE[=VERSION] DIR
#   DIR gets the .dsc and its files (nothing is fetched if a .dsc of the
#   package is already there); the path of the .dsc is printed.
. "$(dirname "$0")/lib.sh"

spec=$1 dir=$2
pkg=${spec%%=*}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
want="$dir/${pkg}_*.dsc"
if [ "$spec" != "$pkg" ]; then
	v=${spec#*=}
	want="$dir/${pkg}_${v#*:}.dsc"
fi
# shellcheck disable=SC2086
for f in $want; do
	if [ -f "$f" ]; then
		echo "$f"
		exit 0
	fi
done

A=$BROOT/apt
mkdir -p "$A/sources.list.d" "$A/preferences.d" "$A/lists/partial" \
	"$A/cache/archives/partial"
: > "$A/sources.list"
# deb822 files: every "Types: deb" stanza as deb-src too; one-line lists:
# every "deb" line as "deb-src"
rm -f "$A"/sources.list.d/*
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	sed -E 's/^Types:.*/Types: deb-src/' "$f" > "$A/sources.list.d/${f##*/}"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] || continue
	sed -nE 's/^[[:space:]]*deb([[:space:]])/deb-src\1/p' "$f" >> "$A/sources.list"
done
opts=(-o "Dir::Etc::SourceList=$A/sources.list"
      -o "Dir::Etc::SourceParts=$A/sources.list.d"
      -o "Dir::Etc::PreferencesParts=$A/preferences.d"
      -o "Dir::State::Lists=$A/lists"
      -o "Dir::Cache=$A/cache"
      -o "APT::Sandbox::User=root")
log "fetching the source package $spec (apt, private lists in $A)"
apt-get -qq "${opts[@]}" update >&2 || die "apt-get update (deb-src) failed"
(cd "$dir" && apt-get -qq "${opts[@]}" source --download-only "$spec" >&2) ||
	die "apt-get source $spec failed"
for f in $want; do
	if [ -f "$f" ]; then
		echo "$f"
		exit 0
	fi
done
die "no $want after apt-get source"
