#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the rig needs, if any is missing.
. "$(dirname "$0")/lib.sh"

PKGS="linux-source-6.12 linux-source-6.1 build-essential flex bison bc libelf-dev libssl-dev
      cpio gzip xz-utils kmod git python3 perl sparse busybox-static qemu-system-x86
      libfuse3-dev pkgconf dbench fsmark dkms meson libaio-dev python3-docutils
      dpkg-dev debhelper udev mmdebstrap ccache liburing-dev libnuma-dev"
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	die "missing packages:$missing; run as root: apt-get install$missing"
fi
log "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
