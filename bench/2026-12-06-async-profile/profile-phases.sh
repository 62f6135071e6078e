#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest side of results.md: fio's 4 KiB random direct reads, 4 jobs
# (one pinned per vCPU), iodepth 1, against libfuse 3.18.3's passthrough_hp
# over tmpfs, with cpu_sample (rig/tests) sampling every vCPU for 4 s in
# the middle of each 8 s phase.  One transport per call:
#   profile-phases.sh ours|stock|uring ENGINE...
# ours: -o clone_bind=cpu (ours loaded); stock: --clone-fd (stock
# loaded); uring: -o io_uring (stock loaded, enable_uring set).
# Run as plan lines ("sh 600 /tests/profile-phases.sh ours libaio psync")
# with this file and cpu_sample in build/7.3/tests.
T=$(cd "$(dirname "$0")" && pwd)
. $T/libfuse.conf
MODE=$1
shift
SRC=/tmp/pp/src MNT=/tmp/pp/mnt
URING=/sys/module/fuse/parameters/enable_uring
mkdir -p $SRC $MNT
case $MODE in
ours) LF=$LF_OURS opt="-o clone_bind=cpu" ;;
stock) LF=$LF_OURS opt=--clone-fd ;;
uring) LF=$LF_STOCK opt="-o io_uring"; echo 1 > $URING ;;
esac
$LF/example/passthrough_hp --foreground --nopassthrough $opt $SRC $MNT > /tmp/pp.log 2>&1 &
DP=$!
i=0; while ! grep -q " $MNT " /proc/mounts && [ $i -lt 100 ]; do usleep 100000; i=$((i+1)); done
grep -q " $MNT " /proc/mounts || { cat /tmp/pp.log; echo "@error $MODE: no mount"; exit 1; }
RR="--name=rr --directory=$MNT --filename_format=f.\$jobnum --size=16m --bs=4k"
timeout -s KILL 120 $FIO $RR --rw=write --numjobs=4 --create_only=1 > /dev/null 2>&1
for e in "$@"; do
	ipi0=$(awk '$1 == "CAL:" || $1 == "RES:" { for (i = 2; i <= 5; i++) s += $i } END { print s }' /proc/interrupts)
	timeout -s KILL 120 $FIO $RR --rw=randread --direct=1 --ioengine=$e --numjobs=4 \
		--iodepth=1 --group_reporting --cpus_allowed=0-3 \
		--cpus_allowed_policy=split --time_based --runtime=8 \
		--output-format=terse --terse-version=3 > /tmp/pp.fio 2>&1 &
	FP=$!
	sleep 2
	$T/cpu_sample 4 500 30 | sed "s/^@/@$MODE-$e /"
	wait $FP
	ipi1=$(awk '$1 == "CAL:" || $1 == "RES:" { for (i = 2; i <= 5; i++) s += $i } END { print s }' /proc/interrupts)
	awk -F';' -v m=$MODE -v e=$e -v d=$((ipi1 - ipi0)) \
		'/^3;/ { printf "@iops %s %s %s IPIs/read %.2f\n", m, e, $8, d / ($8 * 8) }' /tmp/pp.fio
done
umount $MNT; kill $DP; wait $DP
[ $MODE != uring ] || echo 0 > $URING
true
