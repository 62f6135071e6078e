# SPDX-License-Identifier: GPL-2.0
# Common settings for the rig scripts.  Sourced, not run.
set -eEuo pipefail
# A script that set -e stops says where, so that a CI log shows it
trap '__rig_rc=$?; [[ $- != *e* ]] || echo "${0##*/}: stopped at line $LINENO (exit $__rig_rc)" >&2' ERR

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${JOBS:-$(nproc)}

# A compiler cache outside the clone (ccache, which rig/deps.sh installs):
# kernels, modules, the QEMU plugin, libfuse and fio compile from it on a
# machine that has built them before, in this clone or another (paths
# under the clone are hashed relative to it).  It is kept in
# RIG_CCACHE_DIR, ~/.cache/fuse-clone-queues/ccache unless told, at most
# 4 GiB; RIG_CCACHE=0 builds without it.
if [ "${RIG_CCACHE:-1}" != 0 ] && [ -d /usr/lib/ccache ] &&
   [[ ":$PATH:" != *:/usr/lib/ccache:* ]]; then
	export PATH=/usr/lib/ccache:$PATH
	export CCACHE_DIR=${RIG_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fuse-clone-queues/ccache}
	export CCACHE_BASEDIR=$TOP CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1 CCACHE_MAXSIZE=4G
fi

log() { printf '[rig] %s\n' "$*" >&2; }
die() { printf '[rig] error: %s\n' "$*" >&2; exit 1; }

# The bases the series exists for, and the one a script works on: BASE
# (7.3, mainline's, unless told; 6.12 and 6.1 are its backports).  Each
# has its series in patches/BASE and builds under base_build BASE:
# build/7.3, build/ for 6.12, build/6.1.  BROOT holds what no base owns
# (libfuse, fio, the apt source lists).
BASES="7.3 6.12 6.1"
BASE=${BASE:-7.3}
export BASE
BROOT=$TOP/build
base_build() {	# BASE
	case "$1" in
	6.12) echo "$BROOT" ;;
	6.1) echo "$BROOT/6.1" ;;
	7.3) echo "$BROOT/7.3" ;;
	*) die "BASE=$1: the series exists for Linux ${BASES// / and }" ;;
	esac
}
B=$(base_build "$BASE")
PATCHES=$TOP/patches/$BASE

# The base of a kernel release (6.12.117, 6.1.0-57-amd64), or nothing
base_of_release() {	# RELEASE
	local b
	for b in $BASES; do
		case "$1" in "$b"|"$b".*|"$b"-*) echo "$b"; return ;; esac
	done
}

# The release a kernel build tree builds modules for: UTS_RELEASE, what
# their vermagic says (Debian's headers say 6.1.0-NN-amd64 there, and the
# upstream 6.1.y in include/config/kernel.release)
kdir_release() {	# KDIR
	local r
	r=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$1/include/generated/utsrelease.h" 2>/dev/null)
	[ -n "$r" ] || r=$(cat "$1/include/config/kernel.release" 2>/dev/null)
	[ -n "$r" ] || r=$(make -s -C "$1" kernelrelease 2>/dev/null)
	echo "$r"
}

# The guest kernel's config fragments for BASE: rig/guest.config and
# what the base needs besides (rig/guest-BASE.config)
guest_frags() {
	echo "$TOP/rig/guest.config"
	[ ! -f "$TOP/rig/guest-$BASE.config" ] || echo "$TOP/rig/guest-$BASE.config"
}

# The version (6.12) of a kernel source tree
tree_version() {	# DIR
	echo "$(sed -n 's/^VERSION = //p' "$1/Makefile").$(sed -n 's/^PATCHLEVEL = //p' "$1/Makefile")"
}

# The base tree of BASE: KSRC if given and of that version, else base/
# (build/base, build/6.1/base) extracted from Debian's linux-source-BASE
# tarball (whatever BASE.y apt currently serves).
base_dir() {
	if [ -n "${KSRC:-}" ] && [ "$(tree_version "$KSRC")" = "$BASE" ]; then
		echo "$KSRC"
	else
		echo "$(base_build "$BASE")/base"
	fi
}

# Hash of files (names and contents), used for rebuild stamps.
hash_files() {
	cat "$@" 2>/dev/null | sha256sum | cut -c1-16
}

# The stamp of a userland series: PDIR's series and the patches it lists
series_stamp() {	# PDIR
	# shellcheck disable=SC2046
	(cd "$1" && hash_files series $(grep -v '^#' series))
}

# The userland series (libfuse/, gofuse/): DIR, a base as unpacked,
# becomes a git tree with tag "base" and PDIR/series applied on top (git
# am); .rig-applied and .rig-stamp say what was applied.
# usage: git_series DIR PDIR WHAT BASE-MESSAGE STAMP
git_series() {
	local dir=$1 pdir=$2 what=$3 msg=$4 stamp=$5 p
	git -C "$dir" init -q
	git -C "$dir" config user.name "fuse-clone-queues rig"
	git -C "$dir" config user.email "rig@localhost"
	echo "/.rig-*" >> "$dir/.git/info/exclude"
	git -C "$dir" add -A
	git -C "$dir" commit -q -m "$msg"
	git -C "$dir" tag -f base > /dev/null
	while IFS= read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		git -C "$dir" am -q "$pdir/$p" || die "$what patch $p does not apply"
	done < "$pdir/series"
	git -C "$dir" rev-parse HEAD > "$dir/.rig-applied"
	echo "$stamp" > "$dir/.rig-stamp"
}

