#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Real libfuse daemons on our libfuse (Debian's libfuse 3 with
# libfuse/patches, built by rig/libfuse.sh), each passing through a
# directory on tmpfs, under data-checking parallel writers (fuse_pt_writer:
# one thread pinned per CPU, every byte read back through the mount and
# from the source directory):
#
#   ll      Debian's example passthrough_ll (low-level API) with
#           -o clone_bind=cpu: one bound clone per CPU, readers pinned
#           there, most requests served on the CPU that issued them
#   taskset the same under "taskset -c 1,2": clones on CPUs 1 and 2 only
#   idle    the same with max_idle_threads=1 under bursts of 8 writers:
#           extra readers come and go, the clones stay the same
#   offline the same started while CPU 3 is offline: clones on the online
#           CPUs; CPU 3's requests, once it is back, go to its node
#   hp      Debian's example passthrough_hp (C++, splice) with
#           -o clone_bind=cpu
#   node    fuse_pt (high-level API, fuse_main()) with -o clone_bind=node,
#           also under fs_mark and dbench
#   plain   fuse_pt with -o clone_fd alone: nothing bound, nothing pinned
#   threads fuse_pt -o clone_bind=cpu,max_threads=2: fewer workers
#           allowed than CPUs, so one clone per node, and the log says so
#   masked  passthrough_ll -o clone_bind=node started with
#           /sys/devices/system/node hidden: the nodes are still found
#   own     fuse_pt on a loop of its own (FUSE_PT_OWN_LOOP) with
#           -o clone_bind=cpu: one line says the option does nothing there
#
# In the ll case a reader of CPU 1 is moved to CPU 0 before the writers:
# it must pin itself back when it next reads (ll_reader_goes_back).
#
# On stock fuse.ko (no FUSE_DEV_IOC_BIND) the same daemons with the same
# options must say once that they run as clone_fd, bind and pin nothing,
# and pass the same data checks.
#
# Nothing in the kernel lists a connection's devices or their bindings;
# on ours the tracepoint fuse:fuse_request_read does say, for every
# request, the CPU that issued it, the CPU of the reader, and whether it
# came from the reader's device's own queue (a bound device whose reader
# was waiting for it) or from the shared one.  A hist trigger on it,
# keyed by connection, issuing and reading CPU, is what the checks of
# where requests went read; tracefs is mounted if it is not.
#
# With "deb", in the Debian userland guest (rig/debroot.sh: our fuse3 and
# libfuse3-3 packages installed by apt), it runs instead:
#
#   deb     the packages are ours, apt keeps them over Debian's own, and
#           Debian's sshfs binary loads the packaged library
#   sshfs   Debian's sshfs, unchanged, with -o clone_bind=cpu against an
#           sshd on the guest's loopback, under the same writers and checks
#
# usage: fuse_libfuse_test.sh stock|ours [deb]   (the fuse.ko loaded)
# Prints kselftest TAP; busybox sh.  Every step runs under a timeout, and
# the daemon is unmounted and gone at the end of each case.

T=$(cd "$(dirname "$0")" && pwd)
# fs_mark, dbench and the example daemons are packed at their host paths
PATH=$PATH:/usr/bin:/usr/sbin
KIND=${1:-ours}
MODE=${2:-}
W=/tmp/libfuse
SRC=$W/src
MNT=$W/mnt
LOG=/tmp/libfuse-daemon.log
OUT=/tmp/libfuse-step.out
LOADFILE=/usr/share/dbench/client.txt
FALLBACK='no FUSE_DEV_IOC_BIND'
CPU3=/sys/devices/system/cpu/cpu3/online
NTESTS=43
[ "$MODE" = deb ] && NTESTS=7
n=0
nfail=0
DPID=
CONN=
up=0
# The tracepoint's tracefs directory once the hist trigger is on it (ours)
EV=
HIST='hist:keys=connection,cpu,read_cpu:vals=hitcount,own'
NODEMAP=/tmp/libfuse-nodes
PROBES=0
LF_OURS=
[ -f $T/libfuse.conf ] && . $T/libfuse.conf
LL=$LF_OURS/example/passthrough_ll
HP=$LF_OURS/example/passthrough_hp

case "$KIND:$MODE" in
stock:|ours:|stock:deb|ours:deb) ;;
*) echo "usage: $0 stock|ours [deb]" >&2; exit 2 ;;
esac

echo "TAP version 13"
echo "1..$NTESTS"
start=$(date +%s)
last=$start

note() { sed 's/^/# /'; }

result() {	# ok|fail|skip NAME [WHY]
	n=$((n + 1))
	now=$(date +%s)
	echo "# $2: $((now - last)) s"
	last=$now
	case $1 in
	ok)
		echo "ok $n $2" ;;
	skip)
		echo "ok $n $2 # SKIP $3" ;;
	*)
		nfail=$((nfail + 1))
		[ -n "$3" ] && echo "# $2: $3"
		echo "not ok $n $2" ;;
	esac
}

