#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A Debian userland for the go-fuse guests: mmdebstrap makes a minbase
# tree of the host's release with Debian's fuse3 (fusermount3, which
# go-fuse mounts through) and what go-fuse's tests run besides (bash,
# flock, tail, ls, cat: minbase has them); documentation, man pages and
# locales left out.  The go-fuse binaries are static and go on top of it
# (rig/gofuse-check.sh).
#   build/gofuse/debroot.tar   the tree, for rig/initramfs.sh (INITRAMFS_BASE)
. "$(dirname "$0")/lib.sh"

GF=$BROOT/gofuse
command -v mmdebstrap > /dev/null || die "no mmdebstrap: apt-get install mmdebstrap"
pkgs="fuse3,procps"
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
[ -n "$suite" ] || die "no VERSION_CODENAME in /etc/os-release"
stamp="$suite $pkgs"
out=$GF/debroot.tar
if [ -f "$out" ] && [ "$(cat "$GF/debroot.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
mkdir -p "$GF"
log "mmdebstrap: a $suite minbase tree with fuse3 (build/gofuse/debroot.log)"
rm -f "$out" "$GF/debroot.stamp"
mmdebstrap --variant=minbase --include="$pkgs" \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--customize-hook='chroot "$1" dpkg-query -W fuse3 bash util-linux coreutils > "$1/root/packages.txt"' \
	"$suite" "$GF/debroot.tmp.tar" > "$GF/debroot.log" 2>&1 ||
	{ tail -n 30 "$GF/debroot.log" >&2; die "mmdebstrap failed"; }
mv "$GF/debroot.tmp.tar" "$out"
echo "$stamp" > "$GF/debroot.stamp"
log "go-fuse's Debian userland: $(du -m "$out" | cut -f1) MiB"