# make libfuse-patches, make gofuse-patches: the commits of WORK on top of
# its tag "base" back to PDIR and its series.  usage: export_series WORK PDIR
export_series() {
	local work=$1 pdir=$2
	[ -d "$work/.git" ] || die "no ${work#"$TOP"/}: make its -work target first"
	git -C "$work" diff --quiet HEAD || die "${work#"$TOP"/} has uncommitted changes"
	mkdir -p "$pdir"
	rm -f "$pdir"/*.patch
	git -C "$work" format-patch -q --no-signature --zero-commit -o "$pdir" base..HEAD
	(cd "$pdir" && ls -- *.patch) > "$pdir/series"
	git -C "$work" rev-parse HEAD > "$work/.rig-applied"
	series_stamp "$pdir" > "$work/.rig-stamp"
	log "${pdir#"$TOP"/}/: $(wc -l < "$pdir/series") patches"
}

# Files of the base the git work tree holds: those the series touches,
# and what its kselftests build with (mainline's FUSE selftests, where the
# base has them: 7.3).
WORK_PATHS="fs/fuse include/uapi/linux/fuse.h Documentation/filesystems/index.rst
	Documentation/filesystems/fuse/index.rst MAINTAINERS
	tools/testing/selftests/Makefile tools/testing/selftests/lib.mk
	tools/testing/selftests/kselftest_harness.h tools/testing/selftests/kselftest.h
	tools/testing/selftests/kselftest tools/testing/selftests/filesystems/fuse"

# WORK_PATHS that the base tree DIR has
work_paths() {	# DIR
	local p
	for p in $WORK_PATHS; do
		[ ! -e "$1/$p" ] || echo "$p"
	done
}

# The series' source is mainline's (PRIMARY); the others are its
# backports.  Our own files, which the series adds, live whole in the repo
# as the primary series leaves them (rig/patches.sh writes them, rig/work.sh
# checks them); a backport adds the same files, its kernel ones derived by
# rig/backport.sed (the names 6.12 and 6.1 give the transport's structures).
# The selftests' Makefile is no own file: mainline has one, which the
# primary series extends and the backports add.
PRIMARY=7.3
OWN_PATHS="fs/fuse Documentation/filesystems tools/testing/selftests/filesystems/fuse"
OWN_GLUE="tools/testing/selftests/filesystems/fuse/Makefile"

# Our selftests (the raw servers of fuse_srv.c) that the tree DIR has, as
# make targets in OUT: mainline's others in that directory need libfuse 2
ksft_targets() {	# DIR OUT
	local t
	for t in fuse_dev_test fuse_bind_test fuse_readers_test fuse_uring_test; do
		[ ! -f "$1/tools/testing/selftests/filesystems/fuse/$t.c" ] || echo "$2/$t"
	done
}

# The files the series adds (our own files), as paths from the tree's top
own_files() {	# GIT_DIR_TREE
	git -C "$1" diff --name-only --diff-filter=A base -- $OWN_PATHS |
		grep -vxF "$OWN_GLUE" || true
}

# Our own file F as BASE's series must add it: the repo's copy, derived
# for a backport
own_expected() {	# F
	case "$BASE:$1" in
	"$PRIMARY":*|*:Documentation/*|*:tools/*) cat "$TOP/$1" ;;
	*) sed -E -f "$TOP/rig/backport.sed" "$TOP/$1" ;;
	esac
}

# The version of the patchset, as out-of-tree builds report it
oot_version() {
	sed -n 's/^#define FUSE_OOT_VERSION[[:space:]]*"\(.*\)"$/\1/p' "$TOP/dkms/fuse_version.c"
}

# An out-of-tree build of fs/fuse in DIR (a copy of the series' fs/fuse):
# the series' uapi header first, and dkms/fuse_version.c linked in to name
# the version and base.  After the include: fs/fuse/Makefile sets ccflags-y
# with "=".
oot_kbuild() {	# DIR BASE_RELEASE
	cp "$TOP/dkms/fuse_version.c" "$1/"
	cat > "$1/Kbuild" <<-EOF
	# SPDX-License-Identifier: GPL-2.0
	# fs/fuse of Linux $2 with per-device input queues, out of tree.
	NOSTDINC_FLAGS += -I\$(src)/include/uapi
	include \$(src)/Makefile
	fuse-y += fuse_version.o
	ccflags-y += -DFUSE_OOT_BASE='"$2"'
	EOF
}

# One TAP line of a host check, on stdout: "ok N WHAT", or "not ok N WHAT"
# with the first 20 lines of LOG as comments.  Counts in the caller's n,
# and sets its rc to 1 on a failure.
tap_result() {	# RC DESCRIPTION [LOG]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		[ -z "${3:-}" ] || sed -n '1,20s/^/#   /p' "$3"
		rc=1
	fi
}

# The modules of repeat R of a benchmark, taking turns going first (the
# first phase of a boot is cold): "stock ours", then "ours stock"
module_order() {	# R
	if [ $(($1 % 2)) = 0 ]; then echo ours stock; else echo stock ours; fi
}

# Boot a test guest: KERNEL with the modules of MODDIR and the programs of
# $B/tests, running PLAN-LINES (rig/guest-init.sh); its logs land in
# $B/runs/NAME, for verdict.py.
guest_plan() {	# NAME KERNEL MODDIR TOPOLOGY PLAN-LINES...
	local dir=$B/runs/$1 kernel=$2 mods=$3 topo=$4
	shift 4
	mkdir -p "$dir"
	printf '%s\n' "$@" > "$dir/plan"
	"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" "$mods" "$B/tests"
	"$TOP/rig/guest.sh" "$kernel" "$dir/initramfs.cpio.gz" "$dir" "$topo" \
		"${GUEST_TIMEOUT:-1500}"
}

# Plan lines that make check's guests share: the routing tests (bind,
# readers, fire) and the short stress run of each topology
ROUTING_TESTS=("run 600 fuse_bind_test" "run 1200 fuse_readers_test"
	       "run 600 fuse_fire_test")
STRESS_2NODE="run 300 fuse_stress_test -d 30 -r 10"
STRESS_1NODE="run 300 fuse_stress_test -d 20 -r 8 -s 2"
# The 2-node guests' common start: the device basics on stock and on
# ours, then ours through the routing tests, the fuzzer and the stress run
# (stock checks what it does instead of what the series fixes)
PLAN_2NODE=("module stock" "run 300 FUSE_TEST_STOCK=1 fuse_dev_test"
	    "module ours" "run 300 fuse_dev_test" "${ROUTING_TESTS[@]}"
	    "run 600 fuse_fuzz_test" "$STRESS_2NODE")

# The guest on Debian's own kernel binary (BASE=6.1: Debian 12's): the
# kernel (rig/debkernel.sh, whose settings this sources: DEB_KREL,
# DEB_VMLINUZ, DEB_KDIR, DEB_MODDIR), our fuse.ko, cuse.ko and
# virtiofs.ko built against Debian's headers as DKMS builds them, and
# Debian's own fuse.ko ("stock") and cuse.ko, and the virtio modules that
# virtiofs needs, from its image: in $B/modules-debian.
debian_guest_build() {
	local md=$B/modules-debian m f
	"$TOP/rig/debkernel.sh"
	. "$B/debian/env"
	"$TOP/rig/modules.sh" "$DEB_KDIR" "$md" ours
	cp "$DEB_MODDIR/kernel/fs/fuse/fuse.ko" "$md/stock.ko"
	cp "$DEB_MODDIR/kernel/fs/fuse/cuse.ko" "$md/dist-cuse.ko"
	for m in cuse virtiofs; do
		[ -f "$md/ours.src/$m.ko" ] || die "no $m.ko built for Debian's $DEB_KREL"
		cp "$md/ours.src/$m.ko" "$md/$m.ko"
	done
	for m in virtio virtio_ring; do
		f=$DEB_MODDIR/kernel/drivers/virtio/$m.ko
		[ ! -f "$f" ] || cp "$f" "$md/"
	done
}

# make bench and its fio part: the benchmark guest's kernel (no debug
# options) and stock and our fuse.ko for it
bench_build() {
	"$TOP/rig/base.sh"
	"$TOP/rig/work.sh"
	"$TOP/rig/kernel.sh" bench "$TOP/rig/bench.config"
	"$TOP/rig/modules.sh" "$B/kernel-bench" "$B/modules-bench" stock ours
}

# The qemu-plugin.h of the QEMU that runs the guests (Debian's qemu source
# package, fetched once into build/qemu-src), for the TCG plugins of
# make pathprof and make bench-lines; prints its directory
qemu_plugin_include() {
	local qv src=$BROOT/qemu-src hdr dsc
	hdr=$(find "$src" -path '*/include/qemu/qemu-plugin.h' 2>/dev/null | head -n1 || true)
	if [ -z "$hdr" ]; then
		# the source's version: a binary-only rebuild adds +bN
		qv=$(dpkg-query -W -f '${Version}' qemu-system-x86)
		qv=${qv%+b[0-9]*}
		dsc=$("$TOP/rig/debsrc.sh" "qemu=$qv" "$src")
		tar -xJf "$(dirname "$dsc")"/qemu_*.orig.tar.xz -C "$src" \
			--wildcards '*/include/qemu/qemu-plugin.h'
		hdr=$(find "$src" -path '*/include/qemu/qemu-plugin.h' | head -n1)
	fi
	[ -n "$hdr" ] || die "no qemu-plugin.h in $src"
	dirname "$hdr"
}
