#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest's test programs into build/tests, static for the busybox
# guest: the series' kselftests, with lib.mk in build/work (the series' uapi
# fuse.h as the kernel headers), and the rig's own programs (rig/tests: the
# demo, the benchmark, the stress test, and fuse_pt, a libfuse daemon
# linked with our libfuse, which rig/libfuse.sh builds from Debian's libfuse
# with and without libfuse/patches); and the list of host programs the
# guest needs for fuse_libfuse_test.sh (see rig/initramfs.sh): libfuse's
# example daemons of both builds, dbench and fs_mark.
# build/tests/libfuse.conf tells the guest script where the example
# daemons are.
. "$(dirname "$0")/lib.sh"

"$TOP/rig/libfuse.sh"
LF=$BROOT/libfuse
# The example daemons: Debian 12's libfuse 3.14, or on 7.3 with
# RIG_LIBFUSE=3.18 (make stress FLAVOR=libfuse) sid's 3.18.3, which
# speaks io-uring too (rig/libfuse318.sh)
LFD=$LF
if [ "$BASE" = 7.3 ] && [ "${RIG_LIBFUSE:-}" = 3.18 ]; then
	"$TOP/rig/libfuse318.sh"
	LFD=$BROOT/libfuse318
fi

mkdir -p "$B/tests"
rm -f "$B/tests/fuse_clone_bind.so"	# the retired preload library
"$TOP/rig/work.sh"
make -s -C "$B/work/tools/testing/selftests/filesystems/fuse" OUTPUT="$B/tests" \
	KHDR_INCLUDES="-isystem $B/work/include/uapi" USERLDFLAGS=-static \
	$(ksft_targets "$B/work" "$B/tests")
make -s -C "$TOP/rig/tests" UAPI="$B/work/include/uapi" OUTPUT="$B/tests" \
	SELFTEST="$B/work/tools/testing/selftests/filesystems/fuse" \
	FUSE3_CFLAGS="-I$LF/work/include -I$LF/ours" \
	FUSE3_LIBS="$LF/ours/lib/libfuse3.a"
{
	printf 'LF_OURS=%s\nLF_STOCK=%s\n' "$LFD/ours" "$LFD/stock"
	[ -x "$BROOT/fio/fio" ] && printf 'FIO=%s\n' "$BROOT/fio/fio"
	true
} > "$B/tests/libfuse.conf"
{
	printf '%s\n' /usr/bin/dbench /usr/share/dbench/client.txt /usr/bin/fs_mark
	for d in ours stock; do
		printf '%s\n' "$LFD/$d/example/passthrough_ll" "$LFD/$d/example/passthrough_hp"
	done
	# make bench: fio (rig/fio.sh), where it was built
	[ -x "$BROOT/fio/fio" ] && echo "$BROOT/fio/fio"
	true
} > "$B/tests/initramfs-extra.list"
