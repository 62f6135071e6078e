#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A real daemon: fuse_pt (our passthrough file system on libfuse 3, run
# multithreaded with -o clone_fd, passing through a directory on tmpfs)
# under data-checking parallel writers, fs_mark and dbench, twice:
#
#   plain     as it is: libfuse clones one fd per worker and binds none;
#   preload   with fuse_clone_bind.so preloaded (tools/fuse/clone-bind):
#             on ours every clone is bound to a CPU, its reader pinned
#             there, and requests are served on the CPU that issued them;
#             on stock the library finds no FUSE_DEV_IOC_BIND and changes
#             nothing;
#
# then once more with FUSE_CLONE_BIND=node (clones bound to nodes).  Data
# is checked throughout: fuse_pt_writer compares every byte read back,
# through the mount and from the source directory, with what it wrote.
# dbench needs SysV IPC (CONFIG_SYSVIPC) and is skipped without it.
#
# usage: fuse_libfuse_test.sh stock|ours   (the fuse.ko loaded)
# Prints kselftest TAP; busybox sh.  Every step runs under a timeout, and
# the daemon is unmounted and gone at the end.

T=$(cd "$(dirname "$0")" && pwd)
# fs_mark and dbench are packed at their host paths
PATH=$PATH:/usr/bin:/usr/sbin
KIND=${1:-ours}
W=/tmp/libfuse
SRC=$W/src
MNT=$W/mnt
LOG=/tmp/libfuse-daemon.log
OUT=/tmp/libfuse-step.out
PRELOAD=$T/fuse_clone_bind.so
LOADFILE=/usr/share/dbench/client.txt
NTESTS=15
n=0
nfail=0
DPID=
CQ=
up=0

case "$KIND" in
stock|ours) ;;
*) echo "usage: $0 stock|ours" >&2; exit 2 ;;
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

# to SECONDS CMD...: a step under a hard timeout, its output in $OUT
to() {
	t=$1
	shift
	timeout -s KILL "$t" "$@" > $OUT 2>&1
}

mounted() { grep -q " $MNT " /proc/mounts; }

cpus_all=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/$$/status)

