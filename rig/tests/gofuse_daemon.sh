#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest: an unchanged go-fuse daemon on the patched go-fuse, mounted
# (through fusermount3) with GOFUSE_CLONE_BIND=MODE ("off": unset) and
# GOFUSE_CLONE_STATS=1: DAEMON "gocryptfs", Debian's gocryptfs source
# built on it (/gofuse/bin/gocryptfs, make stress FLAVOR=gofuse), or
# "loopback", go-fuse's loopback filesystem (gofuse_loopback, make
# check).  A checksum workload from writers pinned to every CPU
# (taskset): each writes files (MIB MiB, and 40 small ones) whose sha256
# it knows, then every file is read back and checked from another CPU,
# and once more after a remount (what is on disk decrypts; the loopback's
# original directory holds the same bytes).  Then where the requests went:
#   bound     (ours) go-fuse logged one bound clone per node (MODE node)
#             or per CPU (MODE cpu), each served requests, nothing fell
#             back; the tracepoint fuse:fuse_request_read (a hist
#             trigger keyed by issuing and reading CPU) shows every bound
#             clone reading requests from its own queue, and the share of
#             requests read on the node (and CPU) that issued them
#   plain     (ours, MODE off) go-fuse said nothing of clones, and the
#             tracepoint shows no request read from a device's own queue
#   fallback  (stock fuse.ko) one line: FUSE_DEV_IOC_BIND is not there,
#             and the mount fd served every request
# TAP on stdout.
# usage: gofuse_daemon.sh gocryptfs|loopback MODE bound|plain|fallback [MIB]
daemon=$1 mode=$2 expect=$3 mib=${4:-4}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/tests
case "$daemon" in
gocryptfs) G=/gofuse/bin/gocryptfs ;;
loopback) G=$(command -v gofuse_loopback || echo /gofuse/bin/gofuse_loopback) ;;
*) echo "usage: gofuse_daemon.sh gocryptfs|loopback MODE bound|plain|fallback [MIB]" >&2; exit 2 ;;
esac
w=/tmp/gd-$daemon-$mode
n=0 bad=0
tap() {	# RC DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; bad=1; fi
}
ncpu=$(nproc)
tests=8
case "$expect" in bound) tests=$((tests + 6)) ;; plain) tests=$((tests + 2)) ;;
		  fallback) tests=$((tests + 3)) ;; esac
echo "1..$tests"
rm -rf "$w"
mkdir -p "$w/cipher" "$w/plain" "$w/src"

