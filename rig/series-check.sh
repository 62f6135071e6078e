#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Each patch of the series on its own: apply patches 1..k to the base for
# every k, then check that patch: checkpatch --strict; where it changes
# fs/fuse, fs/fuse builds with W=1 and sparse (C=1) without a warning, and
# the kernel-doc of our files is complete; where it changes the
# documentation, the files are valid reStructuredText (rig/rstcheck.py);
# where it adds the selftests,
# they build as kselftests do (lib.mk); and its own guest tests
# (rig/series-tests) run, in one guest boot, on the fuse.ko of patches
# 1..k.  Prints TAP for the host cases; the guest run is in RUNDIR, for
# verdict.py.  On a base whose own fs/fuse is not W=1 clean (6.1), a patch
# may keep the base's warnings and add none.  The per-patch guest needs
# the kselftest harness's -t and -f (Linux 6.8 on): on 6.1 the series is
# tested whole, in make check's 6.1 guests.
# usage: series-check.sh KDIR RUNDIR
. "$(dirname "$0")/lib.sh"

kdir=$(realpath "$1") rundir=$(realpath -m "$2")
base=$(base_dir)
tmp=$B/series-check
tree=$tmp/tree
mods=$tmp/mods
cp=$base/scripts/checkpatch.pl
# kernel-doc -Wall (Linux 6.2 on): the 6.12 base's, for the 6.1 series too
kd=$(BASE=6.12 base_dir)/scripts/kernel-doc
[ -f "$kd" ] || kd=$base/scripts/kernel-doc
kdw=-Wall
grep -q 'Wall' "$kd" || kdw=-v
rm -rf "$tmp"
mkdir -p "$tree" "$mods"
(cd "$base" && tar -cf - $(work_paths "$base")) | tar -xf - -C "$tree"
g() { git -C "$tree" -c user.name=rig -c user.email=rig@localhost "$@"; }
g init -q
g add -A
g commit -qm base
g tag base

# What W=1 and sparse say about the base's own fs/fuse, without line
# numbers: the warnings a patch may keep
warnings() {	# LOG: "file: warning: text" lines, sorted
	{ grep -E 'warning:|error:' "$1" || true; } |
		sed -E 's|^.*/([^/:]+):[0-9]+(:[0-9]+)?:|\1:|' | sort -u
}
m0=$tmp/mod-0
cp -r "$tree/fs/fuse" "$m0"
make -s -C "$kdir" M="$m0" -j"$JOBS" W=1 C=1 modules > "$tmp/build-0.log" 2>&1 ||
	die "the base's fs/fuse does not build against $kdir (see $tmp/build-0.log)"
warnings "$tmp/build-0.log" > "$tmp/warnings-0"
rm -rf "$m0"

n=0 rc=0
result() { tap_result "$@"; }

# Whether the base's kselftest harness selects tests (-t, -f)
harness_filters() {
	grep -q 'getopt' "$tree/tools/testing/selftests/kselftest_harness.h"
}

# The guest plan of a patch, by its subject
plan_of() {
	awk -F '\t' -v s="$1" '$1 == s { print $2 }' "$TOP/rig/series-tests" | tr ';' '\n'
}

