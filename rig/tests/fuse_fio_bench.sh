#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fio against libfuse's example passthrough daemons over tmpfs, for make
# bench (rig/fio-bench.sh): 4 KiB random reads with direct=1, numjobs 1..N
# (one job pinned per CPU) x iodepth 1, 4, 8, then a metadata run (fio's
# filecreate, filestat and filedelete engines).  One mode per call:
#
#   nofuse    fio on the tmpfs directory itself: the ceiling
#   ll-stock  Debian's libfuse unpatched, passthrough_ll -o clone_fd
#             (stock fuse.ko loaded)
#   ll-ours   our libfuse, passthrough_ll -o clone_bind=cpu (ours loaded)
#   ll-unbound  our libfuse, passthrough_ll -o clone_fd on ours, unbound:
#             where readers that are not pinned read (own-CPU-%)
#   hp-stock  passthrough_hp --clone-fd (our build: passthrough_hp of
#             libfuse 3.14 cannot turn clone_fd on; without clone_bind our
#             libfuse runs the clone_fd loop unchanged) on stock fuse.ko
#   hp-ours   passthrough_hp -o clone_bind=cpu on ours
#   hp-node   passthrough_hp -o clone_bind=node on ours
#   hp-uring  libfuse's own passthrough_hp -o io_uring on stock fuse.ko,
#             enable_uring set for the run (libfuse 3.18 and Linux 6.14 on)
#   ll-uring  the same with libfuse's own passthrough_ll
#   ll-node   our libfuse, passthrough_ll -o clone_bind=node on ours
#
# Environment: FIO_ENGINES, the engines of the random reads ("libaio";
# psync runs at iodepth 1 alone), FIO_SEQ=1 adds sequential buffered
# reads (128 KiB read()s of each job's 32 MiB file once, its page cache
# dropped first: readahead at work), one job and one per CPU.
# FIO_META=0: no metadata run.  FIO_CYCLE=1: after each timed random-read
# run, an untimed 1 s twin under fuse_cycle.sh, which prints where its
# READs' time went ("@cycle MODE-WORKLOAD-jJOBS-dDEPTH ...").
#
# The random reads run against the daemons as they come; the metadata run
# against the same daemons without attribute and entry caching
# (passthrough_ll -o timeout=0, passthrough_hp --nocache), so that every
# stat() reaches them.
#
# usage: fuse_fio_bench.sh MODE [RUNTIME [JOBS [DEPTHS [METAJOBS]]]]
#   RUNTIME seconds per fio run (3), JOBS e.g. "1 2 3 4" (1..nproc),
#   DEPTHS e.g. "1 4 8", METAJOBS the jobs of the metadata run ("1 nproc");
#   an empty argument takes the default
# Prints one line per fio run:
#   @fio MODE WORKLOAD JOBS DEPTH MiB/s IOPS p99-us own-CPU-% IPIs/op
# (WORKLOAD: randread for libaio, randread-ENGINE for the others, seqread,
# create, stat, unlink)
# (own-CPU-%: the share of the connection's requests read on the CPU that
# issued them, counted by a hist trigger on the tracepoint
# fuse:fuse_request_read, which ours has and stock does not: "-" on stock.
# The trigger costs ours 3 to 5 % of a request on the instruction clock,
# so it is never attached while a run is timed: in the ours modes the
# reads (1 s each where time-based) and the metadata run run once more,
# untimed, with the trigger attached, and each line carries the share its
# traced twin found.  FIO_TRACE=0: no such runs, and "-".)
# Every step runs under a timeout; exit status 1 if a daemon or a fio run
# failed.

T=$(cd "$(dirname "$0")" && pwd)
PATH=$PATH:/usr/bin:/usr/sbin
MODE=$1
RT=${2:-3}
NCPU=$(nproc)
JOBS=${3:-$(seq 1 $NCPU)}
DEPTHS=${4:-1 4 8}
METAJOBS=${5:-1 $NCPU}
W=/tmp/fiob
SRC=$W/src
MNT=$W/mnt
LOG=/tmp/fiob-daemon.log
OUT=/tmp/fiob.out
FILESIZE=16m
NMETA=200	# files per job in the metadata run
DPID=
CONN=
EV=
HIST='hist:keys=connection,cpu,read_cpu:vals=hitcount,own'
ENGINES=${FIO_ENGINES:-libaio}
URING=/sys/module/fuse/parameters/enable_uring
LF_OURS= LF_STOCK= FIO=
[ -f $T/libfuse.conf ] && . $T/libfuse.conf
[ -x "$FIO" ] || FIO=$(command -v fio)
failed=0