# CPUs of the daemon's threads that are pinned (allowed fewer than we are)
pinned_cpus() {
	awk '/^Cpus_allowed_list/ { print $2 }' /proc/$DPID/task/*/status |
		grep -vx "$cpus_all" | sort -n
}

fuse_fds() { ls -l /proc/$DPID/fd 2>/dev/null | grep -c /dev/fuse; }

# The connection's fusectl directory, from the mount's st_dev
conn_dir() {
	dev=$(timeout -s KILL 10 stat -c %d "$MNT") || return 1
	maj=$(((dev >> 8) & 0xfff))
	min=$(((dev & 0xff) | ((dev >> 12) & 0xfff00)))
	echo /sys/fs/fuse/connections/$(((maj << 20) | min))
}

# dev bind cpu node queued dispatched local_cpu local_node remote, sans
# header and shared line ($CQ: set once mounted)
cq_devices() { awk 'NR > 2' "$CQ"; }

# launch plain|preload [VAR=VALUE...]: start the daemon (preload: with
# fuse_clone_bind.so and the given environment), wait for its mount and
# pass a probe file through.  Sets up=1, else $why.
launch() {
	mode=$1
	shift
	rm -rf $W
	mkdir -p $SRC $MNT
	if [ "$mode" = preload ]; then
		env "$@" LD_PRELOAD=$PRELOAD FUSE_CLONE_BIND_DEBUG=1 \
			$T/fuse_pt $SRC $MNT -f -o clone_fd > $LOG 2>&1 &
	else
		$T/fuse_pt $SRC $MNT -f -o clone_fd > $LOG 2>&1 &
	fi
	DPID=$!
	i=0
	while ! mounted && [ $i -lt 300 ] && kill -0 $DPID 2>/dev/null; do
		usleep 100000
		i=$((i + 1))
	done
	up=0
	if ! mounted; then
		note < $LOG
		why="the daemon did not mount within 30 s"
		return 1
	fi
	# A file made through the mount is in the source directory, and the
	# daemon serves through clones: the mount fd and at least one more
	if ! to 30 sh -c "echo probe-$$ > $MNT/probe &&
			 [ \"\$(cat $SRC/probe)\" = probe-$$ ] &&
			 rm $MNT/probe && [ ! -e $SRC/probe ]"; then
		note < $OUT
		why="a probe file did not pass through"
		return 1
	fi
	CQ=$(conn_dir)/clone_queues
	nfd=$(fuse_fds)
	if [ "$nfd" -lt 2 ]; then
		why="$nfd /dev/fuse fds in the daemon: no clone"
		return 1
	fi
	up=1
}

start_daemon() {	# NAME plain|preload
	if launch "$2"; then
		result ok "$1"
	else
		result fail "$1" "$why"
	fi
}

writers() {	# NAME SEED FILES WRITES
	if [ $up = 0 ]; then
		result fail "$1" "not mounted"
		return 1
	fi
	to 300 $T/fuse_pt_writer -S "$2" -f "$3" -n "$4" -s 262144 $MNT $SRC
	rc=$?
	grep -v '^#' $OUT | note
	grep '^#' $OUT
	if [ $rc != 0 ]; then
		result fail "$1" "fuse_pt_writer exited with $rc"
		return 1
	fi
	return 0
}

run_fs_mark() {	# NAME
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
		result fail "$1" "fs_mark exited with $rc"
	elif grep -qiE 'error|fail' $OUT; then
		result fail "$1" "fs_mark reported errors"
	elif [ "$files" != 80 ]; then
		result fail "$1" "$files files in the source directory, expected 80"
	elif ! to 60 rm -rf $MNT/fsm || [ -e $SRC/fsm ]; then
		result fail "$1" "cannot remove the fs_mark files"
	else
		result ok "$1"
	fi
}

run_dbench() {	# NAME
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
	to 90 dbench -D $MNT/db -t 10 -c $LOADFILE 3
	rc=$?
	# dbench 4.00 says it "failed to create barrier semaphore" when
	# semget() returns id 0, the first in a fresh IPC namespace: not ours
	grep -v 'failed to create barrier semaphore' $OUT > $OUT.errs
	grep -iE 'error|fail' $OUT.errs | head -n 20 | note
	tail -n 25 $OUT | note
	if [ $rc != 0 ]; then
		result fail "$1" "dbench exited with $rc"
	elif grep -qiE 'error|fail' $OUT.errs; then
		result fail "$1" "dbench reported errors"
	elif ! grep -q '^Throughput' $OUT; then
		result fail "$1" "dbench printed no throughput"
	elif ! to 60 rm -rf $MNT/db || [ -e $SRC/db ]; then
		result fail "$1" "cannot remove the dbench files"
	else
		result ok "$1"
	fi
}

show_state() {
	echo "daemon threads pinned to: $(pinned_cpus | tr '\n' ' ')"
	echo "/dev/fuse fds in the daemon: $(fuse_fds)"
	[ -f "$CQ" ] && cat "$CQ"
}

# Without the preload: clones exist, none is bound, no reader is pinned
check_unbound() {	# NAME
	if [ $up = 0 ]; then
		result fail "$1" "not mounted"
		return
	fi
	show_state | note
	pinned=$(pinned_cpus | wc -l)
	if [ "$pinned" != 0 ]; then
		result fail "$1" "$pinned daemon threads are pinned"
		return
	fi
	if [ $KIND = ours ]; then
		cq=$(cq_devices) || { result fail "$1" "no clone_queues"; return; }
		ndev=$(echo "$cq" | wc -l)
		nbound=$(echo "$cq" | awk '$2 != "none"' | wc -l)
		if [ "$ndev" -lt 2 ]; then
			result fail "$1" "$ndev devices in clone_queues, expected the mount fd and clones"
			return
		fi
		if [ "$nbound" != 0 ]; then
			result fail "$1" "$nbound devices bound without the preload"
			return
		fi
	fi
	result ok "$1"
}

# With the preload: on ours every clone is bound to a CPU and its reader
# pinned there; on stock the library turned itself off
check_bound() {	# NAME
	if [ $up = 0 ]; then
		result fail "$1" "not mounted"
		return
	fi
	show_state | note
	grep fuse_clone_bind $LOG | tail -n 40 | note
	pinned=$(pinned_cpus | tr '\n' ' ')
	if [ $KIND = stock ]; then
		if [ -n "$pinned" ]; then
			result fail "$1" "threads pinned on stock: $pinned"
		elif grep -q 'bound to' $LOG; then
			result fail "$1" "the library says it bound a clone on stock"
		elif ! grep -q 'FUSE_DEV_IOC_BIND: .*binding off' $LOG; then
			result fail "$1" "the library did not find binding unsupported"
		else
			result ok "$1"
		fi
		return
	fi
	cq=$(cq_devices) || { result fail "$1" "no clone_queues"; return; }
	dev0=$(echo "$cq" | awk '$1 == 0 { print $2 }')
	nclones=$(echo "$cq" | awk '$1 != 0' | wc -l)
	nbound=$(echo "$cq" | awk '$1 != 0 && $2 == "cpu"' | wc -l)
	bound=$(echo "$cq" | awk '$2 == "cpu" { print $3 }' | sort -n | tr '\n' ' ')
	if [ "$dev0" != none ]; then
		result fail "$1" "the mount fd is bound ($dev0)"
	elif [ "$nclones" -lt 1 ] || [ "$nbound" != "$nclones" ]; then
		result fail "$1" "$nbound of $nclones clones bound to a CPU"
	elif [ "$pinned" != "$bound" ]; then
		result fail "$1" "readers pinned to CPUs '$pinned', clones bound to '$bound'"
	else
		echo "# $nclones clones bound to CPUs $bound, one reader pinned to each"
		result ok "$1"
	fi
}

snapshot() { cq_devices | awk '{ print $1, $2, $3, $4, $6, $7, $8, $9 }'; }

# Requests dispatched, from the own CPU, from the node, remote, between two
# snapshots, on bound devices
cq_delta() {
	awk 'NR == FNR { d[$1] = $5; l[$1] = $6; m[$1] = $7; r[$1] = $8; next }
	     $2 != "none" { D += $5 - d[$1]; L += $6 - l[$1];
			    N += $7 - m[$1]; R += $8 - r[$1] }
	     END { print D + 0, L + 0, N + 0, R + 0 }' "$1" "$2"
}

nr_nodes() {
	nn=0
	for f in /sys/devices/system/node/node*/cpulist; do
		[ -n "$(cat "$f" 2>/dev/null)" ] && nn=$((nn + 1))
	done
	[ $nn = 0 ] && nn=1
	echo $nn
}

