#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A Debian userland for the guest, as a user's machine has it: mmdebstrap
# makes a minbase tree of the host's release with Debian's sshfs and
# openssh-server and our fuse3 and libfuse3-3 packages (make libfuse-deb),
# installed by apt like any other package.  What apt says of them then,
# with the archive's lists (that it would keep ours over Debian's own), is
# kept in the tree as /root/apt-policy.txt; mmdebstrap drops the lists.
# Documentation, man pages and locales are left out.
#
#   build/libfuse/debroot.tar   the tree, for rig/initramfs.sh
#                               (INITRAMFS_BASE)
#   build/libfuse/debroot.txt   what apt says of the packages, and sizes
. "$(dirname "$0")/lib.sh"

LF=$BROOT/libfuse
"$TOP/rig/libfuse-deb.sh"
command -v mmdebstrap > /dev/null || die "no mmdebstrap: apt-get install mmdebstrap"
debs=$(ls "$LF"/deb/libfuse3-3_*.deb "$LF"/deb/fuse3_*.deb)
pkgs="openssh-server,openssh-client,sshfs,kmod,procps"
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
[ -n "$suite" ] || die "no VERSION_CODENAME in /etc/os-release"
stamp="$suite $pkgs $(sha256sum $debs | awk '{ print $1 }' | tr '\n' ' ')"
out=$LF/debroot.tar
if [ -f "$out" ] && [ "$(cat "$LF/debroot.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
log "mmdebstrap: a $suite minbase tree with sshfs and our libfuse (build/libfuse/debroot.log)"
rm -f "$out" "$LF/debroot.stamp"
inc=$pkgs
for d in $debs; do
	inc="$inc,$d"
done
mmdebstrap --variant=minbase --include="$inc" \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--customize-hook='chroot "$1" dpkg-query -W fuse3 libfuse3-3 sshfs openssh-server > "$1/root/packages.txt"' \
	--customize-hook='chroot "$1" apt-cache policy libfuse3-3 fuse3 > "$1/root/apt-policy.txt"' \
	"$suite" "$LF/debroot.tmp.tar" > "$LF/debroot.log" 2>&1 ||
	{ tail -n 30 "$LF/debroot.log" >&2; die "mmdebstrap failed"; }
mv "$LF/debroot.tmp.tar" "$out"
{
	tar -xOf "$out" ./root/packages.txt
	tar -xOf "$out" ./root/apt-policy.txt
	echo "tree: $(du -m "$out" | cut -f1) MiB"
} > "$LF/debroot.txt"
echo "$stamp" > "$LF/debroot.stamp"
log "Debian userland: $(tail -n1 "$LF/debroot.txt")"
