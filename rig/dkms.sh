#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# DKMS packaging of our fuse.ko.
# usage: dkms.sh source            write build/dkms/fuse-clone-queues-VERSION/
#        dkms.sh install [KVER..]  dkms add, build and install it for each
#                                  KVER (default: every installed 6.12.y
#                                  kernel with a build tree)
# The source tree is build/work's fs/fuse (the series applied, our files
# in), its uapi fuse.h, a Kbuild that puts that header first and names the
# base in modinfo (with dkms/fuse_version.c), and dkms/dkms.conf.in filled
# in.  VERSION is FUSE_OOT_VERSION there, what the module reports.
. "$(dirname "$0")/lib.sh"

name=fuse-clone-queues

make_source() {
	local ver base_rel dst
	"$TOP/rig/base.sh"
	"$TOP/rig/work.sh"
	ver=$(oot_version)
	[ -n "$ver" ] || die "no FUSE_OOT_VERSION in dkms/fuse_version.c"
	base_rel=$(make -s -C "$(base_dir)" kernelversion)
	dst=$B/dkms/$name-$ver
	rm -rf "$dst"
	mkdir -p "$dst/include/uapi/linux"
	cp -L "$B"/work/fs/fuse/* "$dst/"
	cp "$B/work/include/uapi/linux/fuse.h" "$dst/include/uapi/linux/"
	oot_kbuild "$dst" "$base_rel"
	sed -e "s/@VERSION@/$ver/g" -e "s/@BASE@/$base_rel/g" \
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
		for k in /lib/modules/6.12*; do
			[ -d "$k/build" ] && kvers+=("${k##*/}")
		done
	fi
	[ ${#kvers[@]} -gt 0 ] || die "no 6.12.y kernel with a build tree in /lib/modules: install its linux-headers package"
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
		77) log "$k: skipped (not 6.12.y, or FUSE built in: see README.md)" ;;
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