# Requests issued while the clones are bound: where they were served
check_locality() {	# NAME
	if [ $up = 0 ]; then
		result fail "$1" "not mounted"
		return
	fi
	[ $KIND = ours ] && snapshot > $W.snap1
	writers "$1" 7 1 40 || return
	if [ $KIND = stock ]; then
		result skip "$1" "no clone statistics on stock"
		return
	fi
	snapshot > $W.snap2
	cat $W.snap2 | note
	set -- "$1" $(cq_delta $W.snap1 $W.snap2)
	D=$2 L=$3 N=$4 R=$5
	# What had a clone all along: the CPUs and nodes bound at the start
	ncpu_bound=$(awk '$2 == "cpu" { print $3 }' $W.snap1 | sort -u | wc -l)
	nnode_bound=$(awk '$2 == "cpu" { print $4 }' $W.snap1 | sort -u | wc -l)
	ncpu=$(nproc)
	nnode=$(nr_nodes)
	echo "# while bound: $D requests, $L from the clone's own CPU ($((D ? L * 100 / D : 0)) %), $N from its node, $R remote; clones on $ncpu_bound of $ncpu CPUs, $nnode_bound of $nnode nodes"
	if [ "$D" -le 0 ]; then
		result fail "$1" "no request reached a bound clone"
	elif [ "$ncpu_bound" -ge "$ncpu" ] && [ "$L" != "$D" ]; then
		result fail "$1" "every CPU has a clone, yet only $L of $D requests were served on their own CPU"
	elif [ "$nnode_bound" -ge "$nnode" ] && [ "$R" != 0 ]; then
		result fail "$1" "every node has a clone, yet $R requests went to another node"
	elif [ "$L" -le 0 ]; then
		result fail "$1" "no request was served on its own CPU"
	else
		result ok "$1"
	fi
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
	grep -v fuse_clone_bind $LOG | note
	DPID=
	up=0
	if mounted; then
		why="${why:+$why; }still mounted"
	fi
	[ -z "$why" ]
}

