#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Debian's own kernel binary for the base: the linux-image-*-amd64-unsigned
# package of the same version as linux-source-$BASE (for 6.1, Debian 12's
# kernel), with its headers and kbuild, downloaded with apt-get download
# and unpacked under $B/debian (nothing is installed).  The headers are
# what DKMS builds against on a Debian machine; their Makefile names the
# common headers by absolute path, so that line is pointed at the unpacked
# copy.  Writes $B/debian/env:
#   DEB_KREL     the kernel release (6.1.0-NN-amd64)
#   DEB_VERSION  the package version (that of linux-source-$BASE)
#   DEB_VMLINUZ  the kernel image
#   DEB_KDIR     the headers' build tree, for make M=
#   DEB_MODDIR   its /lib/modules/DEB_KREL
. "$(dirname "$0")/lib.sh"

out=$B/debian
ver=$(dpkg-query -W -f='${Version}' "linux-source-$BASE" 2>/dev/null) ||
	die "linux-source-$BASE is not installed: rig/deps.sh installs it"
if [ -f "$out/env" ] && grep -qx "DEB_VERSION=$ver" "$out/env"; then
	exit 0
fi

# The ABI (6.1.0-NN) whose image package has exactly that version
abi=
for p in $(apt-cache search --names-only "^linux-image-$BASE\\.0-[0-9]+-amd64-unsigned\$" |
	   awk '{ print $1 }' | sort -t- -k4,4nr); do
	if apt-cache show "$p=$ver" >/dev/null 2>&1; then
		abi=${p#linux-image-}
		abi=${abi%-amd64-unsigned}
		break
	fi
done
[ -n "$abi" ] || die "no linux-image-$BASE.0-*-amd64-unsigned of version $ver in apt's lists (apt-get update?)"
krel=$abi-amd64
log "Debian's kernel $krel ($ver): downloading and unpacking under $out"
rm -rf "$out"
mkdir -p "$out/debs" "$out/root"
(cd "$out/debs" && apt-get download -q -o APT::Sandbox::User=root \
	"linux-image-$krel-unsigned=$ver" "linux-headers-$krel=$ver" \
	"linux-headers-$abi-common=$ver" "linux-kbuild-$BASE=$ver" >/dev/null) ||
	die "apt-get download of Debian's $krel packages failed"
for d in "$out"/debs/*.deb; do
	dpkg-deb -x "$d" "$out/root"
done
kdir=$out/root/usr/src/linux-headers-$krel
sed -i "s|^include /usr/src/|include $out/root/usr/src/|" "$kdir/Makefile"
[ -f "$out/root/boot/vmlinuz-$krel" ] || die "no vmlinuz-$krel in the image package"
[ -f "$out/root/lib/modules/$krel/kernel/fs/fuse/fuse.ko" ] ||
	die "Debian's $krel has no fs/fuse/fuse.ko (FUSE built in?)"
rm -rf "$out/debs"
cat > "$out/env" <<EOF
DEB_KREL=$krel
DEB_VERSION=$ver
DEB_VMLINUZ=$out/root/boot/vmlinuz-$krel
DEB_KDIR=$kdir
DEB_MODDIR=$out/root/lib/modules/$krel
EOF
log "Debian's kernel: $krel"