say() { echo "# $*"; }

mounted() { grep -q " $MNT " /proc/mounts; }

# The mount's connection number (its fusectl directory's name, and the
# tracepoint's "connection"), from its st_dev
conn_id() {
	dev=$(timeout -s KILL 10 stat -c %d "$MNT") || return 1
	maj=$(((dev >> 8) & 0xfff))
	min=$(((dev & 0xff) | ((dev >> 12) & 0xfff00)))
	echo $(((maj << 20) | min))
}

# Attach the hist trigger to fuse:fuse_request_read, mounting tracefs if
# nothing is there yet; $EV stays empty where there is no such tracepoint.
# A fresh trigger each time: its counts start at 0
trace_on() {
	t=/sys/kernel/tracing
	[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null
	EV=$t/events/fuse/fuse_request_read
	if [ ! -d $EV ]; then
		EV=
		return
	fi
	# a trigger left by an earlier run would refuse the same one again
	echo "!$HIST" > $EV/trigger 2>/dev/null
	echo "$HIST" > $EV/trigger || EV=
}

trace_off() {
	[ -n "$EV" ] && echo "!$HIST" > $EV/trigger 2>/dev/null
	EV=
}

# The connection's requests so far, and those read on their issuing CPU.
# A hist entry: "{ connection: C, cpu: N, read_cpu: M } hitcount: K  own: O"
cq_sum() {
	if [ -n "$EV" ] && [ -n "$CONN" ]; then
		awk -v c="$CONN" '{ gsub(/[{},]/, " ") }
			$1 == "connection:" && $2 == c { d += $8; if ($4 == $6) l += $8 }
			END { print d + 0, l + 0 }' $EV/hist
	else
		echo "0 0"
	fi
}

# Function-call and rescheduling IPIs, all CPUs
ipis() {
	awk '$1 == "CAL:" || $1 == "RES:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i }
	     END { print s + 0 }' /proc/interrupts
}

start() {	# CMD...
	mkdir -p $SRC $MNT
	"$@" > $LOG 2>&1 &
	DPID=$!
	i=0
	while ! mounted && [ $i -lt 300 ] && kill -0 $DPID 2>/dev/null; do
		usleep 100000
		i=$((i + 1))
	done
	if ! mounted; then
		sed 's/^/# /' $LOG
		say "$MODE: the daemon did not mount"
		exit 1
	fi
	CONN=$(conn_id)
}

stop() {
	[ -n "$DPID" ] || return 0
	timeout -s KILL 30 umount $MNT || timeout -s KILL 10 umount -l $MNT
	i=0
	while kill -0 $DPID 2>/dev/null && [ $i -lt 100 ]; do
		usleep 100000
		i=$((i + 1))
	done
	kill -9 $DPID 2>/dev/null
	wait $DPID
	grep -v 'Ignoring invalid max threads' $LOG | sed 's/^/# /'
	DPID=
	case $MODE in *-uring) echo 0 > $URING ;; esac
}
trap 'stop; trace_off' EXIT

# fio_run WORKLOAD JOBS DEPTH FIO-ARGS...: one fio run.  PASS=timed: timed,
# without the trigger; its line waits for owned().  PASS=own: the same
# run once more, untimed (1 s where it is time-based), with the trigger
# attached, for the share of requests read on their issuing CPU
fio_run() {
	wl=$1 j=$2 d=$3
	shift 3
	set -- "$@" --numjobs=$j --iodepth=$d --group_reporting \
		--cpus_allowed=0-$((NCPU - 1)) --cpus_allowed_policy=split \
		--output-format=terse --terse-version=3
	if [ "$PASS" = own ]; then
		c0=$(cq_sum)
		case " $* " in *" --time_based "*) set -- "$@" --runtime=1 ;; esac
		timeout -s KILL $((RT * 4 + 120)) $FIO "$@" > $OUT 2>&1 ||
			{ say "fio $wl $j $d failed (traced)"; failed=1; }
		echo "$c0 $(cq_sum)" | awk '{ d = $3 - $1; l = $4 - $2
			print (d > 0 ? sprintf("%.1f", l * 100 / d) : "-") }' \
			> $W/own.$wl.$j.$d
		return 0
	fi
	KEYS="$KEYS $wl:$j:$d"
	rm -f $W/own.$wl.$j.$d $W/timed.$wl.$j.$d
	i0=$(ipis)
	if ! timeout -s KILL $((RT * 4 + 120)) $FIO "$@" > $OUT 2>&1; then
		sed 's/^/# /' $OUT | tail -n 20
		say "fio $wl $j $d failed"
		failed=1
		return
	fi
	echo "$i0 $(ipis) $(grep '^3;' $OUT | tail -n 1)" > $W/timed.$wl.$j.$d
	case "${FIO_CYCLE:-0}:$wl" in
	1:randread*)
		# the timeout inside: fuse_cycle.sh must live to turn tracing off
		$T/fuse_cycle.sh $MODE-$wl-j$j-d$d timeout -s KILL $((RT * 4 + 120)) \
			$FIO "$@" --runtime=1 2>&1 | grep '^@cycle\|^# ' ;;
	esac
}