# verdict NAME: ok if $why is empty, else a failure saying why
verdict() {
	if [ -n "$why" ]; then
		result fail "$1" "$why"
	else
		result ok "$1"
	fi
}

ours_only() {	# NAME: on stock, a skip; returns 1 then
	[ $KIND = ours ] && return 0
	result skip "$1" "no clone queues on stock fuse.ko"
	return 1
}

# to SECONDS CMD...: a step under a hard timeout, its output in $OUT
to() {
	t=$1
	shift
	timeout -s KILL "$t" "$@" > $OUT 2>&1
}

mounted() { grep -q " $MNT " /proc/mounts; }

# "0-2,5" -> "0 1 2 5"
expand() {
	echo "$1" | tr ',' '\n' | awk -F- 'NF { b = NF > 1 ? $2 : $1
		for (i = $1; i <= b; i++) printf "%d ", i }'
}

# The online CPUs the daemon's main thread may run on, one per line
daemon_cpus() {
	online=" $(expand "$(cat /sys/devices/system/cpu/online)") "
	for c in $(expand "$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/$DPID/status)"); do
		case "$online" in *" $c "*) echo $c ;; esac
	done
}

# The nodes with CPUs among the daemon's, one per line
daemon_nodes() {
	for f in /sys/devices/system/node/node*/cpulist; do
		nd=${f%/cpulist}
		nd=${nd##*node}
		for c in $(expand "$(cat $f)"); do
			daemon_cpus | grep -qx "$c" && { echo $nd; break; }
		done
	done | sort -n
}

# A node's CPUs that the daemon may use, as a list "0-1"-style expanded
node_cpus() { for c in $(expand "$(cat /sys/devices/system/node/node$1/cpulist)"); do
		daemon_cpus | grep -qx "$c" && echo $c
	done | tr '\n' ' '; }

fuse_fds() { ls -l /proc/$DPID/fd 2>/dev/null | grep -c /dev/fuse; }

# Threads of the daemon pinned to fewer CPUs than the daemon may use
pinned_threads() {
	all=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/$DPID/status)
	awk '/^Cpus_allowed_list/ { print $2 }' /proc/$DPID/task/*/status 2>/dev/null |
		grep -vx "$all" | wc -l
}

# The clone_bind readers: "NAME CPULIST" per thread named fuse_cpuN or
# fuse_nodeN
readers() {
	for t in /proc/$DPID/task/*; do
		c=$(cat $t/comm 2>/dev/null) || continue
		case "$c" in
		fuse_cpu*|fuse_node*)
			# a thread that exits as we look is left out
			l=$(awk '/^Cpus_allowed_list/ { print $2 }' $t/status 2>/dev/null)
			[ -n "$l" ] && echo "$c $l" ;;
		esac
	done
}

# The /dev/fuse fds of the daemon, by number
fuse_fd_list() {
	for f in /proc/$DPID/fd/*; do
		[ "$(readlink $f 2>/dev/null)" = /dev/fuse ] && echo ${f##*/}
	done | sort -n | tr '\n' ' '
}

# The mount's connection number (its fusectl directory's name, and the
# tracepoint's "connection"), from its st_dev
conn_id() {
	dev=$(timeout -s KILL 10 stat -c %d "$MNT") || return 1
	maj=$(((dev >> 8) & 0xfff))
	min=$(((dev & 0xff) | ((dev >> 12) & 0xfff00)))
	echo $(((maj << 20) | min))
}

