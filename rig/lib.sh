# SPDX-License-Identifier: GPL-2.0
# Common settings for the rig scripts.  Sourced, not run.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${B:-$TOP/build}
JOBS=${JOBS:-$(nproc)}
SELFTEST_DIR=$TOP/tools/testing/selftests/filesystems/fuse

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

# Files the patch series touches: the subset kept in the git work tree.
WORK_PATHS="fs/fuse include/uapi/linux/fuse.h Documentation/filesystems/index.rst MAINTAINERS"

# make bench and its fio part: the benchmark guest's kernel (no debug
# options) and stock and our fuse.ko for it
bench_build() {
	"$TOP/rig/base.sh"
	"$TOP/rig/work.sh"
	"$TOP/rig/kernel.sh" bench "$SELFTEST_DIR/config" "$TOP/rig/bench.config"
	"$TOP/rig/modules.sh" "$B/kernel-bench" "$B/modules-bench" stock ours
}
