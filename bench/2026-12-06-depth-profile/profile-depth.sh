#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest side of results.md: fio's 4 KiB random direct reads, one job
# pinned to CPU 1, or to $FIO_CPU (ENGINE:DEPTH), or JOBS jobs, one pinned
# to each of CPUs 0 to JOBS-1 (ENGINE:DEPTH:JOBS), against libfuse
# 3.18.3's passthrough_hp over tmpfs, one transport per call, each
# ENGINE:DEPTH for 8 s, with cpu_sample (rig/tests) sampling every vCPU
# for the middle 4 s:
#   profile-depth.sh ours|node|stock|uring ENGINE:DEPTH[:JOBS]...
# ours: -o clone_bind=cpu, node: -o clone_bind=node (ours, or any
# other build of the series, loaded);
# stock: --clone-fd (stock loaded); uring: -o io_uring (stock loaded,
# enable_uring set).  Besides the IOPS, each run prints, from every
# daemon thread's /proc stat and status, the context switches of the
# daemon's threads per read (a thread that takes several requests per
# wakeup switches less than once a read), their clock ticks, and the
# CPUs those threads ran on.  PROFILE=0: neither cpu_sample nor the
# trace window, whose work (a sampler process, an event per read) lands
# on the vCPUs that a pinned daemon shares.
T=$(cd "$(dirname "$0")" && pwd)
. $T/libfuse.conf
MODE=$1
shift
SRC=/tmp/pp/src MNT=/tmp/pp/mnt
URING=/sys/module/fuse/parameters/enable_uring
mkdir -p $SRC $MNT
case $MODE in
ours) LF=$LF_OURS opt="-o clone_bind=cpu" ;;
node) LF=$LF_OURS opt="-o clone_bind=node" ;;
stock) LF=$LF_OURS opt=--clone-fd ;;
uring) LF=$LF_STOCK opt="-o io_uring"; echo 1 > $URING ;;
esac
$LF/example/passthrough_hp --foreground --nopassthrough $opt $SRC $MNT > /tmp/pp.log 2>&1 &
DP=$!
i=0; while ! grep -q " $MNT " /proc/mounts && [ $i -lt 100 ]; do usleep 100000; i=$((i+1)); done
grep -q " $MNT " /proc/mounts || { cat /tmp/pp.log; echo "@error $MODE: no mount"; exit 1; }
RR="--name=rr --directory=$MNT --filename_format=f.\$jobnum --size=16m --bs=4k"
timeout -s KILL 120 $FIO $RR --rw=write --numjobs=4 --create_only=1 > /dev/null 2>&1
# per daemon thread: "TID CPU TICKS SWITCHES": its last CPU, user and
# system clock ticks, and its context switches (voluntary ones: sleeps)
threads() {
	for t in /proc/$DP/task/*; do
		set -- $(cut -d' ' -f14,15,39 $t/stat) \
			$(awk '/ctxt_switches/ { s += $2 } END { print s }' $t/status)
		echo "${t##*/} $3 $(($1 + $2)) $4"
	done
}
# For 1 s: the requests read per issuing CPU, reading CPU and queue
# (fuse_request_read: own, the reader's device's; other, another's).  The
# event is enabled once, before the daemon starts, and the 1 s windows
# switch tracing_on: enabling an event patches the scheduler's wakeup
# tracepoints too, and text patched under load once stopped a TCG guest
# with an int3 oops in ttwu_do_activate().
TR=/sys/kernel/tracing
EV=$TR/events/fuse/fuse_request_read
[ -d $TR/events ] || mount -t tracefs nodev $TR 2> /dev/null
if [ -d $EV ] && [ $MODE != uring ]; then
	echo 0 > $TR/tracing_on
	echo 1 > $EV/enable
else
	EV=
fi
reads_by_cpu() {
	[ -n "$EV" ] || return 0
	echo > $TR/trace
	echo 1 > $TR/tracing_on
	sleep 1
	echo 0 > $TR/tracing_on
	awk -v p="@reads $MODE $e $dl" '/fuse_request_read:/ {
		for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		n[v["cpu"] " -> " v["read_cpu"] " " v["queue"]]++ }
		END { for (k in n) print p, "cpu", k, n[k] }' $TR/trace | sort
}
for ed in "$@"; do
	e=${ed%%:*} d=${ed#*:} j=1 cpus=${FIO_CPU:-1}
	case $d in *:*) j=${d#*:} d=${d%:*} cpus=0-$((j - 1)) ;; esac
	dl=$d; [ $j = 1 ] || dl=${d}x$j
	[ $cpus = 1 ] || [ $j != 1 ] || dl=${d}cpu$cpus
	threads > /tmp/pp.t0
	timeout -s KILL 120 $FIO $RR --rw=randread --direct=1 --ioengine=$e --numjobs=$j \
		--iodepth=$d --cpus_allowed=$cpus --cpus_allowed_policy=split \
		--group_reporting --time_based --runtime=8 \
		--output-format=terse --terse-version=3 > /tmp/pp.fio 2>&1 &
	FP=$!
	sleep 2
	if [ "${PROFILE:-1}" = 1 ]; then
		$T/cpu_sample 4 500 30 | sed "s/^@/@$MODE-$e-$dl /"
		reads_by_cpu
	fi
	wait $FP
	threads > /tmp/pp.t1
	n=$(awk -F';' '/^3;/ { print $8 * 8 }' /tmp/pp.fio)
	# switches and ticks of the threads that ran during the phase
	awk -v n=$n -v m=$MODE -v e=$e -v d=$dl '
		NR == FNR { run[$1] = $3; sl[$1] = $4; next }
		{ ds = $4 - sl[$1]; dr = $3 - run[$1]
		  if (ds > 0) { S += ds; R += dr; cpus[$2]++; T++ } }
		END { c = ""; for (k in cpus) c = c " cpu" k "x" cpus[k]
		      printf "@sched %s %s %s threads %d switches/read %.2f ticks %d%s\n",
			m, e, d, T, S / n, R, c }' /tmp/pp.t0 /tmp/pp.t1
	awk -F';' -v m=$MODE -v e=$e -v d=$dl '/^3;/ { printf "@iops %s %s %s %s\n", m, e, d, $8 }' /tmp/pp.fio
done
umount $MNT; kill $DP; wait $DP
[ -z "$EV" ] || { echo 0 > $EV/enable; echo 1 > $TR/tracing_on; }
[ $MODE != uring ] || echo 0 > $URING
true