# passes FUNCTION: its fio runs timed, then (TRACED) once more with the
# trigger attached, once for them all (attaching it patches kernel text,
# which multi-threaded TCG has been seen to trip over), then their lines
passes() {
	KEYS= PASS=timed
	"$1"
	if [ -n "$TRACED" ]; then
		trace_on
		PASS=own
		[ -z "$EV" ] || "$1"
		trace_off
	fi
	PASS=
	for k in $KEYS; do
		owned $(echo $k | tr : ' ')
	done
}

# owned WORKLOAD JOBS DEPTH: the @fio line of a timed run, with the share
# of its traced run.  terse v3: 6 read KiB, 7 read KiB/s, 8 read IOPS,
# 9 runtime ms, 18-37 completion latency percentiles (us) as "P%=V"; a job
# that only writes or creates has its numbers in the write fields (47-...)
owned() {
	own=-
	[ -s $W/timed.$1.$2.$3 ] || return 0
	[ -s $W/own.$1.$2.$3 ] && own=$(cat $W/own.$1.$2.$3)
	cut -d' ' -f3- $W/timed.$1.$2.$3 | awk -F';' -v mode=$MODE -v wl=$1 \
		-v j=$2 -v d=$3 -v own="$own" -v ipis="$(cut -d' ' -f1-2 $W/timed.$1.$2.$3)" '
	function p99(base,   k, kv) {
		for (k = base; k < base + 20; k++) {
			split($k, kv, "=")
			if (kv[1] == "99.000000%") return kv[2]
		}
		return "-"
	}
	{
		bw = $7; iops = $8; ms = $9; p = p99(18)
		if (iops == 0) { bw = $48; iops = $49; ms = $50; p = p99(59) }
		split(ipis, i, " ")
		ops = iops * ms / 1000
		printf "@fio %s %s %d %d %.1f %.0f %s %s %.2f\n", mode, wl, j, d,
			bw / 1024, iops, p, own, (ops > 0 ? (i[2] - i[1]) / ops : 0)
	}'
}

# up cache|nocache: the daemon of $MODE, with the example's own caching or
# with none; sets $DIR, where fio works.  passthrough_hp of libfuse 3.16
# and later passes reads and writes to the backing file in the kernel
# (FUSE_PASSTHROUGH) unless told not to: they would never reach the
# daemon, nor the transport measured here.
up() {
	ll= hp=
	! $LF_OURS/example/passthrough_hp --help 2>&1 | grep -q nopassthrough ||
		hp=--nopassthrough
	if [ $1 = nocache ]; then
		ll=,timeout=0
		hp="$hp --nocache"
	fi
	case "$MODE" in
	nofuse)
		DIR=$SRC ;;
	ll-stock)
		DIR=$MNT
		start $LF_STOCK/example/passthrough_ll -f -o source=$SRC$ll,clone_fd $MNT ;;
	ll-ours)
		DIR=$MNT
		start $LF_OURS/example/passthrough_ll -f -o source=$SRC$ll,clone_bind=cpu $MNT ;;
	ll-unbound)
		DIR=$MNT
		start $LF_OURS/example/passthrough_ll -f -o source=$SRC$ll,clone_fd $MNT ;;
	hp-stock)
		DIR=$MNT
		start $LF_OURS/example/passthrough_hp --foreground $hp --clone-fd $SRC $MNT ;;
	hp-ours)
		DIR=$MNT
		start $LF_OURS/example/passthrough_hp --foreground $hp -o clone_bind=cpu $SRC $MNT ;;
	hp-node)
		DIR=$MNT
		start $LF_OURS/example/passthrough_hp --foreground $hp -o clone_bind=node $SRC $MNT ;;
	hp-uring)
		DIR=$MNT
		echo 1 > $URING || { say "no enable_uring here"; exit 1; }
		start $LF_STOCK/example/passthrough_hp --foreground $hp -o io_uring $SRC $MNT ;;
	ll-uring)
		DIR=$MNT
		echo 1 > $URING || { say "no enable_uring here"; exit 1; }
		start $LF_STOCK/example/passthrough_ll -f -o source=$SRC$ll,io_uring $MNT ;;
	ll-node)
		DIR=$MNT
		start $LF_OURS/example/passthrough_ll -f -o source=$SRC$ll,clone_bind=node $MNT ;;
	esac
}

