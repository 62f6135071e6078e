#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The out-of-tree install, tested without touching the system: DKMS adds,
# builds and installs our fuse.ko for the guest kernel in trees under
# build/dkms-test (not /var/lib/dkms, /usr/src or /lib/modules), the module
# is checked (version, base, precedence over the kernel's own fuse.ko) and
# then loaded in a guest that runs the routing tests on it; DKMS and make
# install build the 6.1 sources for Debian 12's own kernel, against its
# headers (rig/debkernel.sh); and make install is run against stand-ins
# for /proc/modules and /proc/mounts to see it refuse to replace a fuse.ko
# that FUSE mounts still use.
# usage: dkms-check.sh RUNDIR TAPFILE
#   RUNDIR:  the guest run, for verdict.py
#   TAPFILE: the host-side cases, for verdict.py as tap:dkms:TAPFILE
. "$(dirname "$0")/lib.sh"

rundir=$(realpath -m "$1") tap=$(realpath -m "$2")
kdir=$B/kernel-debug
t=$B/dkms-test
name=fuse-clone-queues

"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
"$TOP/rig/kernel.sh" debug
"$TOP/rig/selftests.sh"
# stock.ko stands for the kernel's own fuse.ko
[ -f "$B/modules-debug/stock.ko" ] ||
	"$TOP/rig/modules.sh" "$kdir" "$B/modules-debug" stock ours

n=0
mkdir -p "$(dirname "$tap")"
: > "$tap"
result() {	# RC DESCRIPTION [DETAIL FILE]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2" >> "$tap"
	else
		echo "not ok $n $2" >> "$tap"
		[ -z "${3:-}" ] || sed 's/^/#   /' "$3" | tail -n 20 >> "$tap"
	fi
}
check() {	# DESCRIPTION COMMAND...: one case, its output kept for a failure
	local what=$1 rc=0
	shift
	"$@" > "$t/case.log" 2>&1 || rc=$?
	result $rc "$what" "$t/case.log"
}

rel=$(kdir_release "$kdir")
base_rel=$(make -s -C "$(base_dir)" kernelversion)
# Debian 12's kernel and the 6.1 base
BASE=6.1 "$TOP/rig/base.sh"
BASE=6.1 "$TOP/rig/debkernel.sh"
. "$(base_build 6.1)/debian/env"
base61_rel=$(make -s -C "$(BASE=6.1 base_dir)" kernelversion)
ver=$(oot_version)
rm -rf "$t"
mkdir -p "$t/tree" "$t/root/lib/modules/$rel/kernel/fs/fuse" "$t/mods"
sys_before=$(ls -la /var/lib/dkms /usr/src 2>&1 | sha256sum)

# --- DKMS, in trees of our own ---
# No module signing here: no key is made in /var/lib/dkms
export sign_file=/nonexistent
dk=(--sourcetree "$B/dkms" --dkmstree "$t/tree" --installtree "$t/root/lib/modules")
check "dkms: make dkms-source writes $name-$ver with dkms.conf and a Kbuild per base" \
	bash -c '"$1/rig/dkms.sh" source && grep -qx "PACKAGE_VERSION=\"$2\"" "$3/dkms.conf" &&
		grep -q "FUSE_OOT_BASE=.\"$4\"" "$3/6.12/Kbuild" &&
		grep -q "FUSE_OOT_BASE=.\"$5\"" "$3/6.1/Kbuild"' \
	- "$TOP" "$ver" "$B/dkms/$name-$ver" "$base_rel" "$base61_rel"
if ! command -v dkms >/dev/null; then
	result 1 "dkms: installed (apt-get install dkms)"