# "CPU NODE" for every CPU, while all are online and sysfs shows the nodes
node_map() {
	for f in /sys/devices/system/node/node*/cpulist; do
		[ -f "$f" ] || continue
		nd=${f%/cpulist}
		nd=${nd##*node}
		for c in $(expand "$(cat $f)"); do
			echo "$c $nd"
		done
	done > $NODEMAP
	[ -s $NODEMAP ] ||
		for c in $(expand "$(cat /sys/devices/system/cpu/possible)"); do
			echo "$c 0"
		done > $NODEMAP
}

# Attach the hist trigger to fuse:fuse_request_read, mounting tracefs if
# nothing is there yet; $EV stays empty where there is no such tracepoint
trace_on() {
	t=/sys/kernel/tracing
	[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null
	EV=$t/events/fuse/fuse_request_read
	if [ ! -d $EV ]; then
		echo "# no tracepoint fuse:fuse_request_read in $t"
		EV=
		return
	fi
	# a trigger left by an earlier run would refuse the same one again
	echo "!$HIST" > $EV/trigger 2>/dev/null
	if ! echo "$HIST" > $EV/trigger; then
		echo "# cannot attach '$HIST' to $EV"
		EV=
	fi
}

trace_off() {
	[ -n "$EV" ] && echo "!$HIST" > $EV/trigger 2>/dev/null
	EV=
}

# hist_snap FILE: the mount's connection's hist entries so far, as "CPU
# READ_CPU HITS OWN".  An entry of the hist file reads
#   { connection: C, cpu: N, read_cpu: M } hitcount: K  own: O
hist_snap() {
	: > "$1"
	[ -n "$EV" ] && [ -n "$CONN" ] || return 1
	awk -v c="$CONN" '{ gsub(/[{},]/, " ") }
		$1 == "connection:" && $2 == c { print $4, $6, $8, $10 }' \
		$EV/hist > "$1"
}

# hist_delta BEFORE AFTER: what the entries gained between two snapshots
# (BEFORE may be empty: FILENAME, not NR == FNR, tells the files apart)
hist_delta() {
	awk 'FILENAME == ARGV[1] { h[$1 " " $2] = $3; o[$1 " " $2] = $4; next }
	     { d = $3 - h[$1 " " $2]; e = $4 - o[$1 " " $2]
	       if (d || e) print $1, $2, d, e }' "$1" "$2"
}

# hist_sum DELTA: requests, those read on their issuing CPU, those read
# elsewhere on its node, and those read from the reader's own device queue
hist_sum() {
	awk 'NR == FNR { node[$1] = $2; next }
	     { D += $3; O += $4
	       if ($1 == $2)
		       L += $3
	       else if (($1 in node) && ($2 in node) && node[$1] == node[$2])
		       N += $3 }
	     END { print D + 0, L + 0, N + 0, O + 0 }' $NODEMAP "$1"
}

# probe: from each CPU the daemon may run on, LOOKUPs of four names that do
# not exist, each by a process pinned there; what the hist entries gained
# meanwhile in $W.probe
probe() {
	PROBES=$((PROBES + 1))
	hist_snap $W.p0
	for c in $(daemon_cpus); do
		for i in 1 2 3 4; do
			timeout -s KILL 10 taskset -c $c \
				stat $MNT/.probe-$PROBES-$c-$i > /dev/null 2>&1
		done
	done
	hist_snap $W.p1
	hist_delta $W.p0 $W.p1 > $W.probe
}

# own_at cpu|node PLACE: requests of the last probe issued at PLACE and
# read there from the reader's own device queue
own_at() {
	awk -v k=$1 -v p=$2 'NR == FNR { node[$1] = $2; next }
	     k == "cpu" && $1 == p && $2 == p { o += $4 }
	     k == "node" && ($1 in node) && ($2 in node) &&
		node[$1] == p && node[$2] == p { o += $4 }
	     END { print o + 0 }' $NODEMAP $W.probe
}

# check_bound cpu|node "PLACES": on ours, a LOOKUP issued at each place is
# read there from a device's own queue, which only a device bound there
# whose reader waits in read() gets.  Sets $why.
check_bound() {
	if [ -z "$EV" ]; then
		why="no tracepoint fuse:fuse_request_read to see where requests go"
		return
	fi
	probe
	echo "# probe, per issuing CPU and reading CPU: requests, from the own queue"
	sed 's/^/#   /' $W.probe
	for p in $2; do
		if [ "$(own_at $1 $p)" = 0 ]; then
			why="no LOOKUP issued on $1 $p was read there from a bound device's own queue"
			return
		fi
	done
}

# check_unbound: on ours, no LOOKUP of a probe from every CPU is read from
# a device's own queue: nothing is bound.  Sets $why.
check_unbound() {
	if [ -z "$EV" ]; then
		why="no tracepoint fuse:fuse_request_read to see where requests go"
		return
	fi
	probe
	set -- $(hist_sum $W.probe)
	if [ "$1" = 0 ]; then
		why="the tracepoint saw none of the probe's LOOKUPs"
	elif [ "$4" != 0 ]; then
		why="$4 of $1 LOOKUPs were read from a device's own queue: something is bound"
	fi
}

# launch CMD...: start a daemon in the foreground on $SRC and $MNT, wait
# for its mount and pass a probe file through.  Sets up=1, else $why.
launch() {
	up=0
	rm -rf $W
	mkdir -p $SRC $MNT
	"$@" > $LOG 2>&1 &
	DPID=$!
	i=0
	while ! mounted && [ $i -lt 300 ] && kill -0 $DPID 2>/dev/null; do
		usleep 100000
		i=$((i + 1))
	done
	if ! mounted; then
		note < $LOG
		why="the daemon did not mount within 30 s"
		return 1
	fi
	if ! to 30 sh -c "echo probe-$$ > $MNT/probe &&
			 [ \"\$(cat $SRC/probe)\" = probe-$$ ] &&
			 rm $MNT/probe && [ ! -e $SRC/probe ]"; then
		note < $OUT
		why="a probe file did not pass through"
		return 1
	fi
	CONN=$(conn_id)
	up=1
}

start_daemon() {	# NAME CMD...
	name=$1
	shift
	why=
	launch "$@"
	verdict "$name"
}

# writers NAME SEED WRITES [SUBDIR]: data-checking writers, one per CPU.
# Returns 1 (with $why) on failure.
writers() {
	why=
	if [ $up = 0 ]; then
		why="not mounted"
		return 1
	fi
	mkdir -p $MNT/$4 || { why="cannot make $MNT/$4"; return 1; }
	to 300 $T/fuse_pt_writer -S "$2" -f 1 -n "$3" -s 131072 $MNT/$4 $SRC/$4
	rc=$?
	grep -v '^#' $OUT | note
	grep '^#' $OUT
	if [ $rc != 0 ]; then
		why="fuse_pt_writer exited with $rc"
		return 1
	fi
	return 0
}

show_state() {
	echo "daemon pid $DPID, may run on CPUs $(daemon_cpus | tr '\n' ' ')"
	echo "/dev/fuse fds in the daemon: $(fuse_fd_list); threads: $(ls /proc/$DPID/task 2>/dev/null | wc -l)"
	readers | sort | uniq -c
}

# check_clones NAME cpu|node: on ours, the daemon has the mount fd and one
# clone per CPU (node) it may use, and no other /dev/fuse fd; every reader
# is named for its place and pinned there; and LOOKUPs issued at each
# place are read there from a bound device's own queue.  On stock: the
# fallback was logged once, nothing is pinned, and the daemon serves
# through clones.
check_clones() {
	why=
	if [ $up = 0 ]; then
		result fail "$1" "not mounted"
		return
	fi
	show_state | note
	nfb=$(grep -c "$FALLBACK" $LOG)
	if [ $KIND = stock ]; then
		if [ "$nfb" != 1 ]; then
			why="the fallback to clone_fd was logged $nfb times, expected once"
		elif [ "$(pinned_threads)" != 0 ]; then
			why="$(pinned_threads) threads pinned on stock"
		elif [ -n "$(readers)" ]; then
			why="clone_bind readers on stock"
		elif [ "$(fuse_fds)" -lt 2 ]; then
			why="$(fuse_fds) /dev/fuse fds: no clone, not running as clone_fd"
		fi
		verdict "$1"
		return
	fi
	[ "$nfb" = 0 ] || why="the daemon fell back to clone_fd on ours"
	if [ "$2" = cpu ]; then
		want=$(daemon_cpus | tr '\n' ' ')
	else
		want=$(daemon_nodes | tr '\n' ' ')
	fi
	nwant=$(echo $want | wc -w)
	nfds=$(fuse_fds)
	if [ -z "$why" ] && [ "$nfds" != $((nwant + 1)) ]; then
		why="$nfds /dev/fuse fds, expected $((nwant + 1)): the mount fd and a clone per $2 ($want)"
	fi
	[ -z "$why" ] && check_readers "$2" "$want"
	[ -z "$why" ] && check_bound "$2" "$want"
	verdict "$1"
}

# check_readers cpu|node "PLACES": every reader thread is named for a place
# with a clone and may run exactly there, and every place has one.  Sets
# $why.
check_readers() {
	readers > $W.readers
	for p in $2; do
		if [ "$1" = cpu ]; then
			cpus=$p
		else
			cpus=$(node_cpus $p)
		fi
		grep -q "^fuse_$1$p " $W.readers ||
			{ why="no reader named fuse_$1$p"; return; }
		bad=$(awk -v n="fuse_$1$p" '$1 == n { print $2 }' $W.readers |
			while read -r l; do
				[ "$(echo $(expand "$l"))" = "$(echo $cpus)" ] || echo "$l"
			done | head -n 1)
		[ -n "$bad" ] &&
			{ why="a reader of $1 $p may run on CPUs $bad, expected $cpus"; return; }
	done
	extra=$(awk '{ print $1 }' $W.readers | sed "s/^fuse_$1//" | sort -un |
		while read -r p; do
			echo " $2 " | grep -q " $p " || echo "$p"
		done)
	[ -n "$extra" ] && why="readers named for $1s without a clone: $extra"
}

# A request waits on the clone bound to its CPU (node) and wakes its reader
# if it sleeps, else an idle reader of the node, else of another node; the
# first free reader takes it.  These writers keep every CPU busy, so a
# node's overflow goes to the other node's idle readers, as without
# binding, and background writes pass over their busy CPU's readers by
# design.  So the checks ask for more than chance gives (25 % on
# the CPU, 50 % on the node, 4 CPUs in 2 nodes), not all: MOST % on their
# own CPU with a clone on every CPU, NODE_MOST % on their own node with
# one on every node.  Measured 2026-12-04 on the three-level core, two
# runs: 52 to 73 % on the CPU, 68 to 85 % on the node.
MOST=40
NODE_MOST=55

# check_io NAME SEED WRITES cpu|node|none: data-checking writers, and on
# ours where the requests they made were read (fuse:fuse_request_read):
# with a clone on every CPU (cpu) most on their own CPU, with a clone on
# every node (node) most on their own node; none: nothing is bound, only
# the data counts
check_io() {
	[ $KIND = ours ] && [ $up = 1 ] && hist_snap $W.snap1
	if ! writers "$1" "$2" "$3"; then
		verdict "$1"
		return
	fi
	if [ $KIND = stock ] || [ "$4" = none ]; then
		verdict "$1"
		return
	fi
	if [ -z "$EV" ]; then
		why="no tracepoint fuse:fuse_request_read to see where requests went"
		verdict "$1"
		return
	fi
	hist_snap $W.snap2
	hist_delta $W.snap1 $W.snap2 > $W.delta
	set -- "$1" "$4" $(hist_sum $W.delta)
	D=$3 L=$4 N=$5 O=$6
	echo "# $D requests: $L read on their issuing CPU ($((D ? L * 100 / D : 0)) %), $N elsewhere on its node, $((D - L - N)) remote; $O from the reader's own clone queue"
	if [ "$D" -le 0 ]; then
		why="the tracepoint saw no request"
	elif [ "$2" = cpu ] && [ $((L * 100)) -lt $((D * MOST)) ]; then
		why="a clone on every CPU, yet only $L of $D requests were read on their own CPU"
	elif [ $(((L + N) * 100)) -lt $((D * NODE_MOST)) ]; then
		why="a clone on every node, yet only $((L + N)) of $D requests were read on their own node"
	fi
	verdict "$1"
}

# Unmount, and the daemon must exit by itself, with status 0.  Sets $why.
halt() {
	why=
	if ! mounted && [ -z "$DPID" ]; then
		why="nothing to unmount"
		return 1
	fi
	if mounted && ! to 30 umount $MNT; then
		note < $OUT
		why="umount failed"
		timeout -s KILL 10 umount -l $MNT
	fi
	i=0
	while [ -n "$DPID" ] && kill -0 $DPID 2>/dev/null && [ $i -lt 150 ]; do
		usleep 100000
		i=$((i + 1))
	done
	if [ -n "$DPID" ] && kill -0 $DPID 2>/dev/null; then
		kill -9 $DPID
		why="${why:+$why; }the daemon did not exit after the unmount"
	fi
	if [ -n "$DPID" ]; then
		wait $DPID
		rc=$?
		[ -z "$why" ] && [ $rc != 0 ] && why="the daemon exited with $rc"
	fi
	grep -v 'Ignoring invalid max threads' $LOG | tail -n 20 | note
	DPID=
	up=0
	if mounted; then
		why="${why:+$why; }still mounted"
	fi
	[ -z "$why" ]
}

stop_daemon() {	# NAME
	halt
	verdict "$1"
}

run_fs_mark() {	# NAME
	why=
	if [ $up = 0 ]; then
		result fail "$1" "not mounted"
		return
	fi
	if ! command -v fs_mark > /dev/null; then
		result fail "$1" "no fs_mark in the guest"
		return
	fi
	# 2 threads x 20 files x 2 loops of 4 KiB, fsync before close, kept
	to 120 fs_mark -d $MNT/fsm -s 4096 -n 20 -t 2 -L 2 -S 1 -k
	rc=$?
	note < $OUT
	files=$(ls $SRC/fsm 2>/dev/null | wc -l)
	if [ $rc != 0 ]; then
		why="fs_mark exited with $rc"
	elif grep -qiE 'error|fail' $OUT; then
		why="fs_mark reported errors"
	elif [ "$files" != 80 ]; then
		why="$files files in the source directory, expected 80"
	elif ! to 60 rm -rf $MNT/fsm || [ -e $SRC/fsm ]; then
		why="cannot remove the fs_mark files"
	fi
	verdict "$1"
}

run_dbench() {	# NAME
	why=
	if [ $up = 0 ]; then
		result fail "$1" "not mounted"
		return
	fi
	if ! command -v dbench > /dev/null || [ ! -f $LOADFILE ]; then
		result fail "$1" "no dbench or no $LOADFILE in the guest"
		return
	fi
	if [ ! -d /proc/sysvipc ]; then
		result skip "$1" "kernel without CONFIG_SYSVIPC (dbench needs SysV shm and semaphores)"
		return
	fi
	mkdir -p $MNT/db
	to 90 dbench -D $MNT/db -t 8 -c $LOADFILE 3
	rc=$?
	# dbench 4.00 says it "failed to create barrier semaphore" when
	# semget() returns id 0, the first in a fresh IPC namespace: not ours
	grep -v 'failed to create barrier semaphore' $OUT > $OUT.errs
	grep -iE 'error|fail' $OUT.errs | head -n 20 | note
	tail -n 6 $OUT | note
	if [ $rc != 0 ]; then
		why="dbench exited with $rc"
	elif grep -qiE 'error|fail' $OUT.errs; then
		why="dbench reported errors"
	elif ! grep -q '^Throughput' $OUT; then
		why="dbench printed no throughput"
	elif ! to 60 rm -rf $MNT/db || [ -e $SRC/db ]; then
		why="cannot remove the dbench files"
	fi
	verdict "$1"
}

# idle_bursts NAME: with max_idle_threads=1, three bursts of two writer
# processes (8 threads on 4 CPUs); during and after each, on ours, the
# daemon has the same /dev/fuse fds as before, by number (a clone closed
# and made anew while we look would show as one fd fewer or a new
# number), and every reader, extra ones included, runs where its clone is
# bound; after the bursts, LOOKUPs from every CPU are still read there from
# a bound clone's own queue
idle_bursts() {
	why=
	if [ $up = 0 ]; then
		result fail "$1" "not mounted"
		return
	fi
	fds0=$(fuse_fd_list)
	want=$(daemon_cpus | tr '\n' ' ')
	maxthreads=0
	for round in 1 2 3; do
		mkdir -p $MNT/a$round $MNT/b$round
		timeout -s KILL 300 $T/fuse_pt_writer -S $((round * 10)) -f 1 -n 15 \
			-s 65536 $MNT/a$round $SRC/a$round > $OUT.a 2>&1 &
		pa=$!
		timeout -s KILL 300 $T/fuse_pt_writer -S $((round * 10 + 1)) -f 1 -n 15 \
			-s 65536 $MNT/b$round $SRC/b$round > $OUT.b 2>&1 &
		pb=$!
		while kill -0 $pa 2>/dev/null || kill -0 $pb 2>/dev/null; do
			nt=$(ls /proc/$DPID/task 2>/dev/null | wc -l)
			[ "$nt" -gt "$maxthreads" ] && maxthreads=$nt
			if [ $KIND = ours ] && [ -z "$why" ]; then
				check_readers cpu "$want"
				fds=$(fuse_fd_list)
				[ -z "$why" ] && [ "$fds" != "$fds0" ] &&
					why="the daemon's /dev/fuse fds are '$fds', before '$fds0'"
				[ -n "$why" ] && why="during burst $round: $why"
			fi
			usleep 200000
		done
		wait $pa
		ra=$?
		wait $pb
		rb=$?
		grep -v '^#' $OUT.a $OUT.b | note
		if [ $ra != 0 ] || [ $rb != 0 ]; then
			why="${why:+$why; }burst $round: fuse_pt_writer exited with $ra and $rb"
		fi
		[ $KIND = ours ] || continue
		fds=$(fuse_fd_list)
		if [ -z "$why" ] && [ "$fds" != "$fds0" ]; then
			why="after burst $round the daemon's /dev/fuse fds are '$fds', before '$fds0'"
		fi
	done
	show_state | note
	echo "# at most $maxthreads threads in the daemon during the bursts; /dev/fuse fds $fds0 -> $(fuse_fd_list)"
	if [ $KIND = ours ] && [ -z "$why" ]; then
		check_bound cpu "$want"
		[ -n "$why" ] && why="after the bursts: $why"
	fi
	verdict "$1"
}

cleanup() {
	mounted && timeout -s KILL 10 umount -l $MNT
	[ -n "$DPID" ] && kill -9 $DPID 2>/dev/null
	[ -w $CPU3 ] && [ "$(cat $CPU3)" = 0 ] && echo 1 > $CPU3
	trace_off
}
trap cleanup EXIT
node_map
[ $KIND = ours ] && trace_on

# deb_packages NAME: libfuse3-3 and fuse3 are the packages make
# libfuse-deb built, apt saw them as newer than Debian's own when it
# installed them (rig/debroot.sh kept what it said), and Debian's sshfs
# loads the library of that package
deb_packages() {
	why=
	for p in libfuse3-3 fuse3; do
		v=$(dpkg-query -W -f '${Version}' $p 2>/dev/null)
		echo "# $p $v"
		case "$v" in
		*+clonebind*) ;;
		*) why="${why:+$why; }$p is '$v', not our package" ;;
		esac
		# "Installed" and "Candidate" are ours, above Debian's in the table
		awk -v p="$p:" -v v="$v" '
			$1 == p { on = 1; next }
			/^[^ ]/ { on = 0 }
			on && ($1 == "Installed:" || $1 == "Candidate:") && $2 == v { n++ }
			on && $1 != "***" && $1 ~ /^[0-9]/ && $1 != v { deb = $1 }
			END { exit !(n == 2 && deb != "") }' /root/apt-policy.txt ||
			why="${why:+$why; }apt did not see $p $v as installed and preferred over Debian's"
	done
	note < /root/apt-policy.txt
	lib=$(ldd /usr/bin/sshfs | awk '$1 == "libfuse3.so.3" { print $3 }')
	real=$(readlink -f "$lib")
	owner=$(dpkg -S "${real##*/}" 2>/dev/null | cut -d: -f1)
	echo "# sshfs loads $lib ($real), from package '$owner'"
	if [ "$owner" != libfuse3-3 ]; then
		why="${why:+$why; }sshfs's libfuse3.so.3 ($real) is not from libfuse3-3"
	elif ! grep -q clone_bind "$real"; then
		why="${why:+$why; }$real has no clone_bind"
	fi
	verdict "$1"
}

# An sshd on the loopback for sshfs: root logs in with a key made here
SSHOPTS=IdentityFile=/root/.ssh/id_ed25519,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes
start_sshd() {
	ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
	mkdir -p /run/sshd /root/.ssh
	chmod 700 /root /root/.ssh
	ssh-keygen -A > /dev/null
	[ -f /root/.ssh/id_ed25519 ] ||
		ssh-keygen -q -t ed25519 -N '' -f /root/.ssh/id_ed25519
	cp /root/.ssh/id_ed25519.pub /root/.ssh/authorized_keys
	/usr/sbin/sshd -o UsePAM=no -o ListenAddress=127.0.0.1 -E /tmp/sshd.log
}

if [ "$MODE" = deb ]; then
	echo "# fuse.ko: $KIND; $(nproc) CPUs; Debian userland, packaged libfuse"
	# 1: the packages
	deb_packages deb_packages_are_ours
	# 2-5: Debian's sshfs, as installed
	start_sshd || echo "# sshd did not start: $(cat /tmp/sshd.log)"
	start_daemon sshfs_mount /usr/bin/sshfs -f \
		-o clone_bind=cpu,$SSHOPTS root@127.0.0.1:$SRC $MNT
	check_clones sshfs_clones_per_cpu cpu
	check_io sshfs_writers 7 60 cpu
	stop_daemon sshfs_unmount
	echo "# fallback lines: $(grep -c "$FALLBACK" $LOG)"
	# 6: a second mount after the first is gone works the same
	why=
	launch /usr/bin/sshfs -f -o clone_bind=cpu,$SSHOPTS root@127.0.0.1:$SRC $MNT &&
		halt
	verdict sshfs_mounts_again
	# 7: nothing left behind
	if grep -q " $W" /proc/mounts || pidof sshfs > /dev/null; then
		result fail nothing_left "mounts or daemons left behind"
	else
		result ok nothing_left
	fi
	pkill -x sshd
	echo "# $nfail of $NTESTS failed in $(($(date +%s) - start)) s"
	[ $nfail = 0 ] || exit 1
	exit 0
fi

echo "# fuse.ko: $KIND; $(nproc) CPUs; source directory on tmpfs"
echo "# passthrough_ll: $LL"
if [ ! -x "$LL" ] || [ ! -x "$HP" ]; then
	echo "# no example daemons in the guest: is $T/libfuse.conf there?"
fi

# move_readers PLACE CPU: every reader named PLACE gets affinity CPU alone
move_readers() {
	for t in /proc/$DPID/task/*; do
		[ "$(cat $t/comm 2>/dev/null)" = "$1" ] || continue
		taskset -p $((1 << $2)) ${t##*/} > /dev/null || return 1
		echo "# moved ${t##*/} ($1) to CPU $2"
	done
}

