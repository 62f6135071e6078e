#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# cuse.ko and virtiofs.ko beside our fuse.ko on a distribution kernel (the
# guest on Debian's own kernel binary): they use fuse.ko's exports, whose
# CRCs the series changes under MODVERSIONS, so the distribution's own
# cuse.ko must be refused and ours, built with our fuse.ko, must load and
# work (cuse: /dev/cuse; virtiofs: registers its file system type).  Run
# with our fuse.ko loaded; leaves only fuse.ko loaded.  TAP.
#   /lib/fuse/cuse.ko, virtiofs.ko  ours
#   /lib/fuse/dist-cuse.ko          the distribution's
#   /lib/fuse/virtio.ko, virtio_ring.ko  the distribution's, if modules
M=/lib/fuse
n=0
fails=0
ok() {	# RC DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fails=$((fails + 1))
	fi
}
loaded() { grep -q "^$1 " /proc/modules; }

echo "TAP version 13"
echo "1..6"
grep -q '^fuse ' /proc/modules
ok $? "our fuse.ko is loaded"

dmesg -c > /dev/null
rc=0
insmod $M/dist-cuse.ko 2> /dev/null && rc=1
loaded cuse && { rmmod cuse; rc=1; }
dmesg | grep -q 'cuse: disagrees about version of symbol' || rc=1
dmesg | sed 's/^/# /' | head -n 3
ok $rc "the distribution's cuse.ko is refused against our fuse.ko (symbol versions)"

rc=0
insmod $M/cuse.ko || rc=1
[ -c /dev/cuse ] || rc=1
ok $rc "our cuse.ko loads and makes /dev/cuse"
rmmod cuse
ok $? "our cuse.ko unloads"

rc=0
for m in virtio_ring virtio; do
	if [ -f $M/$m.ko ] && ! loaded $m; then
		insmod $M/$m.ko || rc=1
	fi
done
insmod $M/virtiofs.ko || rc=1
grep -qw virtiofs /proc/filesystems || rc=1
ok $rc "our virtiofs.ko loads and registers virtiofs"
rc=0
rmmod virtiofs || rc=1
for m in virtio virtio_ring; do
	! loaded $m || rmmod $m || rc=1
done
ok $rc "virtiofs.ko and the virtio modules unload"
[ $fails = 0 ]
