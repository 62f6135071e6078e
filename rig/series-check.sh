#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Each patch of the series must build on its own: apply patches 1..k to the
# base for every k and build fuse.ko (with our files where the series
# compiles them).  Prints one "ok"/"not ok" line per patch.
# usage: series-check.sh KDIR
. "$(dirname "$0")/lib.sh"

kdir=$(realpath "$1")
base=$(base_dir)
tmp=$B/series-check
rm -rf "$tmp"
mkdir -p "$tmp"
(cd "$base" && tar -cf - $WORK_PATHS) | tar -xf - -C "$tmp"
git -C "$tmp" init -q
git -C "$tmp" -c user.name=rig -c user.email=rig@localhost add -A
git -C "$tmp" -c user.name=rig -c user.email=rig@localhost commit -qm base
k=0 rc=0
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	k=$((k + 1))
	git -C "$tmp" -c user.name=rig -c user.email=rig@localhost am -q "$TOP/patches/$p" || die "$p does not apply"
	m=$tmp/mod
	rm -rf "$m"
	cp -r "$tmp/fs/fuse" "$m"
	cp "$TOP"/fs/fuse/*.[ch] "$m"/
	mkdir -p "$m/include/uapi/linux"
	cp "$tmp/include/uapi/linux/fuse.h" "$m/include/uapi/linux/"
	printf '%s\n' 'NOSTDINC_FLAGS += -I$(src)/include/uapi' 'include $(src)/Makefile' > "$m/Kbuild"
	if make -s -C "$kdir" M="$m" -j"$JOBS" W=1 CONFIG_FUSE_CLONE_QUEUE_KUNIT_TEST=y modules > "$tmp/build-$k.log" 2>&1 &&
	   ! grep -q 'warning:' "$tmp/build-$k.log"; then
		echo "ok $k series: $p builds"
	else
		echo "not ok $k series: $p builds"
		sed 's/^/#   /' "$tmp/build-$k.log" | head -20
		rc=1
	fi
done < "$TOP/patches/series"
echo "1..$k"
exit $rc