# 1-5: passthrough_ll -o clone_bind=cpu; a reader of CPU 1 moved away
start_daemon ll_mount $LL -f -o source=$SRC,clone_bind=cpu $MNT
check_clones ll_clones_per_cpu cpu
[ $KIND = ours ] && [ $up = 1 ] && move_readers fuse_cpu1 0
check_io ll_writers 1 40 cpu
if ours_only ll_reader_goes_back; then
	why=
	check_readers cpu "$(daemon_cpus | tr '\n' ' ')"
	grep -q 'cannot go back' $LOG && why="${why:+$why; }the daemon said a reader cannot go back"
	readers | note
	verdict ll_reader_goes_back
fi
stop_daemon ll_unmount
echo "# fallback lines: $(grep -c "$FALLBACK" $LOG)"

# 6-9: under taskset -c 1,2
start_daemon taskset_mount taskset -c 1,2 $LL -f -o source=$SRC,clone_bind=cpu $MNT
check_clones taskset_clones_on_1_2 cpu
check_io taskset_writers 2 20 node
stop_daemon taskset_unmount

# 10-13: max_idle_threads=1 under bursts
start_daemon idle_mount $LL -f -o source=$SRC,clone_bind=cpu,max_idle_threads=1 $MNT
check_clones idle_clones_per_cpu cpu
idle_bursts idle_bursts_same_clones
stop_daemon idle_unmount

