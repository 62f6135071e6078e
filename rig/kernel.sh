#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build a guest kernel from the untouched base: tinyconfig plus the guest's
# fragments for the base (rig/guest.config, and rig/guest-BASE.config where
# the base has one) and the flavor's own, each followed by its BASE form
# (rig/bench-7.3.config after rig/bench.config) where there is one.
# usage: kernel.sh FLAVOR [FRAGMENT...]   (output in build/kernel-FLAVOR, or
#        build/6.1/kernel-FLAVOR for BASE=6.1)
. "$(dirname "$0")/lib.sh"

flavor=$1; shift
mapfile -t frags < <(guest_frags)
for f; do
	frags+=("$f")
	[ ! -f "${f%.config}-$BASE.config" ] || frags+=("${f%.config}-$BASE.config")
done
set -- "${frags[@]}"
base=$(base_dir)
out=$B/kernel-$flavor
stamp="$(hash_files "$@") $(cat "$base/.rig-base-id" 2>/dev/null || make -s -C "$base" kernelversion)"
if [ -f "$out/arch/x86/boot/bzImage" ] && [ "$(cat "$out/.rig-stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
log "building the $flavor guest kernel in $out (a few minutes)"
rm -rf "$out"
mkdir -p "$out"
make -s -C "$base" O="$out" ARCH=x86_64 tinyconfig >/dev/null
"$base/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >/dev/null
make -s -C "$base" O="$out" ARCH=x86_64 olddefconfig >/dev/null
# Every option the fragments ask for (the last fragment that names it
# wins) must have survived olddefconfig.
missing=0
declare -A want=()
for frag in "$@"; do
	while IFS= read -r line; do
		case "$line" in CONFIG_*=*) want[${line%%=*}]=${line#*=} ;; esac
	done < "$frag"
done
for opt in "${!want[@]}"; do
	if [ "${want[$opt]}" = n ]; then
		if grep -q "^$opt=" "$out/.config"; then log "config: $opt is set"; missing=1; fi
	else
		grep -qx "$opt=${want[$opt]}" "$out/.config" || { log "config: $opt=${want[$opt]} did not stick"; missing=1; }
	fi
done
[ $missing = 0 ] || die "the guest config lost options (see above)"
make -s -C "$base" O="$out" ARCH=x86_64 -j"$JOBS" bzImage modules
echo "$stamp" > "$out/.rig-stamp"
log "kernel $flavor: $(cat "$out/include/config/kernel.release")"