# The node of each CPU, from sysfs (the guest's topology)
declare -A node_of
for nd in /sys/devices/system/node/node[0-9]*; do
	nn=${nd##*node}
	IFS=, read -ra parts < "$nd/cpulist"
	for p in "${parts[@]}"; do
		[ -n "$p" ] || continue
		for ((c = ${p%-*}; c <= ${p#*-}; c++)); do node_of[$c]=$nn; done
	done
done
nodes_with_cpus=$(printf '%s\n' "${node_of[@]}" | sort -u | wc -l)

# The tracepoint (ours): every request read, by issuing and reading CPU
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
EV=$T/events/fuse/fuse_request_read
HIST='hist:keys=cpu,read_cpu:vals=hitcount,own'
have_tp=0
[ -d $EV ] && have_tp=1

if [ "$daemon" = gocryptfs ]; then
	$G -init -q -extpass "echo gofuse-check" -scryptn 10 "$w/cipher" > "$w/init.log" 2>&1
	tap $? "gocryptfs -init"
fi

mnt() {	# LOG
	local env=(GOFUSE_CLONE_STATS=1)
	[ "$mode" = off ] || env+=(GOFUSE_CLONE_BIND=$mode)
	if [ "$daemon" = gocryptfs ]; then
		env "${env[@]}" $G -fg -q -extpass "echo gofuse-check" \
			"$w/cipher" "$w/plain" > "$1" 2>&1 &
	else
		env "${env[@]}" $G "$w/cipher" "$w/plain" > "$1" 2>&1 &
	fi
	gpid=$!
	for _ in $(seq 150); do
		grep -q " $w/plain fuse" /proc/mounts && return 0
		sleep 0.2
	done
	return 1
}
umnt() {
	fusermount3 -u "$w/plain" || umount "$w/plain"
	timeout 60 tail --pid=$gpid -f /dev/null
	wait $gpid
}
[ $have_tp = 0 ] || echo "$HIST" > $EV/trigger
mnt "$w/mount1.log"
tap $? "$daemon mounts with GOFUSE_CLONE_BIND=${mode/off/unset}"

# the data, and its checksums, outside the mount
for ((c = 0; c < ncpu; c++)); do
	head -c $((mib << 20)) /dev/urandom > "$w/src/big$c"
	for ((i = 0; i < 40; i++)); do
		head -c $((RANDOM * 3 + i)) /dev/urandom > "$w/src/s$c-$i"
	done
done
(cd "$w/src" && sha256sum -- *) > "$w/sums"

# writers, one pinned to each CPU: big files through dd, small ones by cp
t0=$(date +%s)
pids=()
for ((c = 0; c < ncpu; c++)); do
	taskset -c $c sh -c "dd if=$w/src/big$c of=$w/plain/big$c bs=128k conv=fsync status=none &&
		mkdir $w/plain/d$c && for i in \$(seq 0 39); do cp $w/src/s$c-\$i $w/plain/d$c/ || exit 1; done" &
	pids+=($!)
done
r=0
for p in "${pids[@]}"; do wait "$p" || r=1; done
tap $r "$ncpu pinned writers wrote $((ncpu * mib)) MiB and $((ncpu * 40)) small files ($(($(date +%s) - t0)) s)"

# read back from the next CPU, past the page cache
verify() {	# WHAT
	local c r=0 pids=()
	echo 3 > /proc/sys/vm/drop_caches
	for ((c = 0; c < ncpu; c++)); do
		taskset -c $(((c + 1) % ncpu)) sh -c "cd $w/plain && sha256sum big$c d$c/*" > "$w/got$c" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || r=1; done
	cat "$w"/got* | sed 's|d[0-9]*/||' | sort -k2 > "$w/got"
	sort -k2 "$w/sums" | diff - "$w/got" > "$w/diff" || r=1
	tap $r "every byte read back as written: $(wc -l < "$w/sums") files, $1"
	[ $r = 0 ] || head -n 5 "$w/diff" | sed 's/^/#   /'
	rm -f "$w"/got*
}
verify "pinned readers on other CPUs"
[ $have_tp = 0 ] || { cat $EV/hist > "$w/hist"; echo "!$HIST" > $EV/trigger; }
umnt
tap $? "$daemon exits at unmount"
mnt "$w/mount2.log"
tap $? "$daemon mounts again"
verify "after a remount"
umnt
tap $? "$daemon exits at unmount again"
if [ "$daemon" = loopback ]; then
	(cd "$w/cipher" && sha256sum big* d*/*) | sed 's|d[0-9]*/||' | sort -k2 > "$w/orig"
	sort -k2 "$w/sums" | cmp -s - "$w/orig"
	tap $? "the original directory holds every byte as written"
fi

# What go-fuse said of the clones (the first mount's log)
grep 'go-fuse' "$w/mount1.log" | sed 's/^/# /'
clone_lines=$(grep -c 'go-fuse: CloneBind "[a-z]*": [0-9]* clones' "$w/mount1.log")
fallbacks=$(grep -c 'serving the mount fd alone' "$w/mount1.log")

# The tracepoint's counts: per (issuing CPU, reading CPU), requests and
# those read from the reader's device's own queue
total=0 own=0 onnode=0 oncpu=0
declare -A own_on
pct() { awk -v a="$1" -v t="$total" 'BEGIN { printf "%.1f", t ? 100 * a / t : 0 }'; }
if [ -f "$w/hist" ]; then
	sed -n 's/^{ cpu: *\([0-9]*\), read_cpu: *\([0-9]*\) } hitcount: *\([0-9]*\) *own: *\([0-9]*\).*/\1 \2 \3 \4/p' \
		"$w/hist" > "$w/counts"
	while read -r c rc hits o; do
		total=$((total + hits))
		own=$((own + o))
		[ "${node_of[$c]}" != "${node_of[$rc]}" ] || onnode=$((onnode + hits))
		[ "$c" != "$rc" ] || oncpu=$((oncpu + hits))
		if [ "$mode" = cpu ]; then k=$rc; else k=${node_of[$rc]}; fi
		own_on[$k]=$((${own_on[$k]:-0} + o))
	done < "$w/counts"
	echo "# fuse:fuse_request_read: $total requests; $own from a device's own queue;" \
		"$onnode ($(pct $onnode) %) read on the issuing node, $oncpu ($(pct $oncpu) %) on the issuing CPU"
	for k in "${!own_on[@]}"; do
		echo "#   read by readers on ${mode/off/node} $k: ${own_on[$k]} from their own queue"
	done
fi

case "$expect" in
bound)
	case "$mode" in
	node) want=$nodes_with_cpus what="node" ;;
	*) want=$ncpu what="CPU" ;;
	esac
	got=$(grep -c "clone stats: clone [0-9]* (bound to $what " "$w/mount1.log")
	tap $([ "$clone_lines" = 1 ] && [ "$got" = "$want" ]; echo $?) \
		"go-fuse made one bound clone per $what: $got of $want"
	idle=$(grep 'clone stats: clone' "$w/mount1.log" | grep -c ': 0 requests read')
	tap $([ "$got" -gt 0 ] && [ "$idle" = 0 ]; echo $?) "every clone read requests (go-fuse's count)"
	tap $([ "$fallbacks" = 0 ]; echo $?) "no fallback logged"
	tap $([ -f "$w/hist" ] && [ "$total" -gt 0 ]; echo $?) \
		"the tracepoint counted the requests (${total:-0})"
	served=0
	for k in "${!own_on[@]}"; do [ "${own_on[$k]}" = 0 ] || served=$((served + 1)); done
	tap $([ "$served" = "$want" ]; echo $?) \
		"every bound clone read requests from its own queue: $served of $want ${what}s"
	# A request goes to its node's clone when a reader waits there, else
	# to the shared queue that readers on every node read: with a
	# reader waiting on each node most of the time, more are read on
	# the issuing node than a reader taken at random would give
	chance=$((1000 / nodes_with_cpus))
	tap $([ "$total" -gt 0 ] && [ $((1000 * onnode / total)) -gt "$chance" ]; echo $?) \
		"more requests read on the issuing node than chance: $(pct $onnode) % > $((chance / 10)) %"
	;;
plain)
	tap $([ "$clone_lines" = 0 ] && [ "$fallbacks" = 0 ]; echo $?) \
		"go-fuse made no clone and logged no fallback"
	tap $([ -f "$w/hist" ] && [ "$total" -gt 0 ] && [ "$own" = 0 ]; echo $?) \
		"the tracepoint: ${total:-0} requests, none from a device's own queue (${own:-?})"
	;;
fallback)
	tap $([ "$fallbacks" = 1 ] && [ "$clone_lines" = 0 ]; echo $?) \
		"one fallback line logged ($fallbacks), no clone"
	grep -q 'FUSE_DEV_IOC_BIND: inappropriate ioctl' "$w/mount1.log"
	tap $? "the fallback names ENOTTY from FUSE_DEV_IOC_BIND"
	grep -q 'clone stats: the mount fd: [1-9]' "$w/mount1.log"
	tap $? "the mount fd served alone"
	;;
esac
rm -rf "$w"
exit $bad