# 14-17: started while CPU 3 is offline; it comes back before the writers
if [ -w $CPU3 ] && [ "$(cat $CPU3)" = 1 ] && echo 0 > $CPU3; then
	start_daemon offline_mount $LL -f -o source=$SRC,clone_bind=cpu $MNT
	check_clones offline_clones_on_online_cpus cpu
	echo 1 > $CPU3 || echo "# cannot bring CPU 3 back online"
	check_io offline_writers_cpu3_back 6 20 node
	stop_daemon offline_unmount
else
	for t in offline_mount offline_clones_on_online_cpus \
		 offline_writers_cpu3_back offline_unmount; do
		result skip $t "CPU 3 cannot be taken offline"
	done
fi

# 18-21: passthrough_hp -o clone_bind=cpu
start_daemon hp_mount $HP --foreground -o clone_bind=cpu $SRC $MNT
check_clones hp_clones_per_cpu cpu
check_io hp_writers 3 40 cpu
stop_daemon hp_unmount

# 22-27: fuse_pt (fuse_main) -o clone_bind=node, fs_mark, dbench
start_daemon node_mount $T/fuse_pt $SRC $MNT -f -o clone_bind=node
check_clones node_clones_per_node node
check_io node_writers 4 40 node
run_fs_mark node_fs_mark
run_dbench node_dbench
stop_daemon node_unmount

