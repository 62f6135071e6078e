#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the static selftest binaries into build/tests, against the series'
# uapi fuse.h and the base tree's kselftest_harness.h.
. "$(dirname "$0")/lib.sh"

mkdir -p "$B/tests"
make -s -C "$SELFTEST_DIR" UAPI="$B/work/include/uapi" \
	SELFTESTS="$(base_dir)/tools/testing/selftests" OUTPUT="$B/tests"
