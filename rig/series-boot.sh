#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The series as a kernel with FUSE built in would take it: make series,
# apply build/series with git am to a fresh copy of the base tree, build
# that kernel once with FUSE_FS=y and boot it to run the routing tests on
# the built-in code, and build its fs/fuse once more as a module
# (FUSE_FS=m).  Stamps keep a rerun with the same series and configs quick.
# usage: series-boot.sh RUNDIR TAPFILE
#   RUNDIR:  the guest run, for verdict.py
#   TAPFILE: the host-side cases, for verdict.py as tap:series-builtin:TAPFILE
. "$(dirname "$0")/lib.sh"

rundir=$(realpath -m "$1") tap=$(realpath -m "$2")
base=$(base_dir)
tree=$B/series-tree
ky=$B/kernel-series-y
km=$B/kernel-series-m
mapfile -t frags < <(guest_frags)
frags+=("$TOP/rig/series-builtin.config")

"$TOP/rig/base.sh"
"$TOP/rig/series.sh"
"$TOP/rig/selftests.sh"

n=0
mkdir -p "$(dirname "$tap")"
: > "$tap"
result() {	# RC DESCRIPTION [LOG]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2" >> "$tap"
	else
		echo "not ok $n $2" >> "$tap"
		[ -z "${3:-}" ] || sed 's/^/#   /' "$3" | tail -n 20 >> "$tap"
	fi
}
finish() {
	echo "1..$n" >> "$tap"
	log "series-boot: $(grep -c '^ok' "$tap") of $n host cases passed${1:+; $1}"
	exit 0
}