# 28-31: fuse_pt -o clone_fd: as before, nothing bound or pinned
start_daemon plain_mount $T/fuse_pt $SRC $MNT -f -o clone_fd
why=
if [ $up = 1 ]; then
	show_state | note
	if [ "$(pinned_threads)" != 0 ]; then
		why="$(pinned_threads) threads pinned"
	elif [ "$(fuse_fds)" -lt 2 ]; then
		why="$(fuse_fds) /dev/fuse fds: no clone"
	elif grep -q "$FALLBACK" $LOG; then
		why="clone_bind messages without clone_bind"
	elif [ $KIND = ours ]; then
		check_unbound
	fi
else
	why="not mounted"
fi
verdict plain_nothing_bound
check_io plain_writers 5 20 none
stop_daemon plain_unmount

# 32-35: max_threads=2 on 4 CPUs (fuse_main() takes the option; passthrough_ll's
# loop config does not): a clone per node, and the log says why
start_daemon threads_mount $T/fuse_pt $SRC $MNT -f -o clone_bind=cpu,max_threads=2
check_clones threads_clones_per_node node
if ours_only threads_logged; then
	why=
	grep -q 'max_threads 2 for [0-9]* CPUs' $LOG ||
		why="no line says that max_threads made fewer clones"
	grep 'clone_bind' $LOG | note
	verdict threads_logged
