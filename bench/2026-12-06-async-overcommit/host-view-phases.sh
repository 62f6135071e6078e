#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest side of the host-view boots of results.md: passthrough_hp -o
# clone_bind=cpu on ours, fio 4 jobs libaio then psync, twice, 10 s each,
# each phase stamped with the guest uptime.  Run as a plan line
# ("sh 600 /tests/host-view-phases.sh") with this file in build/7.3/tests.
LF318=/work/main/build/libfuse318
FIO=/work/main/build/fio/fio
SRC=/tmp/dg/src MNT=/tmp/dg/mnt
mkdir -p $SRC $MNT
$LF318/ours/example/passthrough_hp --foreground --nopassthrough -o clone_bind=cpu $SRC $MNT > /tmp/dg.log 2>&1 &
DP=$!
i=0; while ! grep -q " $MNT " /proc/mounts && [ $i -lt 100 ]; do usleep 100000; i=$((i+1)); done
RR="--name=rr --directory=$MNT --filename_format=f.\$jobnum --size=16m --bs=4k"
$FIO $RR --rw=write --numjobs=4 --create_only=1 > /dev/null 2>&1
for e in libaio psync libaio psync; do
  echo "@phase $e start $(cat /proc/uptime)"
  $FIO $RR --rw=randread --direct=1 --ioengine=$e --numjobs=4 --iodepth=1 --group_reporting --cpus_allowed=0-3 --cpus_allowed_policy=split --time_based --runtime=10 --output-format=terse --terse-version=3 | awk -F';' -v e=$e '/^3;/ { print "@iops", e, $8 }'
  sleep 3
done
umount $MNT; kill $DP; wait $DP
true