: > "$tmp/plan"
k=0
while IFS= read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	k=$((k + 1))
	g am -q "$PATCHES/$p" || die "$p does not apply"
	subject=$(g log -1 --format=%s)
	changed=$(g diff --name-only HEAD~1 HEAD)

	r=0
	"$cp" --strict --no-tree --quiet --show-types --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG \
		"$PATCHES/$p" > "$tmp/checkpatch-$k.log" 2>&1 || r=1
	result $r "patch $k: checkpatch --strict: $subject" "$tmp/checkpatch-$k.log"

	if echo "$changed" | grep -q '^fs/fuse/\|^include/'; then
		m=$tmp/mod-$k
		rm -rf "$m"
		cp -r "$tree/fs/fuse" "$m"
		mkdir -p "$m/include/uapi/linux"
		cp "$tree/include/uapi/linux/fuse.h" "$m/include/uapi/linux/"
		printf '%s\n' 'NOSTDINC_FLAGS += -I$(src)/include/uapi' 'include $(src)/Makefile' > "$m/Kbuild"
		what="W=1 and sparse clean"
		[ ! -s "$tmp/warnings-0" ] ||
			what="no W=1 or sparse warning but the base's own $(wc -l < "$tmp/warnings-0")"
		if make -s -C "$kdir" M="$m" -j"$JOBS" W=1 C=1 modules > "$tmp/build-$k.log" 2>&1 &&
		   [ -z "$(warnings "$tmp/build-$k.log" | comm -23 - "$tmp/warnings-0")" ]; then
			result 0 "patch $k: fs/fuse builds, $what"
			cp "$m/fuse.ko" "$mods/p$k.ko"
		else
			warnings "$tmp/build-$k.log" | comm -23 - "$tmp/warnings-0" > "$tmp/new-$k.log"
			cat "$tmp/build-$k.log" >> "$tmp/new-$k.log"
			result 1 "patch $k: fs/fuse builds, $what" "$tmp/new-$k.log"
		fi
		own=$(cd "$tree" && ls fs/fuse/dev_bind*.[ch] 2>/dev/null || true)
		if [ -n "$own" ]; then
			(cd "$tree" && "$kd" -none $kdw $own 2>&1 | grep -v '^Info:') > "$tmp/kdoc-$k.log" || true
			r=0
			[ ! -s "$tmp/kdoc-$k.log" ] || r=1
			result $r "patch $k: kernel-doc $kdw clean on $(echo $own)" "$tmp/kdoc-$k.log"
		fi
		if [ -f "$mods/p$k.ko" ] && harness_filters; then
			pl=$(plan_of "$subject")
			[ -z "$pl" ] || printf 'module p%s\n%s\n' "$k" "$pl" >> "$tmp/plan"
		fi
	fi

	docs=$(echo "$changed" | grep '^Documentation/.*\.rst$' || true)
	if [ -n "$docs" ]; then
		r=0
		(cd "$tree" && /usr/bin/python3 "$TOP/rig/rstcheck.py" $docs) > "$tmp/rst-$k.log" 2>&1 || r=1
		result $r "patch $k: valid reStructuredText: $(echo $docs)" "$tmp/rst-$k.log"
	fi

	if echo "$changed" | grep -q '^tools/testing/selftests/filesystems/fuse/'; then
		out=$tmp/ksft-$k
		mkdir -p "$out"
		r=0
		make -s -C "$tree/tools/testing/selftests/filesystems/fuse" OUTPUT="$out" \
			KHDR_INCLUDES="-isystem $tree/include/uapi" $(ksft_targets "$tree" "$out") \
			> "$tmp/ksft-$k.log" 2>&1 || r=1
		! grep -qE 'warning:|error:' "$tmp/ksft-$k.log" || r=1
		result $r "patch $k: the selftests build with lib.mk, without warnings" "$tmp/ksft-$k.log"
		r=0
		grep -qx 'TARGETS += filesystems/fuse' "$tree/tools/testing/selftests/Makefile" || r=1
		result $r "patch $k: filesystems/fuse is a kselftest target"
	fi
done < "$PATCHES/series"

# Our files in the repo are the series' result
bad=0
for f in $(own_files "$tree"); do
	own_expected "$f" | cmp -s "$tree/$f" - ||
		{ echo "# $f differs from the series' result"; bad=1; }
done
result $bad "our files in the repo are what the series makes"

# The guest: each patch's tests on its fuse.ko
if [ -s "$tmp/plan" ]; then
	rm -rf "$rundir"
	mkdir -p "$rundir"
	cp "$tmp/plan" "$rundir/plan"
	"$TOP/rig/initramfs.sh" "$rundir/initramfs.cpio.gz" "$rundir/plan" "$mods" "$B/tests"
	"$TOP/rig/guest.sh" "$kdir/arch/x86/boot/bzImage" "$rundir/initramfs.cpio.gz" \
		"$rundir" 2node "${GUEST_TIMEOUT:-1500}"
fi
echo "1..$n"
exit $rc