base_rel=$(make -s -C "$base" kernelversion)
wpaths=$(work_paths "$base")
patches=$(ls "$B"/series/[0-9]*.patch | grep -v '/0000-cover-letter.patch$')
npatches=$(echo "$patches" | wc -l)
# The files of the base that git am may change, by content
work_sum() {
	(cd "$base" && find $wpaths -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum
}

# --- a pristine copy of the base, and git am ---
# Hard links to the base, except for the files the series touches, which
# are real copies: git am writes only those.  The rest of the tree is not
# tracked; the kernel is built out of tree (O=), so nothing is written to
# it, and the base is checked to be the same afterwards.
tstamp="$(cat $patches | sha256sum | cut -c1-16) $(cat "$base/.rig-base-id" 2>/dev/null || echo "$base_rel")"
if [ "$(cat "$tree/.rig-stamp" 2>/dev/null)" != "$tstamp" ]; then
	log "applying build/series to a copy of the base in $tree"
	before=$(work_sum)
	rm -rf "$tree"
	cp -al "$base" "$tree"
	rm -f "$tree/.rig-base-id"
	for p in $wpaths; do
		rm -rf "${tree:?}/$p"
		cp -a "$base/$p" "$tree/$p"
	done
	g() { git -C "$tree" -c user.name=rig -c user.email=rig@localhost "$@"; }
	g init -q
	echo '/*' > "$tree/.git/info/exclude"	# untracked: all but the work paths
	g add -f $wpaths
	g commit -q -m "Linux $base_rel"
	rc=0
	g am -q $patches > "$B/series-am.log" 2>&1 || rc=$?
	result $rc "git am applies the $npatches patches of build/series to Linux $base_rel" "$B/series-am.log"
	[ $rc = 0 ] || finish "git am failed"
	rc=0
	[ "$(work_sum)" = "$before" ] || rc=1
	result $rc "the base tree is untouched by git am in its copy"
	# After a change of series every touched file must be rebuilt, even one
	# now back at the base's content (and mtime)
	(cd "$tree" && find $wpaths -type f -exec touch {} +)
	echo "$tstamp" > "$tree/.rig-stamp"
else
	result 0 "git am applies the $npatches patches of build/series to Linux $base_rel (unchanged, applied before)"
	result 0 "the base tree is untouched by git am in its copy (checked then)"
fi

# Configure $1 from the fragments (the last one that names an option wins)
# and check that every option survived olddefconfig.
configure() {
	local out=$1 frag line opt missing=0
	shift
	rm -rf "$out"
	mkdir -p "$out"
	make -s -C "$tree" O="$out" ARCH=x86_64 tinyconfig >/dev/null
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >/dev/null
	make -s -C "$tree" O="$out" ARCH=x86_64 olddefconfig >/dev/null
	declare -A want=()
	for frag in "$@"; do
		while IFS= read -r line; do
			case "$line" in CONFIG_*=*) want[${line%%=*}]=${line#*=} ;; esac
		done < "$frag"
	done
	for opt in "${!want[@]}"; do
		if [ "${want[$opt]}" = n ]; then
			grep -q "^$opt=" "$out/.config" && { log "config: $opt is set"; missing=1; }
		else
			grep -qx "$opt=${want[$opt]}" "$out/.config" || { log "config: $opt=${want[$opt]} did not stick"; missing=1; }
		fi
	done
	return $missing
}

# --- FUSE_FS=y: the whole kernel ---
cstamp="$(hash_files "${frags[@]}") $(cat "$base/.rig-base-id" 2>/dev/null || echo "$base_rel")"
kstamp="$tstamp $cstamp"
if [ -f "$ky/arch/x86/boot/bzImage" ] && [ "$(cat "$ky/.rig-stamp" 2>/dev/null)" = "$kstamp" ]; then
	result 0 "the series builds into a kernel with FUSE_FS=y (unchanged, built before)"
else
	if [ "$(cat "$ky/.rig-config-stamp" 2>/dev/null)" != "$cstamp" ]; then
		configure "$ky" "${frags[@]}" > "$B/series-y.log" 2>&1 ||
			{ result 1 "the FUSE_FS=y config keeps every option" "$B/series-y.log"; finish; }
		echo "$cstamp" > "$ky/.rig-config-stamp"
	fi
	log "building the series kernel with FUSE built in, in $ky (a few minutes)"
	rc=0
	# LOCALVERSION= : no "+" for the git repo that the tree is
	make -s -C "$tree" O="$ky" ARCH=x86_64 LOCALVERSION= -j"$JOBS" bzImage >> "$B/series-y.log" 2>&1 || rc=$?
	result $rc "the series builds into a kernel with FUSE_FS=y" "$B/series-y.log"
	[ $rc = 0 ] || finish "the FUSE_FS=y kernel did not build"
	echo "$kstamp" > "$ky/.rig-stamp"
fi

# --- FUSE_FS=m: the same config with FUSE as a module, fs/fuse only ---
mod=$km/fs/fuse/fuse.ko
if [ -f "$mod" ] && [ "$(cat "$km/.rig-stamp" 2>/dev/null)" = "$kstamp" ]; then
	result 0 "the series builds fuse.ko with FUSE_FS=m (unchanged, built before)"
else
	rc=0
	if [ "$(cat "$km/.rig-config-stamp" 2>/dev/null)" != "$cstamp" ]; then
		printf '%s\n' CONFIG_FUSE_FS=m > "$B/series-m.config"
		configure "$km" "${frags[@]}" "$B/series-m.config" > "$B/series-m.log" 2>&1 || rc=$?
		[ $rc != 0 ] || echo "$cstamp" > "$km/.rig-config-stamp"
	fi
	rm -f "$mod"
	# Only fs/fuse is built: with no vmlinux.o to resolve its symbols
	# against, modpost warns about them instead of failing (the module
	# builds of make check resolve the same code against a kernel).
	[ $rc != 0 ] || make -s -C "$tree" O="$km" ARCH=x86_64 LOCALVERSION= KBUILD_MODPOST_WARN=1 \
		-j"$JOBS" fs/fuse/fuse.ko >> "$B/series-m.log" 2>&1 || rc=$?
	result $rc "the series builds fuse.ko with FUSE_FS=m" "$B/series-m.log"
	[ $rc != 0 ] || echo "$kstamp" > "$km/.rig-stamp"
fi
# Nothing out-of-tree in the series: no version or base of its own
rc=0
[ -z "$(modinfo -F version "$mod" 2>&1)$(modinfo -F base "$mod" 2>&1)" ] || rc=1
result $rc "the in-tree fuse.ko has no out-of-tree version or base in modinfo"

# --- boot the FUSE_FS=y kernel ---
rm -rf "$rundir"
mkdir -p "$rundir/mods"
# initramfs.sh packs a module directory; this plan loads none
cp "$mod" "$rundir/mods/series-m.ko" 2>/dev/null || touch "$rundir/mods/series-m.ko"
printf '%s\n' "builtin" "run 600 fuse_bind_test" "run 1200 fuse_readers_test" > "$rundir/plan"
"$TOP/rig/initramfs.sh" "$rundir/initramfs.cpio.gz" "$rundir/plan" "$rundir/mods" "$B/tests"
"$TOP/rig/guest.sh" "$ky/arch/x86/boot/bzImage" "$rundir/initramfs.cpio.gz" "$rundir" \
	2node "${GUEST_TIMEOUT:-1500}"
finish "guest run in $rundir"
