#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Where a request's time goes: runs a command with the scheduler's and
# fuse's tracepoints on (fuse:fuse_request_send, fuse:fuse_request_read
# where the module has it, fuse:fuse_request_end, sched:sched_wakeup,
# sched:sched_switch), then splits each issuer's cycle, from one READ it
# queues to its next, into the steps below.  For the diagnosis of a slow
# configuration, never for a timed figure: the tracing costs a few
# microseconds an event.
#
#   queued   request queued (fuse_request_send) -> read by a reader
#   served   read -> the reply ends it (fuse_request_end)
#   wake     reply -> the issuer is woken (sched_wakeup); 0 where it
#            never slept (preempted, it was runnable all along)
#   run      woken (or the reply, where it never slept) -> the issuer
#            runs (sched_switch)
#   user     the issuer runs -> it queues its next READ
#   cycle    one READ queued -> the same issuer's next
#
# usage: fuse_cycle.sh LABEL CMD...   (OPCODE: the opcode followed, 15
# READ; CYCLE_SHOW=US: the task switches on the issuer's CPU before the
# first 6 run steps longer than US microseconds, as "#" lines)
# Prints "@cycle LABEL STEP n mean p50 p90 p99 max" (microseconds) and
# "@cycle LABEL cross ..." counts: requests read on another CPU than
# their issuer's, issuers woken on another CPU than the reply's, issuers
# that ran on another CPU than the one they were woken for; and
# "@cycle LABEL cpu% ..." the CPU time of each task name (idle: the idle
# task), in per cent of one CPU over the traced time; and which tasks
# had the issuer's CPU during its run step, in microseconds a request.

