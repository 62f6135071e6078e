#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make gofuse-patches: write the commits of build/gofuse/work (on top of
# its tag "base", Debian's go-fuse) back to gofuse/patches/ and series.
. "$(dirname "$0")/lib.sh"

export_series "$BROOT/gofuse/work" "$TOP/gofuse/patches"
