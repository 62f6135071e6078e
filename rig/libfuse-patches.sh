#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make libfuse-patches: write the commits of build/libfuse/work (on top of
# its tag "base", Debian's fuse3 source) back to libfuse/patches/ and series.
. "$(dirname "$0")/lib.sh"

export_series "$BROOT/libfuse/work" "$TOP/libfuse/patches"