stop_daemon() {	# NAME
	if halt; then
		result ok "$1"
	else
		result fail "$1" "$why"
	fi
}

# FUSE_CLONE_BIND=node: on ours every clone is bound to a node and its
# reader allowed that node's CPUs, and no request leaves its node once
# every node has a clone; on stock the library is off
check_node_mode() {	# NAME
	if ! launch preload FUSE_CLONE_BIND=node; then
		result fail "$1" "$why"
		halt
		return
	fi
	# The workers and their clones come as the load needs them: count
	# where requests go once the first round of writers made them
	if ! writers "$1" 3 1 20; then
		halt
		return
	fi
	[ $KIND = ours ] && snapshot > $W.snap1
	if ! writers "$1" 4 1 20; then
		halt
		return
	fi
	show_state | note
	grep fuse_clone_bind $LOG | tail -n 20 | note
	pinned=$(pinned_cpus | tr '\n' ' ')
	why=
	if [ $KIND = stock ]; then
		[ -n "$pinned" ] && why="threads pinned on stock: $pinned"
	else
		snapshot > $W.snap2
		nclones=$(awk '$1 != 0' $W.snap2 | wc -l)
		nbound=$(awk '$1 != 0 && $2 == "node"' $W.snap2 | wc -l)
		want=$(awk '$2 == "node" { print $4 }' $W.snap2 | while read -r nd; do
			cat /sys/devices/system/node/node$nd/cpulist
		done | sort -n | tr '\n' ' ')
		set -- "$1" $(cq_delta $W.snap1 $W.snap2)
		D=$2 R=$5
		nnode_bound=$(awk '$2 == "node" { print $4 }' $W.snap1 | sort -u | wc -l)
		echo "# node bindings: $nbound of $nclones clones, readers allowed CPUs '$pinned'; $D requests, $R remote"
		if [ "$nclones" -lt 1 ] || [ "$nbound" != "$nclones" ]; then
			why="$nbound of $nclones clones bound to a node"
		elif [ "$pinned" != "$want" ]; then
			why="readers allowed CPUs '$pinned', their nodes have '$want'"
		elif [ "$D" -le 0 ]; then
			why="no request reached a bound clone"
		elif [ "$nnode_bound" -ge "$(nr_nodes)" ] && [ "$R" != 0 ]; then
			why="every node has a clone, yet $R requests went to another node"
		fi
	fi
	w=$why
	halt || w="${w:+$w; }$why"
	if [ -n "$w" ]; then
		result fail "$1" "$w"
	else
		result ok "$1"
	fi
}

cleanup() {
	mounted && timeout -s KILL 10 umount -l $MNT
	[ -n "$DPID" ] && kill -9 $DPID 2>/dev/null
}
trap cleanup EXIT

echo "# fuse.ko: $KIND; $(nproc) CPUs; source directory on tmpfs"

# 1-6: the daemon as it is
start_daemon mount_plain plain
writers writers_plain 1 1 100 && result ok writers_plain
run_fs_mark fs_mark_plain
run_dbench dbench_plain
check_unbound clones_unbound_plain
stop_daemon unmount_plain

# 7-13: with fuse_clone_bind.so preloaded (FUSE_CLONE_BIND=cpu)
start_daemon mount_preload preload
writers writers_preload 2 1 100 && result ok writers_preload
run_fs_mark fs_mark_preload
run_dbench dbench_preload
check_bound clones_bound_preload
check_locality own_cpu_preload
stop_daemon unmount_preload

# 14: with FUSE_CLONE_BIND=node
check_node_mode node_mode_preload

# 15: nothing left behind
left=$(grep -c " $W" /proc/mounts)
if [ "$left" != 0 ] || pidof fuse_pt > /dev/null; then
	grep " $W" /proc/mounts | note
	result fail nothing_left "mounts or daemons left behind"
else
	result ok nothing_left
fi

echo "# $nfail of $NTESTS failed in $(($(date +%s) - start)) s"
[ $nfail = 0 ] || exit 1
exit 0
