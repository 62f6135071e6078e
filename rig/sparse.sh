#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sparse (C=2) and W=1 over our fuse.ko build: lock-context, __rcu and
# address-space annotations must hold.  Prints one TAP line.  A base whose
# kbuild refuses the installed sparse (7.3 wants one that knows
# __typeof_unqual__; bookworm's 0.6.4 does not) is built with W=1 alone,
# and the line says so: the backports' sparse run checks the same code.
# usage: sparse.sh KDIR
. "$(dirname "$0")/lib.sh"

what="sparse and W=1" extra="C=2 W=1"
valid=$(base_dir)/scripts/checker-valid.sh
if [ -x "$valid" ] && [ "$("$valid" sparse -m64 2>/dev/null)" != 1 ]; then
	what="W=1 (sparse $(sparse --version 2>/dev/null | cut -d' ' -f1) too old for Linux $BASE)"
	extra="W=1"
fi
mkdir -p "$B/sparse"
if KBUILD_EXTRA="$extra" \
	"$TOP/rig/modules.sh" "$1" "$B/sparse" ours > "$B/sparse/sparse.log" 2>&1 &&
   ! grep -qE 'warning:|error:' "$B/sparse/sparse.log"; then
	echo "ok 1 $what clean on fs/fuse (ours, Linux $BASE)"
else
	{ grep -m20 -iE 'warning:|error' "$B/sparse/sparse.log" || tail -n 20 "$B/sparse/sparse.log"; } |
		sed 's/^/# /'
	echo "not ok 1 $what clean on fs/fuse (ours, Linux $BASE)"
fi
echo "1..1"
