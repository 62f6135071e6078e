#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fio for make bench, from Debian's own source package (rig/debsrc.sh),
# built statically (the guest has no shared libraries of its own) with
# the engines that need other libraries left out: build/fio/fio.
. "$(dirname "$0")/lib.sh"

out=$BROOT/fio
dsc=$("$TOP/rig/debsrc.sh" fio "$out/pkg")
if [ -x "$out/fio" ] && [ "$(cat "$out/.rig-dsc" 2>/dev/null)" = "${dsc##*/}" ]; then
	exit 0
fi
log "building fio from ${dsc##*/} (static)"
rm -rf "$out/src" "$out/fio"
dpkg-source -q -x "$dsc" "$out/src" > "$out/build.log" 2>&1 ||
	{ cat "$out/build.log" >&2; die "dpkg-source -x ${dsc##*/} failed"; }
(cd "$out/src" &&
 ./configure --build-static --disable-native --disable-numa --disable-rdma \
	--disable-rados --disable-rbd --disable-http --disable-gfapi \
	--disable-pmem --disable-xnvme --disable-libzbc --disable-tcmalloc \
	--disable-dfs --disable-libnfs &&
 make -j"$JOBS" fio) >> "$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log" >&2; die "building fio failed (see $out/build.log)"; }
grep -q '^Linux AIO support  *yes' "$out/build.log" ||
	die "fio was built without libaio (apt-get install libaio-dev)"
cp "$out/src/fio" "$out/fio"
echo "${dsc##*/}" > "$out/.rig-dsc"
log "built $out/fio ($("$out/fio" --version))"
