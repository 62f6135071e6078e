#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# DKMS packaging of our fuse.ko.
# usage: dkms.sh source            write build/dkms/fuse-clone-queues-VERSION/
#        dkms.sh install [KVER..]  dkms add, build and install it for each
#                                  KVER (default: every installed 7.3.y,
#                                  6.12.y and 6.1.y kernel with a build tree)
# The source tree holds, for each base (7.3/, 6.12/, 6.1/), the work tree's
# fs/fuse (the series applied, our files in), its uapi fuse.h, and a Kbuild
# that puts that header first and names the base in modinfo (with
# dkms/fuse_version.c); and dkms/dkms.conf.in filled in, which picks the
# base by the kernel's version.  VERSION is FUSE_OOT_VERSION there, what
# the module reports.
. "$(dirname "$0")/lib.sh"

name=fuse-clone-queues

make_source() {
	local ver b bb base_rel dst sed_args=() have=()
	ver=$(oot_version)
	[ -n "$ver" ] || die "no FUSE_OOT_VERSION in dkms/fuse_version.c"
	dst=$BROOT/dkms/$name-$ver
	rm -rf "$dst"
	# Every base whose sources are here (linux-source-BASE, or KSRC)
	for b in $BASES; do
		# 7.3's from trixie-backports (rig/base.sh), where apt reaches it
		if [ -n "$(ls /usr/src/linux-source-"$b".tar.* 2>/dev/null)" ] ||
		   { [ -n "${KSRC:-}" ] && [ "$(tree_version "$KSRC")" = "$b" ]; } ||
		   { [ "$b" = 7.3 ] && BASE=7.3 "$TOP/rig/base.sh" >/dev/null 2>&1; }; then
			have+=("$b")
		else
			log "no linux-source-$b: the DKMS package leaves Linux $b.y kernels out"
			sed_args+=(-e "s/@BASE_$b@/(not included)/g")
		fi
	done
	[ ${#have[@]} -gt 0 ] || die "no base sources: apt-get install linux-source-6.12 or linux-source-6.1"
	for b in "${have[@]}"; do
		BASE=$b "$TOP/rig/base.sh"
		BASE=$b "$TOP/rig/work.sh"
		bb=$(base_build "$b")
		base_rel=$(make -s -C "$(BASE=$b base_dir)" kernelversion)
		mkdir -p "$dst/$b/include/uapi/linux"
		cp -L "$bb"/work/fs/fuse/* "$dst/$b/"
		cp "$bb/work/include/uapi/linux/fuse.h" "$dst/$b/include/uapi/linux/"
		oot_kbuild "$dst/$b" "$base_rel"
		sed_args+=(-e "s/@BASE_$b@/$base_rel/g")
	done
	# The kernels it builds for, as a regular expression: 6\.12|6\.1
	b=$(printf '%s\n' "${have[@]}" | sed 's/\./\\./g' | paste -sd'|')
	sed -e "s/@VERSION@/$ver/g" -e "s/@BASES_RE@/${b//\\/\\\\}/g" "${sed_args[@]}" \
		"$TOP/dkms/dkms.conf.in" > "$dst/dkms.conf"
	log "DKMS source: $dst"
	echo "$dst"
}

install_all() {
	local src ver k kvers=("$@") rc ok=0
	command -v dkms >/dev/null || die "no dkms: apt-get install dkms, or use make install"
	[ "$(id -u)" = 0 ] || die "make dkms-install needs root"
	src=$(make_source)
	ver=$(oot_version)
	if [ ${#kvers[@]} = 0 ]; then
		for k in /lib/modules/*; do
			[ -d "$k/build" ] && [ -n "$(base_of_release "${k##*/}")" ] &&
				kvers+=("${k##*/}")
		done
	fi
	[ ${#kvers[@]} -gt 0 ] || die "no 7.3.y, 6.12.y or 6.1.y kernel with a build tree in /lib/modules: install its linux-headers package"
	# The same version may have been added from other sources: replace it
	if [ -n "$(dkms status -m "$name" -v "$ver")" ]; then
		dkms remove -m "$name" -v "$ver" --all
	fi
	rm -rf "/usr/src/$name-$ver"
	dkms add "$src"
	for k in "${kvers[@]}"; do
		rc=0
		dkms install -m "$name" -v "$ver" -k "$k" || rc=$?
		case $rc in
		0) ok=$((ok + 1)) ;;
		77) log "$k: skipped (not 7.3.y, 6.12.y nor 6.1.y, or FUSE built in: see README.md)" ;;
		*) die "dkms install for $k failed (rc=$rc)" ;;
		esac
	done
	[ $ok -gt 0 ] || die "installed for no kernel"
	if grep -q '^fuse ' /proc/modules; then
		log "fuse.ko is loaded: the new one is used after the next boot, or now with 'make reload' once no FUSE file system is mounted"
	fi
}

case ${1:-} in
source) make_source >/dev/null ;;
install) shift; install_all "$@" ;;
*) die "usage: dkms.sh source|install [KVER...]" ;;
esac