else
	check "dkms: add" dkms add -m "$name" -v "$ver" -k "$rel" "${dk[@]}"
	check "dkms: build for $rel" dkms build -m "$name" -v "$ver" -k "$rel" \
		--kernelsourcedir "$kdir" -j "$JOBS" "${dk[@]}"
	ko=$t/tree/$name/$ver/$rel/x86_64/module/fuse.ko
	[ -f "$ko" ] && cp "$ko" "$t/mods/dkms.ko"
	check "dkms: modinfo version is $ver" test "$(modinfo -F version "$ko" 2>&1)" = "$ver"
	check "dkms: modinfo base is $base_rel" test "$(modinfo -F base "$ko" 2>&1)" = "$base_rel"
	# The kernel's own fuse.ko where a distribution has it
	cp "$B/modules-debug/stock.ko" "$t/root/lib/modules/$rel/kernel/fs/fuse/fuse.ko"
	check "dkms: install puts fuse.ko in updates/dkms" bash -c \
		'dkms install -m "$1" -v "$2" -k "$3" --kernelsourcedir "$4" --no-depmod "${@:6}" &&
		 test -f "$5/lib/modules/$3/updates/dkms/fuse.ko"' \
		- "$name" "$ver" "$rel" "$kdir" "$t/root" "${dk[@]}"
	check "dkms: modprobe picks it over the kernel's fuse.ko" bash -c \
		'depmod -b "$1" "$2" 2>/dev/null &&
		 modprobe -d "$1" -S "$2" --show-depends fuse | tee /dev/stderr |
			grep -q "/updates/dkms/fuse.ko"' - "$t/root" "$rel"
	# BUILD_EXCLUSIVE: exit 77, "not for this kernel", which
	# the kernel postinst hooks take as a skip
	mkdir -p "$t/fuse-y/include"
	printf '%s\n' CONFIG_MODULES=y CONFIG_FUSE_FS=y > "$t/fuse-y/.config"
	rc=0
	dkms build -m "$name" -v "$ver" -k 6.12.999 --kernelsourcedir "$t/fuse-y" \
		"${dk[@]}" > "$t/case.log" 2>&1 || rc=$?
	result $((rc != 77)) "dkms: skips a 6.12 kernel with FUSE built in (rc $rc)" "$t/case.log"
	rc=0
	dkms build -m "$name" -v "$ver" -k 7.3.999 --kernelsourcedir "$t/fuse-y" \
		"${dk[@]}" > "$t/case.log" 2>&1 || rc=$?
	result $((rc != 77)) "dkms: skips a 7.3 kernel with FUSE built in, as Debian builds it (rc $rc)" "$t/case.log"
	rc=0
	dkms build -m "$name" -v "$ver" -k 6.10.0 --kernelsourcedir "$kdir" \
		"${dk[@]}" > "$t/case.log" 2>&1 || rc=$?
	result $((rc != 77)) "dkms: skips a kernel that is neither 6.12 nor 6.1 (6.10.0, rc $rc)" "$t/case.log"
	# Debian 12: the 6.1 sources, against Debian's own headers
	check "dkms: build for Debian's $DEB_KREL, against its headers" \
		dkms build -m "$name" -v "$ver" -k "$DEB_KREL" \
		--kernelsourcedir "$DEB_KDIR" -j "$JOBS" "${dk[@]}"
	dko=$t/tree/$name/$ver/$DEB_KREL/x86_64/module
	check "dkms: fuse.ko, cuse.ko and virtiofs.ko for $DEB_KREL, base $base61_rel" bash -c \
		'for m in fuse cuse virtiofs; do test -f "$1/$m.ko" || exit 1; done
		 modinfo -F vermagic "$1/fuse.ko" | grep -q "^$2 " &&
		 test "$(modinfo -F base "$1/fuse.ko")" = "$3" &&
		 test "$(modinfo -F version "$1/fuse.ko")" = "$4"' \
		- "$dko" "$DEB_KREL" "$base61_rel" "$ver"
fi
check "dkms: /var/lib/dkms and /usr/src untouched" \
	test "$(ls -la /var/lib/dkms /usr/src 2>&1 | sha256sum)" = "$sys_before"

# --- make install, against stand-ins for the running system ---
# RUNNING_RELEASE makes the guest kernel "the running one"; DRY_RUN=1
# keeps even a refusal that fails from changing anything.
fake=$t/fake
mkdir -p "$fake"
printf 'fuse 200704 3 - Live 0x0000000000000000\n' > "$fake/modules.mounted"
printf 'fuse 200704 2 cuse, Live 0x0000000000000000\ncuse 20480 0 - Live 0x0000000000000000\n' > "$fake/modules.cuse"
printf 'fuse 200704 2 - Live 0x0000000000000000\n' > "$fake/modules.held"
printf 'fuse 200704 1 - Live 0x0000000000000000\n' > "$fake/modules.idle"
printf '%s\n' 'proc /proc proc rw 0 0' \
	'fusectl /sys/fs/fuse/connections fusectl rw 0 0' > "$fake/mounts.idle"
cp "$fake/mounts.idle" "$fake/mounts.fuse"
echo 'sshfs#me@host: /home/me/remote fuse.sshfs rw,nosuid,nodev 0 0' >> "$fake/mounts.fuse"
inst() {	# MODULES MOUNTS ACTION: make install's script, as the tests run it
	env KDIR="$kdir" RUNNING_RELEASE="$rel" DRY_RUN=1 INSTALL_MOD_PATH= \
		PROC_MODULES="$fake/modules.$1" PROC_MOUNTS="$fake/mounts.$2" \
		"$TOP/rig/install.sh" "$3"
}
refused() {	# PATTERN MODULES MOUNTS: refused, in one line, before any change
	local out rc=0
	out=$(inst "$2" "$3" install 2>&1) || rc=$?
	echo "$out"
	[ $rc != 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] &&
		echo "$out" | grep -q "$1" && ! echo "$out" | grep -q 'would run'
}
reloads() {	# nothing mounted: install, then unload and load around fusectl
	local out
	out=$(inst idle idle install 2>&1)
	echo "$out"
	[ "$(echo "$out" | sed -n 's/^would run: \([^ ]*\).*/\1/p' | tr '\n' ' ')" = \
		"mkdir install depmod umount rmmod modprobe mount " ]
}
builtin_refused() {
	local out rc=0
	out=$(KDIR="$t/fuse-y-tree" INSTALL_MOD_PATH="$t/stage" "$TOP/rig/install.sh" install 2>&1) || rc=$?
	echo "$out"
	[ $rc != 0 ] && ! [ -e "$t/stage" ] && echo "$out" | grep -q "built in"
}
staged() {	# a real install under INSTALL_MOD_PATH, and what modprobe finds
	KDIR="$kdir" INSTALL_MOD_PATH="$t/stage" "$TOP/rig/install.sh" install &&
	mkdir -p "$t/stage/lib/modules/$rel/kernel/fs/fuse" &&
	cp "$t/root/lib/modules/$rel/kernel/fs/fuse/fuse.ko" "$t/stage/lib/modules/$rel/kernel/fs/fuse/" &&
	depmod -b "$t/stage" "$rel" 2>/dev/null &&
	modprobe -d "$t/stage" -S "$rel" --show-depends fuse | tee /dev/stderr |
		grep -q "/updates/fuse-clone-queues/fuse.ko"
}
unstaged() {
	KDIR="$kdir" INSTALL_MOD_PATH="$t/stage" "$TOP/rig/install.sh" uninstall &&
	! [ -e "$t/stage/lib/modules/$rel/updates/fuse-clone-queues" ]
}
check "make install: refuses while FUSE is mounted" \
	refused 'FUSE is mounted on /home/me/remote' mounted fuse
