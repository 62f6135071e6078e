#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the static selftest binaries into build/tests, against the series'
# uapi fuse.h and the base tree's kselftest_harness.h; with them the libfuse
# daemon fuse_pt, linked with our libfuse (rig/libfuse.sh builds Debian's
# libfuse with and without libfuse/patches), and the list of host programs
# the guest needs for fuse_libfuse_test.sh (see rig/initramfs.sh): libfuse's
# example daemons of both builds, dbench and fs_mark.  build/tests/libfuse.conf
# tells the guest script where the example daemons are.
. "$(dirname "$0")/lib.sh"

"$TOP/rig/libfuse.sh"
LF=$B/libfuse

mkdir -p "$B/tests"
rm -f "$B/tests/fuse_clone_bind.so"	# the retired preload library
make -s -C "$SELFTEST_DIR" UAPI="$B/work/include/uapi" \
	SELFTESTS="$(base_dir)/tools/testing/selftests" OUTPUT="$B/tests" \
	FUSE3_CFLAGS="-I$LF/work/include -I$LF/ours" \
	FUSE3_LIBS="$LF/ours/lib/libfuse3.a"
{
	printf 'LF_OURS=%s\nLF_STOCK=%s\n' "$LF/ours" "$LF/stock"
	[ -x "$B/fio/fio" ] && printf 'FIO=%s\n' "$B/fio/fio"
	true
} > "$B/tests/libfuse.conf"
{
	printf '%s\n' /usr/bin/dbench /usr/share/dbench/client.txt /usr/bin/fs_mark
	for d in ours stock; do
		printf '%s\n' "$LF/$d/example/passthrough_ll" "$LF/$d/example/passthrough_hp"
	done
	# make bench: fio (rig/fio.sh), where it was built
	[ -x "$B/fio/fio" ] && echo "$B/fio/fio"
	true
} > "$B/tests/initramfs-extra.list"
