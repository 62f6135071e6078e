#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make checkpatch: scripts/checkpatch.pl --strict of the base tree on the
# series and on our own kernel files.
. "$(dirname "$0")/lib.sh"

cp=$(base_dir)/scripts/checkpatch.pl
opts="--strict --no-tree --quiet --show-types --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG"
rc=0
for p in $(cat "$PATCHES/series"); do
	"$cp" $opts "$PATCHES/$p" || rc=1
done
for f in "$TOP"/fs/fuse/*.[ch]; do
	"$cp" $opts --file "$f" || rc=1
done
[ $rc = 0 ] && log "checkpatch --strict: clean"
exit $rc
