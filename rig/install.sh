#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make install / make uninstall without DKMS: build our fuse.ko for a
# kernel build tree and install it under /lib/modules/<release>/updates/,
# where depmod finds it before the kernel's own fuse.ko.
# usage: install.sh install|uninstall|reload
#   KDIR             kernel build tree (default /lib/modules/$(uname -r)/build)
#   INSTALL_MOD_PATH staging root: install there, never touch the running fuse
#   DRY_RUN=1        print what would be changed, change nothing
# Replacing the fuse module of the running kernel means unloading it, which
# needs every FUSE mount gone: with one left (or a dependent module, or an
# open /dev/fuse) nothing is done and one line says why.  A mounted fusectl
# is unmounted and mounted again around the reload.
# For the tests: PROC_MODULES, PROC_MOUNTS and RUNNING_RELEASE stand in for
# /proc/modules, /proc/mounts and uname -r.
. "$(dirname "$0")/lib.sh"

action=${1:-install}
running=${RUNNING_RELEASE:-$(uname -r)}
kdir=${KDIR:-/lib/modules/$running/build}
root=${INSTALL_MOD_PATH:-}
proc_modules=${PROC_MODULES:-/proc/modules}
proc_mounts=${PROC_MOUNTS:-/proc/mounts}
fusectl=/sys/fs/fuse/connections
subdir=updates/fuse-clone-queues
built=

act() {	# a command that changes the system
	if [ "${DRY_RUN:-0}" = 1 ]; then
		echo "would run: $*"
	else
		"$@"
	fi
}

refuse() {
	echo "make $action: $*" >&2
	exit 1
}

kernel_release() {
	[ -f "$kdir/Makefile" ] || refuse "no kernel build tree at $kdir (install linux-headers-$running, or give KDIR=)"
	kdir_release "$kdir"
}

has_fusectl() {
	awk '$3 == "fusectl" { f = 1 } END { exit !f }' "$proc_mounts"
}

# FUSE mounts (and what else holds fuse.ko) of the running kernel, when we
# are about to replace its loaded fuse module.
preflight() {
	local line mounts deps refs ctl=0
	[ -z "$root" ] && [ "$rel" = "$running" ] || return 0
	line=$(grep '^fuse ' "$proc_modules" 2>/dev/null) || return 0
	mounts=$(awk '$3 ~ /^(fuse|fuseblk|virtiofs)(\.|$)/ { printf " %s", $2 }' "$proc_mounts")
	[ -z "$mounts" ] || refuse "fuse.ko is loaded and FUSE is mounted on$mounts: unmount every FUSE file system first (nothing was changed)"
	deps=$(echo "$line" | awk '{ sub(/,$/, "", $4); print $4 }')
	[ "$deps" = - ] || refuse "fuse.ko is loaded and used by the modules $deps: unload them first (nothing was changed)"
	has_fusectl && ctl=1
	refs=$(echo "$line" | awk '{ print $3 }')
	[ "$((refs - ctl))" -le 0 ] || refuse "fuse.ko is loaded and held $((refs - ctl)) more time(s), e.g. by an open /dev/fuse: stop the FUSE daemons first (nothing was changed)"
	reload=1
}

# Unload the running fuse.ko and load what modprobe now finds.
do_reload() {
	local ctl=0
	has_fusectl && ctl=1
	[ $ctl = 0 ] || act umount "$fusectl"
	if ! act rmmod fuse; then
		[ $ctl = 0 ] || act mount -t fusectl none "$fusectl"
		die "rmmod fuse failed: the installed fuse.ko is used from the next boot"
	fi
	act modprobe fuse
	[ $ctl = 0 ] || act mount -t fusectl none "$fusectl"
	if [ -r /sys/module/fuse/version ] && [ "${DRY_RUN:-0}" != 1 ]; then
		log "loaded fuse.ko version $(cat /sys/module/fuse/version)"
	fi
}

if [ "$action" = reload ]; then rel=$running; else rel=$(kernel_release); fi
reload=0
dest=$root/lib/modules/$rel/$subdir
depmod_args=(-a)
[ -z "$root" ] || depmod_args=(-a -b "$root")

case $action in
install)
	preflight
	built=$("$TOP/rig/module.sh" "$kdir" | tail -n1)
	preflight	# again: a mount may have come while we built
	act mkdir -p "$dest"
	for m in fuse cuse virtiofs; do
		# cuse and virtiofs use fuse.ko's structures: where the kernel
		# builds them, ours replace them too
		[ -f "$built/$m.ko" ] && act install -m 644 "$built/$m.ko" "$dest/"
	done
	act depmod "${depmod_args[@]}" "$rel"
	log "installed $(cd "$built" && ls fuse.ko cuse.ko virtiofs.ko 2>/dev/null | tr '\n' ' ')in $dest"
	;;
uninstall)
	[ -d "$dest" ] || { log "nothing installed in $dest"; exit 0; }
	preflight
	act rm -rf "$dest"
	act depmod "${depmod_args[@]}" "$rel"
	log "removed $dest"
	;;
reload)
	[ -z "$root" ] && [ "$rel" = "$running" ] || die "reload is for the running kernel"
	preflight
	if [ $reload = 0 ]; then
		if [ -d /sys/module/fuse ] && [ -z "${PROC_MODULES:-}" ]; then
			refuse "FUSE is built into the running kernel: no module can replace it (see README.md)"
		fi
		log "fuse.ko is not loaded: modprobe fuse loads the installed one"
		exit 0
	fi
	;;
*)
	die "usage: install.sh install|uninstall|reload"
	;;
esac

if [ $reload = 1 ]; then
	do_reload
elif [ -z "$root" ] && [ "$rel" = "$running" ]; then
	log "fuse.ko was not loaded: modprobe fuse (or the next FUSE mount) loads the new one"
else
	log "for kernel $rel: used when that kernel boots"
fi
