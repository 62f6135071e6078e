#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sparse (C=2) and W=1 over our fuse.ko build: lock-context, __rcu and
# address-space annotations must hold.  Prints one TAP line.
# usage: sparse.sh KDIR
. "$(dirname "$0")/lib.sh"

mkdir -p "$B/sparse"
if KBUILD_EXTRA="C=2 W=1" \
	"$TOP/rig/modules.sh" "$1" "$B/sparse" ours > "$B/sparse/sparse.log" 2>&1 &&
   ! grep -qE 'warning:|error:' "$B/sparse/sparse.log"; then
	echo "ok 1 sparse and W=1 clean on fs/fuse (ours)"
else
	{ grep -m20 -iE 'warning:|error' "$B/sparse/sparse.log" || tail -n 20 "$B/sparse/sparse.log"; } |
		sed 's/^/# /'
	echo "not ok 1 sparse and W=1 clean on fs/fuse (ours)"
fi
echo "1..1"