check "make install: refuses while a module uses fuse.ko" \
	refused 'used by the modules cuse' cuse idle
check "make install: refuses while /dev/fuse is open" refused 'held 1 more' held idle
mkdir -p "$t/fuse-y-tree/include/config"
cp "$kdir/Makefile" "$t/fuse-y-tree/"
echo 6.12.999 > "$t/fuse-y-tree/include/config/kernel.release"
printf '%s\n' CONFIG_MODULES=y CONFIG_FUSE_FS=y > "$t/fuse-y-tree/.config"
check "make install: refuses a kernel with FUSE built in" builtin_refused
check "make install: with no FUSE mount, installs, then reloads fuse around fusectl" reloads
rm -rf "$t/stage"
check "make install: INSTALL_MOD_PATH install, found before the kernel's fuse.ko" staged
check "make install: modinfo base of the installed fuse.ko is $base_rel" \
	test "$(modinfo -F base "$t/stage/lib/modules/$rel/updates/fuse-clone-queues/fuse.ko" 2>&1)" = "$base_rel"
check "make uninstall: removes it" unstaged
debian_staged() {	# make install for Debian's kernel, into a staging root
	local d=$t/stage-deb/lib/modules/$DEB_KREL/updates/fuse-clone-queues
	KDIR="$DEB_KDIR" INSTALL_MOD_PATH="$t/stage-deb" "$TOP/rig/install.sh" install &&
	for m in fuse cuse virtiofs; do test -f "$d/$m.ko" || return 1; done &&
	test "$(modinfo -F base "$d/fuse.ko")" = "$base61_rel"
}
check "make install: for Debian's $DEB_KREL (its headers), the 6.1 sources with cuse and virtiofs" \
	debian_staged
other_refused() {	# a kernel of neither base
	local out rc=0
	out=$(KDIR="$t/other-tree" INSTALL_MOD_PATH="$t/stage-other" "$TOP/rig/install.sh" install 2>&1) || rc=$?
	echo "$out"
	[ $rc != 0 ] && ! [ -e "$t/stage-other" ] &&
		echo "$out" | grep -q "exists for Linux 7.3.y and 6.12.y and 6.1.y only"
}
mkdir -p "$t/other-tree/include/config"
cp "$kdir/Makefile" "$t/other-tree/"
echo 6.10.3 > "$t/other-tree/include/config/kernel.release"
printf '%s\n' CONFIG_MODULES=y CONFIG_FUSE_FS=m > "$t/other-tree/.config"
check "make install: refuses a kernel of neither base (6.10.3), saying why" other_refused

# --- the DKMS-built module in the guest ---
if [ -f "$t/mods/dkms.ko" ]; then
	rm -rf "$rundir"
	mkdir -p "$rundir"
	printf '%s\n' "module dkms" "sh 60 echo VERSION \$(cat /sys/module/fuse/version)" \
		"run 600 fuse_bind_test" > "$rundir/plan"
	"$TOP/rig/initramfs.sh" "$rundir/initramfs.cpio.gz" "$rundir/plan" "$t/mods" "$B/tests"
	"$TOP/rig/guest.sh" "$kdir/arch/x86/boot/bzImage" "$rundir/initramfs.cpio.gz" \
		"$rundir" 2node "${GUEST_TIMEOUT:-1500}"
	check "dkms: the guest's /sys/module/fuse/version is $ver" \
		grep -qx "VERSION $ver" <(tr -d '\r' < "$rundir/results.log")
else
	result 1 "dkms: a fuse.ko to load in the guest"
fi
echo "1..$n" >> "$tap"
log "dkms-check: $(grep -c '^ok' "$tap") of $n host cases passed; guest run in $rundir"