case "$MODE" in
nofuse|ll-stock|ll-ours|ll-unbound|ll-node|ll-uring|hp-stock|hp-ours|hp-node|hp-uring) ;;
*)
	echo "usage: $0 nofuse|ll-stock|ll-ours|ll-unbound|ll-node|ll-uring|hp-stock|hp-ours|hp-node|hp-uring [RUNTIME [JOBS [DEPTHS [METAJOBS]]]]" >&2
	exit 2 ;;
esac
mkdir -p $SRC
[ -n "$FIO" ] || { say "no fio in the guest"; exit 1; }
TRACED= PASS=
case "$MODE" in
*-ours|*-node|*-unbound)
	t=/sys/kernel/tracing
	[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null
	if [ "${FIO_TRACE:-1}" = 0 ]; then
		:
	elif [ -d $t/events/fuse/fuse_request_read ]; then
		TRACED=1
	else
		say "no fuse:fuse_request_read to count with: own-CPU-% is -"
	fi ;;
esac
say "$MODE: $NCPU CPUs, fio $($FIO --version), runtime $RT s, jobs $(echo $JOBS), depths $DEPTHS, engines $ENGINES"

# Random reads, the daemon as it comes.  Lay the files out once, for the
# most jobs, through the mount.
up cache
maxj=$(echo $JOBS | tr ' ' '\n' | sort -n | tail -n 1)
RR="--name=rr --directory=$DIR --filename_format=f.\$jobnum --size=$FILESIZE --bs=4k"
timeout -s KILL 300 $FIO $RR --rw=write --numjobs=$maxj --create_only=1 > $OUT 2>&1 ||
	{ sed 's/^/# /' $OUT; say "laying out the files failed"; exit 1; }
reads() {
	for e in $ENGINES; do
		wl=randread
		[ $e = libaio ] || wl=randread-$e
		for j in $JOBS; do
			for d in $DEPTHS; do
				[ $e != psync ] || [ $d = 1 ] || continue
				fio_run $wl $j $d $RR --rw=randread --direct=1 \
					--ioengine=$e --time_based --runtime=$RT
			done
		done
	done
	# Sequential buffered reads: each job reads its file once in 128 KiB
	# read()s, the page cache dropped first, so that readahead does the
	# work
	[ "${FIO_SEQ:-0}" = 1 ] || return 0
	for j in 1 $NCPU; do
		fio_run seqread $j 1 --name=sr --directory=$DIR \
			--filename_format=s.\$jobnum --size=32m --bs=128k \
			--rw=read --ioengine=psync --invalidate=1
	done
}
passes reads
rm -f $DIR/f.* $DIR/s.*
stop

# Metadata: create, stat and unlink NMETA files per job, one job, then
# one per CPU (METAJOBS), with a daemon that caches no attributes or
# entries, so that every stat() reaches it.  filecreate leaves empty
# files, which the filestat engine would first lay out to their size: an
# untimed write pass does it.
metas() {
	for j in $METAJOBS; do
		rm -rf $DIR/meta
		mkdir -p $DIR/meta
		MD="--name=md --directory=$DIR/meta --filename_format=m.\$jobnum.\$filenum --nrfiles=$NMETA --filesize=4k --openfiles=1"
		fio_run create $j 1 $MD --ioengine=filecreate --rw=write
		timeout -s KILL 300 $FIO $MD --rw=write --numjobs=$j > $OUT 2>&1 ||
			{ sed 's/^/# /' $OUT; say "filling the files failed"; failed=1; }
		fio_run stat $j 1 $MD --ioengine=filestat --rw=read
		fio_run unlink $j 1 $MD --ioengine=filedelete --rw=read
	done
}
if [ "${FIO_META:-1}" = 0 ]; then
	say "$MODE: done"
	exit $failed
fi
up nocache
passes metas
rm -rf $DIR/meta
stop
say "$MODE: done"
exit $failed
