# SPDX-License-Identifier: GPL-2.0
# Common settings for the rig scripts.  Sourced, not run.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${B:-$TOP/build}
JOBS=${JOBS:-$(nproc)}

log() { printf '[rig] %s\n' "$*" >&2; }
die() { printf '[rig] error: %s\n' "$*" >&2; exit 1; }

# The base tree: KSRC if given, else build/base extracted from Debian's
# linux-source-6.12 tarball (whatever 6.12.y apt currently serves).
base_dir() {
	if [ -n "${KSRC:-}" ]; then
		echo "$KSRC"
	else
		echo "$B/base"
	fi
}

# Hash of files (names and contents), used for rebuild stamps.
hash_files() {
	cat "$@" 2>/dev/null | sha256sum | cut -c1-16
}

# Files of the base the git work tree holds: those the series touches,
# and what its kselftests build with.
WORK_PATHS="fs/fuse include/uapi/linux/fuse.h Documentation/filesystems/index.rst MAINTAINERS
	tools/testing/selftests/Makefile tools/testing/selftests/lib.mk
	tools/testing/selftests/kselftest_harness.h tools/testing/selftests/kselftest.h
	tools/testing/selftests/kselftest"

# Our own files, which the series adds: the repo holds them whole, as the
# series leaves them (rig/patches.sh writes them, rig/work.sh checks them).
OWN_PATHS="fs/fuse Documentation/filesystems tools/testing/selftests/filesystems/fuse"

# The files the series adds (our own files), as paths from the tree's top
own_files() {	# GIT_DIR_TREE
	git -C "$1" diff --name-only --diff-filter=A base HEAD -- $OWN_PATHS
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

# make bench and its fio part: the benchmark guest's kernel (no debug
# options) and stock and our fuse.ko for it
bench_build() {
	"$TOP/rig/base.sh"
	"$TOP/rig/work.sh"
	"$TOP/rig/kernel.sh" bench "$TOP/rig/guest.config" "$TOP/rig/bench.config"
	"$TOP/rig/modules.sh" "$B/kernel-bench" "$B/modules-bench" stock ours
}
