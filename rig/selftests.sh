#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the static selftest binaries into build/tests, against the series'
# uapi fuse.h and the base tree's kselftest_harness.h; with them the libfuse
# daemon fuse_pt (dynamic), the LD_PRELOAD library fuse_clone_bind.so, and
# the list of host programs the guest needs for fuse_libfuse_test.sh (see
# rig/initramfs.sh).
. "$(dirname "$0")/lib.sh"

mkdir -p "$B/tests"
make -s -C "$SELFTEST_DIR" UAPI="$B/work/include/uapi" \
	SELFTESTS="$(base_dir)/tools/testing/selftests" OUTPUT="$B/tests"
make -s -C "$TOP/tools/fuse/clone-bind" UAPI="$B/work/include/uapi" \
	OUTPUT="$B/tests"
printf '%s\n' /usr/bin/dbench /usr/share/dbench/client.txt /usr/bin/fs_mark \
	> "$B/tests/initramfs-extra.list"
