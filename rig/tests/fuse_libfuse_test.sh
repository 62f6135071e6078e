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
#           there, every request served on the CPU that issued it
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
DQ=
up=0
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

# The connection's fusectl directory, from the mount's st_dev
conn_dir() {
	dev=$(timeout -s KILL 10 stat -c %d "$MNT") || return 1
	maj=$(((dev >> 8) & 0xfff))
	min=$(((dev & 0xff) | ((dev >> 12) & 0xfff00)))
	echo /sys/fs/fuse/connections/$(((maj << 20) | min))
}

# dev bind cpu node queued read local_cpu local_node remote, sans header
# and shared line ($DQ: set once mounted)
dq_devices() { awk 'NR > 2' "$DQ"; }

# Routing-table rebuilds of the connection, from the shared line
dq_rebuilds() {
	awk '$1 == "shared" { for (i = 2; i < NF; i++) if ($i == "rebuilds") print $(i + 1) }' "$DQ"
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
	DQ=$(conn_dir)/dev_queues
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
	echo "/dev/fuse fds in the daemon: $(fuse_fds); threads: $(ls /proc/$DPID/task 2>/dev/null | wc -l)"
	readers | sort | uniq -c
	[ $KIND = ours ] && [ -f "$DQ" ] && cat "$DQ"
}

# check_clones NAME cpu|node: on ours, the mount fd unbound and one clone
# bound per CPU (node) the daemon may use, no other device, and every
# reader named for its place and pinned there.  On stock: the fallback was
# logged once, nothing is pinned, and the daemon serves through clones.
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
	dq=$(dq_devices)
	if [ "$2" = cpu ]; then
		want=$(daemon_cpus | tr '\n' ' ')
		col=3
	else
		want=$(daemon_nodes | tr '\n' ' ')
		col=4
	fi
	dev0=$(echo "$dq" | awk '$1 == 0 { print $2 }')
	nclones=$(echo "$dq" | awk '$1 != 0' | wc -l)
	got=$(echo "$dq" | awk -v b="$2" -v c=$col '$1 != 0 && $2 == b { print $c }' |
		sort -n | tr '\n' ' ')
	nwant=$(echo $want | wc -w)
	if [ -z "$why" ] && [ "$dev0" != none ]; then
		why="the mount fd is bound ($dev0)"
	elif [ -z "$why" ] && [ "$nclones" != "$nwant" ]; then
		why="$nclones clones, expected $nwant (one per $2: $want)"
	elif [ -z "$why" ] && [ "$got" != "$want" ]; then
		why="clones bound to $2s '$got', expected '$want'"
	fi
	[ -z "$why" ] && check_readers "$2" "$want"
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

snapshot() { dq_devices | awk '{ print $1, $2, $3, $4, $6, $7, $8, $9, $10 + $11 }'; }

# Requests read by bound devices, from their own CPU, from their node,
# remote, and taken over from a busy device, between two snapshots
dq_delta() {
	awk 'NR == FNR { d[$1] = $5; l[$1] = $6; m[$1] = $7; r[$1] = $8; t[$1] = $9; next }
	     $2 != "none" { D += $5 - d[$1]; L += $6 - l[$1];
			    N += $7 - m[$1]; R += $8 - r[$1]; T += $9 - t[$1] }
	     END { print D + 0, L + 0, N + 0, R + 0, T + 0 }' "$1" "$2"
}

# Routing is work-conserving: a request whose clone is busy may be read by
# an idle reader elsewhere (same node first).  So the checks ask for most
# requests where they were issued, not all: MOST % on their own CPU with
# a clone on every CPU, NODE_MOST % on their own node with one on every
# node.
MOST=75
NODE_MOST=90

# check_io NAME SEED WRITES cpu|node|none: data-checking writers, and on
# ours where the requests they made were served: with a clone on every
# CPU (cpu) most on their own CPU, with a clone on every node (node) most
# on their own node; none: nothing is bound, only the data counts
check_io() {
	[ $KIND = ours ] && [ $up = 1 ] && snapshot > $W.snap1
	if ! writers "$1" "$2" "$3"; then
		verdict "$1"
		return
	fi
	if [ $KIND = stock ] || [ "$4" = none ]; then
		verdict "$1"
		return
	fi
	snapshot > $W.snap2
	set -- "$1" "$4" $(dq_delta $W.snap1 $W.snap2)
	D=$3 L=$4 N=$5 R=$6 TK=$7
	echo "# $D requests, $L from the clone's own CPU ($((D ? L * 100 / D : 0)) %), $N from its node, $R remote; $TK taken over from a busy clone"
	if [ "$D" -le 0 ]; then
		why="no request reached a bound clone"
	elif [ "$2" = cpu ] && [ $((L * 100)) -lt $((D * MOST)) ]; then
		why="a clone on every CPU, yet only $L of $D requests were served on their own CPU"
	elif [ $(((L + N) * 100)) -lt $((D * NODE_MOST)) ]; then
		why="a clone on every node, yet only $((L + N)) of $D requests were served on their own node"
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
# connection has the same devices as before (dev_queues numbers devices
# in the order they were attached: a clone closed and made anew would show
# as a new number) and no routing-table rebuild, the daemon the same number
# of /dev/fuse fds, and every reader, extra ones included, runs where its
# clone is bound
idle_bursts() {
	why=
	if [ $up = 0 ]; then
		result fail "$1" "not mounted"
		return
	fi
	devs0=$(dq_devices 2>/dev/null | awk '{ print $1 ":" $2 ":" $3 }' | tr '\n' ' ')
	rb0=$(dq_rebuilds 2>/dev/null)
	fds0=$(fuse_fds)
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
		devs=$(dq_devices | awk '{ print $1 ":" $2 ":" $3 }' | tr '\n' ' ')
		fds=$(fuse_fds)
		rb=$(dq_rebuilds)
		if [ -z "$why" ] && [ "$devs" != "$devs0" ]; then
			why="after burst $round the devices are '$devs', before '$devs0'"
		elif [ -z "$why" ] && [ "$fds" != "$fds0" ]; then
			why="after burst $round the daemon has $fds /dev/fuse fds, before $fds0"
		elif [ -z "$why" ] && [ "$rb" != "$rb0" ]; then
			why="after burst $round the routing table was rebuilt $rb times, before $rb0"
		fi
	done
	show_state | note
	echo "# at most $maxthreads threads in the daemon during the bursts; /dev/fuse fds $fds0 -> $(fuse_fds); routing-table rebuilds ${rb0:--} -> $(dq_rebuilds 2>/dev/null)"
	verdict "$1"
}

cleanup() {
	mounted && timeout -s KILL 10 umount -l $MNT
	[ -n "$DPID" ] && kill -9 $DPID 2>/dev/null
	[ -w $CPU3 ] && [ "$(cat $CPU3)" = 0 ] && echo 1 > $CPU3
}
trap cleanup EXIT

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
	elif [ $KIND = ours ] && dq_devices | awk '$2 != "none"' | grep -q .; then
		why="devices bound without clone_bind"
	elif grep -q "$FALLBACK" $LOG; then
		why="clone_bind messages without clone_bind"
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
	elif [ $KIND = ours ] && dq_devices | awk '$2 != "none"' | grep -q .; then
		why="devices bound by a loop that ignores clone_bind"
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
