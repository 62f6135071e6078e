#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make libfuse-deb: Debian's fuse3 source package (the one rig/libfuse.sh
# fetched) with libfuse/patches added to its debian/patches, built with
# dpkg-buildpackage as fuse3, libfuse3-3 and libfuse3-dev of version
# <Debian's version>+clonebind1, which sorts above Debian's own:
#
#   build/libfuse/deb/*.deb    the binary packages
#   build/libfuse/deb/src      the source tree they were built from
#
# Install them with "apt install ./libfuse3-3_*.deb ./fuse3_*.deb"; go back
# with "apt install --allow-downgrades libfuse3-3=V fuse3=V", V Debian's
# version (README, libfuse daemons).  The build skips the upstream test
# suite (nocheck: it needs a mounted FUSE).  fuse3's control file does not
# tie its udebs to the noudeb profile, so they are built too, and unused.
#
# usage: libfuse-deb.sh [3.18]
#   3.18 (make libfuse318-deb): sid's fuse3 3.18.3 (rig/libfuse318.sh) with
#   libfuse/patches-3.18, as fuse3, libfuse3-4 and libfuse3-dev, in
#   build/libfuse318/deb; built on bookworm, whose systemd still ships the
#   pkg-config files that sid's systemd-dev build dependency holds.
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = 3.18 ]; then
	"$TOP/rig/libfuse318.sh"
	LF=$BROOT/libfuse318 pdir=$TOP/libfuse/patches-3.18 lib=libfuse3-4
else
	"$TOP/rig/libfuse.sh"
	LF=$BROOT/libfuse pdir=$TOP/libfuse/patches lib=libfuse3-3
fi
out=$LF/deb
dsc=$LF/pkg/$(cat "$LF/work/.rig-dsc")
[ -f "$dsc" ] || die "no $dsc: run make libfuse-work"
suffix=+clonebind1
stamp="$(series_stamp "$pdir") ${dsc##*/}$suffix"
if [ "$(cat "$out/.rig-stamp" 2>/dev/null)" = "$stamp" ] &&
   ls "$out/${lib}"_*.deb > /dev/null 2>&1; then
	log "libfuse debs up to date in ${out#$TOP/}"
	exit 0
fi

missing=$(cd "$LF/work" && dpkg-checkbuilddeps -P nocheck,noudeb 2>&1 |
	  sed -n 's/.*Unmet build dependencies: //p' | sed 's/([^)]*)//g') || true
# sid's systemd-dev: bookworm's systemd has its files
nodeps=
if [ -n "$missing" ] && [ -z "$(echo "$missing" | sed 's/systemd-dev//; s/[[:space:]]//g')" ] &&
   dpkg-query -W -f='${Status}' systemd 2>/dev/null | grep -q 'ok installed'; then
	missing= nodeps=-d
fi
[ -z "$missing" ] || die "fuse3's build dependencies are missing:$missing (rig/deps.sh installs them)"

rm -rf "$out"
mkdir -p "$out"
dpkg-source -q -x "$dsc" "$out/src" > "$out/source.log" 2>&1 ||
	{ cat "$out/source.log" >&2; die "dpkg-source -x ${dsc##*/} failed"; }
cd "$out/src"
mkdir -p debian/patches
# bookworm's udev puts the rules under /lib, sid's under /usr/lib, which
# sid's package leaves uninstalled: the same for bookworm's path
if [ -f debian/not-installed ] && grep -q '^debian/tmp/usr/lib/udev/' debian/not-installed; then
	sed -n 's|^debian/tmp/usr/lib/udev/|lib/udev/|p' debian/not-installed >> debian/not-installed
fi
# Our patches go on top of Debian's, under names that say whose they are
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	cp "$pdir/$p" "debian/patches/clone-bind-$p"
	echo "clone-bind-$p" >> debian/patches/series
done < "$pdir/series"
src=$(dpkg-parsechangelog -S Source)
ver=$(dpkg-parsechangelog -S Version)$suffix
dist=$(dpkg-parsechangelog -S Distribution)
{
	printf '%s (%s) %s; urgency=medium\n\n' "$src" "$ver" "$dist"
	printf '  * -o clone_bind=cpu|node and fuse_loop_cfg_set_clone_bind(): serve a\n'
	printf '    mount through one /dev/fuse clone per CPU or NUMA node, bound with\n'
	printf '    FUSE_DEV_IOC_BIND (per-device input queues) and read by workers\n'
	printf '    pinned there; as clone_fd on a kernel without FUSE_DEV_IOC_BIND.\n'
	printf '  * Patches: %s.\n\n' "$(grep -v '^#' "$pdir/series" | tr '\n' ' ' | sed 's/ $//')"
	printf ' -- FUSE clone queues team <fuse-cq@example.org>  %s\n\n' \
		"$(date -R -d "@$(git -C "$LF/work" log -1 --format=%ct)")"
	cat debian/changelog
} > debian/changelog.new
mv debian/changelog.new debian/changelog
log "building $src $ver with dpkg-buildpackage (${out#"$TOP"/}/build.log)"
DEB_BUILD_OPTIONS="nocheck parallel=$JOBS" dpkg-buildpackage $nodeps -b -uc -us \
	--build-profiles=nocheck,noudeb > "$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; die "dpkg-buildpackage failed"; }
cd "$TOP"
for p in fuse3 "$lib" libfuse3-dev; do
	f=$(ls "$out/${p}_${ver}_"*.deb 2>/dev/null | head -n1)
	[ -n "$f" ] || die "no $p $ver package after the build"
	[ "$(dpkg-deb -f "$f" Version)" = "$ver" ] || die "$f: not version $ver"
done
dpkg --compare-versions "$ver" gt "${ver%$suffix}" ||
	die "$ver does not sort above ${ver%$suffix}"
echo "$stamp" > "$out/.rig-stamp"
log "libfuse debs $ver: $(cd "$out" && ls *.deb | tr '\n' ' ')"
