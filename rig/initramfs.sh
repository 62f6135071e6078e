#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pack a guest initramfs: busybox-static, /init, the modules, the tests and
# a plan.  usage: initramfs.sh OUT.cpio.gz PLAN MODDIR TESTDIR [HOSTFILE...]
#
# Host files are packed at their own absolute path: the HOSTFILE arguments,
# those in $INITRAMFS_EXTRA (space-separated) and the lines of
# TESTDIR/initramfs-extra.list (rig/selftests.sh writes it: dbench, fs_mark,
# dbench's load file, libfuse's example daemons and, once built, fio); a
# missing one is left out with a warning.  Every
# dynamically linked ELF packed, tests and host files alike, gets the shared
# libraries ldd finds for it and the loader, at their paths on the host
# (and libgcc_s.so.1 next to libc.so.6, which glibc loads at run time).
# INITRAMFS_BASE, a tar of a root tree (rig/debroot.sh: a Debian
# userland), is unpacked first, and the rest goes on top of it.
. "$(dirname "$0")/lib.sh"

out=$1 plan=$2 moddir=$3 testdir=$4
shift 4
bb=/bin/busybox
[ -x "$bb" ] || die "no $bb: apt-get install busybox-static"
root=$(mktemp -d "$B/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
[ -z "${INITRAMFS_BASE:-}" ] || tar -xf "$INITRAMFS_BASE" -C "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,lib/fuse,tests}
cp "$bb" "$root/bin/busybox"
[ -e "$root/bin/sh" ] || ln -s busybox "$root/bin/sh"
cp "$TOP/rig/guest-init.sh" "$root/init"
chmod +x "$root/init"
cp "$plan" "$root/plan"
# (none for a guest that loads no module: the plan's "module" lines fail)
for f in "$moddir"/*.ko; do
	[ ! -e "$f" ] || cp "$f" "$root/lib/fuse/"
done
cp "$testdir"/* "$root/tests/" 2>/dev/null || true

# A host file at the same path in the guest (dereferenced)
add_host_file() {
	local f=$1
	if [ ! -e "$root$f" ]; then
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	fi
}

# The shared libraries of a dynamically linked ELF, and the loader
add_libs() {
	local elf=$1 dyn deps lib
	dyn=$(readelf -d "$elf" 2>/dev/null) || return 0
	case "$dyn" in *'(NEEDED)'*) ;; *) return 0 ;; esac
	deps=$(ldd "$elf") || die "ldd $elf failed"
	case "$deps" in
	*'not found'*) die "$elf: shared libraries not found: $(echo "$deps" | grep 'not found' | tr -s '\t\n' '  ')" ;;
	esac
	for lib in $(echo "$deps" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
					 $1 ~ /^\// { print $1 }'); do
		add_host_file "$lib"
		# glibc dlopen()s libgcc_s for pthread_cancel() and unwinding
		if [ "${lib##*/}" = libc.so.6 ] &&
		   [ -f "${lib%/*}/libgcc_s.so.1" ]; then
			add_host_file "${lib%/*}/libgcc_s.so.1"
		fi
	done
	return 0
}

extra=("$@")
for f in ${INITRAMFS_EXTRA:-}; do
	extra+=("$f")
done
if [ -f "$testdir/initramfs-extra.list" ]; then
	while read -r f _; do
		case "$f" in /*) extra+=("$f") ;; esac
	done < "$testdir/initramfs-extra.list"
fi
for f in ${extra[@]+"${extra[@]}"}; do
	case "$f" in
	/*) ;;
	*) die "host file $f: give an absolute path" ;;
	esac
	if [ -f "$f" ]; then
		add_host_file "$f"
		add_libs "$f"
	else
		log "warning: $f is not on this host: not in the initramfs"
	fi
done
for f in "$root"/tests/*; do
	if [ -f "$f" ]; then
		add_libs "$f"
	fi
done

# The same files give the same archive: fixed times, sorted names, no
# inode or device numbers (an instruction-clock guest then boots the same
# way twice)
(cd "$root" && find . -exec touch -h -d @1767225600 {} + &&
	find . | LC_ALL=C sort | cpio -o -H newc --quiet --reproducible |
	gzip -1 -n) > "$out"