fi
stop_daemon threads_unmount

# 36-38: the nodes from the kernel, with sysfs's node directory hidden
NODESYS=/sys/devices/system/node
if mount -t tmpfs none $NODESYS; then
	why=
	launch $LL -f -o source=$SRC,clone_bind=node $MNT
	umount $NODESYS
	verdict masked_mount
	check_clones masked_clones_per_node node
	stop_daemon masked_unmount
else
	for t in masked_mount masked_clones_per_node masked_unmount; do
		result skip $t "cannot mount over $NODESYS"
	done
fi

# 39-42: a loop of the daemon's own: the option does nothing, and says so
export FUSE_PT_OWN_LOOP=1
start_daemon own_mount $T/fuse_pt $SRC $MNT -f -o clone_bind=cpu
unset FUSE_PT_OWN_LOOP
why=
if [ $up = 1 ]; then
	nown=$(grep -c 'runs its own' $LOG)
	if [ "$nown" != 1 ]; then
		why="'runs its own' logged $nown times, expected once"
	elif grep -q "$FALLBACK" $LOG; then
		why="a fallback to clone_fd logged by a loop that binds nothing"
	elif [ $KIND = ours ]; then
		check_unbound
	fi
else
	why="not mounted"
fi
verdict own_loop_says_ignored
check_io own_writers 8 20 none
stop_daemon own_unmount

# 43: nothing left behind
left=$(grep -c " $W" /proc/mounts)
if [ "$left" != 0 ] || pidof fuse_pt passthrough_ll passthrough_hp > /dev/null; then
	grep " $W" /proc/mounts | note
	result fail nothing_left "mounts or daemons left behind"
else
	result ok nothing_left
fi

echo "# $nfail of $NTESTS failed in $(($(date +%s) - start)) s"
[ $nfail = 0 ] || exit 1
exit 0