LABEL=$1
shift
OP=${OPCODE:-15}
t=/sys/kernel/tracing
[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null
W=/tmp/cycle.$$
mkdir -p $W

echo 0 > $t/tracing_on
echo > $t/trace
kb=$(cat $t/buffer_size_kb | sed 's/ .*//')
echo "${CYCLE_BUF_KB:-16384}" > $t/buffer_size_kb
for e in fuse/fuse_request_send fuse/fuse_request_read fuse/fuse_request_end \
	 sched/sched_wakeup sched/sched_switch; do
	[ -d $t/events/$e ] && echo 1 > $t/events/$e/enable
done
echo 1 > $t/tracing_on
"$@"
rc=$?
echo 0 > $t/tracing_on
for e in fuse/fuse_request_send fuse/fuse_request_read fuse/fuse_request_end \
	 sched/sched_wakeup sched/sched_switch; do
	[ -d $t/events/$e ] && echo 0 > $t/events/$e/enable
done
grep -c . $t/trace | sed "s/^/# $LABEL: trace lines /"
grep -h 'lost\|overrun' $t/per_cpu/cpu*/stats 2>/dev/null | \
	awk -v l="$LABEL" '$NF > 0 { print "# " l ": " $0 }'

awk -v op="$OP" -v out=$W/steps '
function kv(name,   i) {
	for (i = 4; i <= NF; i++)
		if (index($i, name "=") == 1)
			return substr($i, length(name) + 2)
	return ""
}
function put(step, v) { if (v >= 0) print step, v > out }
{
	if (!match($0, / \[[0-9]+\] /))
		next
	head = substr($0, 1, RSTART - 1)
	cpu = substr($0, RSTART + 2, RLENGTH - 4) + 0
	rest = substr($0, RSTART + RLENGTH)
	n = split(head, h, "-")
	pid = h[n] + 0
	$0 = rest
	ts = $2; sub(/:$/, "", ts); ts = ts * 1e6
	ev = $3; sub(/:$/, "", ev)
	if (t0 == "")
		t0 = ts
	t1 = ts
	if (ev == "fuse_request_send") {
		if ($9 != op)
			next
		u = $7
		s[u] = ts; iss[u] = pid; qcpu[pid] = cpu
		if (pid in last)
			put("cycle", ts - last[pid])
		if (pid in ran)
			put("user", ts - ran[pid])
		delete ran[pid]
		last[pid] = ts
	} else if (ev == "fuse_request_read") {
		u = $7
		if (!(u in s))
			next
		rd[u] = ts
		if ($11 != $13)
			xread++
		nread++
	} else if (ev == "fuse_request_end") {
		u = $7
		if (!(u in s))
			next
		if (u in rd) {
			put("queued", rd[u] - s[u])
			put("served", ts - rd[u])
		} else {
			put("queued+served", ts - s[u])
		}
		p = iss[u]
		ended[p] = ts; ecpu[p] = cpu
		delete s[u]; delete rd[u]; delete iss[u]
	} else if (ev == "sched_wakeup") {
		p = kv("pid") + 0
		if (!(p in ended) || (p in woke))
			next
		woke[p] = ts
		wcpu[p] = kv("target_cpu") + 0
		put("wake", ts - ended[p])
		if (wcpu[p] != ecpu[p])
			xwake++
		nwake++
	} else if (ev == "sched_switch") {
		c = kv("prev_comm")
		sub(/\/.*/, "", c)
		if (c == "swapper")
			c = "idle"
		if (cpu in since) {
			busy[c] += ts - since[cpu]
			# the issuers waiting to run on this CPU: who had it
			for (q in ended)
				if (qcpu[q] == cpu) {
					from = since[cpu] > ended[q] ? since[cpu] : ended[q]
					if (ts > from)
						gap[c] += ts - from
				}
		}
		since[cpu] = ts
		if (ENVIRON["CYCLE_SHOW"] != "") {
			sw[cpu] = sw[cpu] "\n   " ts " " kv("prev_comm") "/" kv("prev_pid") " " kv("prev_state") " > " kv("next_comm") "/" kv("next_pid")
			if (length(sw[cpu]) > 3000)
				sw[cpu] = substr(sw[cpu], length(sw[cpu]) - 1500)
		}
		p = kv("next_pid") + 0
		if (!(p in ended))
			next
		if (ENVIRON["CYCLE_SHOW"] != "" && ts - ended[p] > ENVIRON["CYCLE_SHOW"] && shown++ < 6)
			print "slow run " p " cpu " cpu " ended " ended[p] " woke " woke[p] " ran " ts ":" sw[cpu] > (out ".show")
		if (p in woke) {
			put("run", ts - woke[p])
			if (cpu != wcpu[p])
				xrun++
		} else {
			put("wake", 0)	# it never slept: it was still running
			put("run", ts - ended[p])
		}
		ran[p] = ts
		nrun++
		delete ended[p]; delete woke[p]
	}
}
END {
	printf "%d %d %d %d %d\n", nread, xread, nwake, xwake, xrun > (out ".x")
	for (c in busy)
		if (busy[c] * 1000 >= t1 - t0)
			printf " %s %.1f", c, busy[c] * 100 / (t1 - t0) > (out ".busy")
	printf "\n" > (out ".busy")
	for (c in gap)
		printf " %s %.0f", c, gap[c] / nrun > (out ".gap")
	printf "\n" > (out ".gap")
}' $t/trace
echo > $t/trace
echo "$kb" > $t/buffer_size_kb
for step in queued served queued+served wake run user cycle; do
	grep "^$step " $W/steps 2>/dev/null | cut -d' ' -f2 | sort -n > $W/v
	[ -s $W/v ] || continue
	awk -v l="$LABEL" -v st=$step '{ v[NR] = $1; sum += $1 }
		END { printf "@cycle %s %s %d %.0f %.0f %.0f %.0f %.0f\n", l, st, NR,
			sum / NR, v[int(NR * 0.5) + 1], v[int(NR * 0.9) + 1],
			v[int(NR * 0.99) + 1], v[NR] }' $W/v
done
read -r nread xread nwake xwake xrun < $W/steps.x
echo "@cycle $LABEL cross read_elsewhere $xread/$nread woken_elsewhere $xwake/$nwake ran_elsewhere $xrun/$nwake"
echo "@cycle $LABEL cpu% (of one CPU, tasks above 0.1 %):$(cat $W/steps.busy)"
echo "@cycle $LABEL run-step by the task on the issuer's CPU (us a request):$(cat $W/steps.gap)"
[ ! -s $W/steps.show ] || sed "s/^/# /" $W/steps.show
rm -rf $W
exit $rc
