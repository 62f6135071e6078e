#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-lines: cachelines moved between vCPUs and between nodes per
# FUSE request, stock fuse.ko against ours, in simulated machines of 4 to
# 32 vCPUs in 1, 2 and 4 nodes.  The benchmark kernel runs on QEMU's
# instruction clock with one TCG thread and a plugin (rig/pathprof/lines.c)
# that sees every guest load and store by physical address and keeps a
# directory of which vCPU holds and last wrote each 64-byte line; fuse_bench
# marks the start and end of its measured operations (FUSE_BENCH_MARK=1),
# and rig/lines.py turns the counts into transfers per request by mode, by
# function and by line, and into the projection.
#
# Then the slow-request workload (fuse_bench mixed: 1 request in 100 held
# 20 ms) on the instruction clock without the plugin, at LINES_MIXED_TOPOS,
# where a held request is a sleep that costs no host time.
# Then the same workload saturated under the plugin, at LINES_SAT_TOPOS:
# fuse_bench mixed, four callers per CPU, stock (clones per CPU and, on
# 7.3, FUSE-over-io-uring) against ours unbound, bound by CPU and by node
# (no go-fuse), for the transfers per request, the cross-node ones, and
# those of the connection-wide input queue's lines.
# Writes build/bench-lines/results.md.  Each run is made LINES_RUNS (3)
# times in the boot, and the tables give the median and the spread.
#
# bench-lines.sh check [RUNDIR TAP]: only the model's own check, which
# make check runs: lines_probe's cases of known sharing (a line ping-ponged
# between two vCPUs of one node and of two, per-CPU lines, a line passed
# round four vCPUs) on a 4-vCPU 2-node guest, their counts against what
# the model must count (rig/lines.py check), and a second boot that must
# count exactly the same, as TAP.
# Environment: LINES_TOPOS (the machines, "smp=N nodes=M|..."; "none":
# no idle workload),
# LINES_REQS (requests per run, 1000), LINES_RUNS (3), LINES_REPEAT (1,
# the default: boot the first machine twice, and say whether the second
# boot counted the same; 0: once),
# LINES_GOFUSE (1, the default: go-fuse's benchmark daemon too, gofuse/bench,
# the mount fd alone on stock and ours, clones unbound and bound by node
# and by CPU on ours; 0: not),
# LINES_MIXED_TOPOS ("smp=4 nodes=2|smp=8 nodes=2"; "none": not run),
# LINES_MIXED_OPS (operations per caller, 300),
# LINES_SAT_TOPOS (the saturated workload under the plugin, "smp=8
# nodes=2|smp=32 nodes=4"; "none": not run), LINES_SAT_OPS (operations
# per caller, 100: each caller holds one request), LINES_SAT_MODES (only
# these of the saturated workload's modes, fuse_bench's names), LINES_NODE
# (1: ours bound by node too, a clone and one reader per node, and in the
# saturated workload also a reader per CPU of the node), LINES_PROBE (1: the
# probe's boot, the model's check and one caller's path lengths; 0: not),
# LINES_AB (another build of our fuse.ko: a change under test, or the
# series before one; the run is then an A/B of the bound modes alone,
# ours against it, in one boot, its rows "other bound" and "other node"),
# LINES_BUILD (1; 0: build nothing, boot the kernel, modules and tests
# already in build/), LINES_OUT.
. "$(dirname "$0")/lib.sh"

IFS='|' read -r -a topos <<< "${LINES_TOPOS:-smp=4 nodes=1|smp=4 nodes=2|smp=8 nodes=2|smp=8 nodes=4|smp=16 nodes=2|smp=16 nodes=4|smp=32 nodes=2|smp=32 nodes=4}"
IFS='|' read -r -a mixed_topos <<< "${LINES_MIXED_TOPOS:-smp=4 nodes=2|smp=8 nodes=2}"
[ "${LINES_MIXED_TOPOS:-}" = none ] && mixed_topos=()
[ "${LINES_TOPOS:-}" = none ] && topos=()
IFS='|' read -r -a sat_topos <<< "${LINES_SAT_TOPOS:-smp=8 nodes=2|smp=32 nodes=4}"
[ "${LINES_SAT_TOPOS:-}" = none ] && sat_topos=()
reqs=${LINES_REQS:-1000}
out=${LINES_OUT:-$B/bench-lines}
what=${1:-bench}

if [ "$what" = check ]; then
	"$TOP/rig/kernel.sh" bench "$TOP/rig/bench.config"
	out=$B/lines-check
elif [ "${LINES_BUILD:-1}" = 1 ]; then
	bench_build
	"$TOP/rig/selftests.sh"
	[ "${LINES_GOFUSE:-1}" != 1 ] || "$TOP/rig/gofuse.sh" bench
fi
rm -rf "$out"
mkdir -p "$out/tests" "$out/modules"
# A small initramfs: under the plugin, unpacking costs as much as a run
# (the check's boots need lines_probe alone)
cp "$B/tests/lines_probe" "$out/tests/"
[ "$what" = check ] || cp "$B/tests/fuse_bench" "$out/tests/"
# go-fuse's daemon goes only into the machines' boots (tests-go): the
# probe's boot, with a larger initramfs, ran its pingpong between nodes
# into a livelock on the instruction clock
tdir=$out/tests
if [ "$what" != check ] && [ "${LINES_GOFUSE:-1}" = 1 ]; then
	mkdir -p "$out/tests-go"
	cp "$out"/tests/* "$BROOT/gofuse/bin/ours/gofuse_bench" "$out/tests-go/"
	tdir=$out/tests-go
fi
[ "$what" = check ] || cp "$B/modules-bench"/*.ko "$out/modules/"
[ -z "${LINES_AB:-}" ] || cp "$LINES_AB" "$out/modules/ab.ko"
cc -O2 -Wall -shared -fPIC -I"$(qemu_plugin_include)" \
	-o "$out/lines.so" "$TOP/rig/pathprof/lines.c"
map=$B/kernel-bench/System.map
mark=$(awk '$3 == "__x64_sys_syncfs" { print $1 }' "$map")
[ -n "$mark" ] || die "no __x64_sys_syncfs in $map"

# The node of each vCPU, one digit each, as rig/guest.sh lays them out
node_digits() {	# CPUS NODES
	local c
	for ((c = 0; c < $1; c++)); do
		printf '%d' $((c / ($1 / $2)))
	done
}

# Boot the benchmark kernel on the instruction clock, with the plugin
# unless told "noplugin"
lines_guest() {	# DIR TOPOLOGY ("smp=N nodes=M") PLAN-FILE [noplugin] [TESTS-DIR]
	local dir=$1 topo=$2 smp nodes t0 plugin
	eval "$topo"
	mkdir -p "$dir"
	[ "$3" = "$dir/plan" ] || cp "$3" "$dir/plan"
	"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
		"$out/modules" "${5:-$out/tests}"
	plugin="-plugin $out/lines.so,mark=$mark,out=$dir/lines,nodes=$(node_digits "$smp" "$nodes")"
	[ "${4:-}" != noplugin ] || plugin=
	t0=$(date +%s)
	GUEST_ICOUNT=1 GUEST_CMDLINE="tsc=reliable${LINES_CMDLINE:+ $LINES_CMDLINE}" \
		GUEST_QEMU_EXTRA="$plugin" \
		"$TOP/rig/guest.sh" "$B/kernel-bench/arch/x86/boot/bzImage" \
		"$dir/initramfs.cpio.gz" "$dir" "$topo" "${LINES_TIMEOUT:-5400}"
	echo "$(($(date +%s) - t0))" > "$dir/seconds"
}

# The model's check: known sharing, 4 vCPUs in 2 nodes
probe_plan() {
	echo "run 120 lines_probe pingpong 0 1 10"
	echo "run 120 lines_probe pingpong 0 3 10"
	echo "run 120 lines_probe percpu 4 10000"
	echo "run 300 lines_probe turn 4 10"
}
probe_plan > "$out/probe.plan"
if [ "$what" = check ]; then
	rundir=${2:-$B/runs/lines}
	tap=${3:-$B/runs/host/lines.tap}
	mkdir -p "$(dirname "$tap")"
	# A probe boot has been seen to spin in a pingpong for over 20
	# minutes on the instruction clock, the same way each time with one
	# initramfs and not with another (not explained yet; on 2026-12-05 a
	# pingpong of 100 rounds did so in 7 boots of 7, after the first
	# rounds, while 10 rounds, as the probe now runs, ended in a second):
	# each boot gets LINES_TIMEOUT (180 s here, where it takes under a
	# minute), and if one does not finish, both boot once more with a
	# word added to the kernel's command line
	LINES_TIMEOUT=${LINES_TIMEOUT:-180}
	for retry in "" rig_retry=1; do
		rm -rf "$rundir" "$out/again"
		LINES_CMDLINE=$retry lines_guest "$rundir" "smp=4 nodes=2" "$out/probe.plan" || true
		if grep -q '^### DONE' "$rundir/results.log" 2>/dev/null; then
			# Once more: the same kernel and initramfs must count the same
			LINES_CMDLINE=$retry lines_guest "$out/again" "smp=4 nodes=2" \
				"$out/probe.plan" || true
			grep -q '^### DONE' "$out/again/results.log" 2>/dev/null && break
		fi
		[ -n "$retry" ] || log "a probe boot did not finish in $LINES_TIMEOUT s: both once more"
	done
	python3 "$TOP/rig/lines.py" check "$rundir" "$out/tests/lines_probe" \
		"$out/again" > "$tap" || true
	cat "$tap"
	exit 0
fi
# fuse_bench's modes on each module: on stock, clones per CPU and, where
# the base has FUSE-over-io-uring (7.3), its ring; on ours, clones unbound,
# bound by CPU and, with LINES_NODE=1 (the default), one per node
# The modules of a run: stock and ours, or with LINES_AB the change and ours
lines_modules() {
	if [ -n "${LINES_AB:-}" ]; then echo ab ours; else echo stock ours; fi
}

modes_of() {	# stock|ours|ab
	if [ -n "${LINES_AB:-}" ]; then
		echo bound
		[ "${LINES_NODE:-1}" != 1 ] || echo node
	elif [ "$1" = stock ]; then
		echo unbound
		[ "$BASE" != 7.3 ] || echo uring
	else
		echo unbound bound
		[ "${LINES_NODE:-1}" != 1 ] || echo node
	fi
}

# The saturated workload's: bound by node also with a reader per CPU, since
# one reader per node holding a slow request leaves its node none
sat_modes_of() {	# stock|ours|ab
	local mode
	for mode in $(modes_of "$1") $([ "$1" = ab ] || [ "$1" = stock ] ||
				      [ "${LINES_NODE:-1}" != 1 ] || echo nodecpus); do
		[ -z "${LINES_SAT_MODES:-}" ] ||
			[[ " $LINES_SAT_MODES " = *" $mode "* ]] || continue
		echo "$mode"
	done
}

# and, for the projection, the path length of a getattr in each mode: one
# caller, so that no lock is contended and no vCPU waits for another
{
	cat "$out/probe.plan"
	for m in $(lines_modules); do
		echo "module $m"
		echo "sh 60 grep -E '\\[fuse\\]' /proc/kallsyms"
		for mode in $(modes_of $m); do
			echo "sh 900 FUSE_BENCH_MARK=1 fuse_bench $mode getattr 1 $reqs"
		done
	done
} > "$out/probe-bench.plan"
# LINES_PROBE=0: not (the projection then takes the instructions of the
# runs themselves)
[ "${LINES_PROBE:-1}" != 1 ] ||
	lines_guest "$out/probe" "smp=4 nodes=2" "$out/probe-bench.plan"

# Each run LINES_RUNS times: with many callers, which reader a wakeup
# finds first depends on how the vCPUs interleave, and QEMU's instruction
# clock is not deterministic once its I/O thread injects an event, so the
# tables give the median and the spread of the runs
# With "sat", the saturated workload: fuse_bench mixed, four callers per
# CPU, each holding one request in 100 (no go-fuse)
lines_plan() {	# CPUS [sat]
	local cpus=$1 m mode wl callers t ops r
	for m in $(lines_modules); do
		echo "module $m"
		echo "sh 60 grep -E '\\[fuse\\]' /proc/kallsyms"
		for ((r = 1; r <= ${LINES_RUNS:-3}; r++)); do
			if [ "${2:-}" = sat ]; then
				for mode in $(sat_modes_of $m); do
					echo "sh 900 FUSE_BENCH_MARK=1 fuse_bench $mode mixed $((4 * cpus)) ${LINES_SAT_OPS:-100}"
				done
				continue
			fi
			for wl in getattr read; do
				for callers in 1 2; do
					t=$((callers * cpus))
					ops=$(((reqs + t - 1) / t))
					for mode in $(modes_of $m); do
						echo "sh 900 FUSE_BENCH_MARK=1 fuse_bench $mode $wl $t $ops"
					done
					[ "${LINES_GOFUSE:-1}" = 1 ] || continue
					for mode in single unbound node cpu; do
						[ $m = stock ] && [ $mode != single ] && continue
						echo "sh 900 FUSE_BENCH_MARK=1 gofuse_bench $mode $wl $t $ops"
					done
				done
			done
		done
	done
}

dirs=()
first=1
for topo in ${topos[@]+"${topos[@]}"}; do
	eval "$topo"	# smp= nodes=
	name=smp-$smp-nodes-$nodes
	boots=1
	[ $first = 1 ] && [ "${LINES_REPEAT:-1}" = 1 ] && boots=2
	first=0
	for ((b = 1; b <= boots; b++)); do
		dir=$out/$name
		[ $b = 1 ] || dir=$out/$name-repeat
		mkdir -p "$dir"
		lines_plan "$smp" > "$dir/plan"
		lines_guest "$dir" "$topo" "$dir/plan" plugin "$tdir"
		log "$name: $(cat "$dir/seconds") s"
		[ $b = 1 ] && dirs+=("$dir")
	done
done

# The saturated workload under the plugin
sdirs=()
for topo in ${sat_topos[@]+"${sat_topos[@]}"}; do
	eval "$topo"
	dir=$out/sat-smp-$smp-nodes-$nodes
	mkdir -p "$dir"
	lines_plan "$smp" sat > "$dir/plan"
	lines_guest "$dir" "$topo" "$dir/plan"
	log "sat-smp-$smp-nodes-$nodes: $(cat "$dir/seconds") s"
	sdirs+=("$dir")
done

# The slow-request workload on the instruction clock, no plugin
mdirs=()
for topo in ${mixed_topos[@]+"${mixed_topos[@]}"}; do
	eval "$topo"
	dir=$out/mixed-smp-$smp-nodes-$nodes
	mkdir -p "$dir"
	for m in stock ours; do
		echo "module $m"
		for mode in unbound bound; do
			[ $m = stock ] && [ $mode != unbound ] && continue
			echo "run 900 fuse_bench $mode mixed $((4 * smp)) ${LINES_MIXED_OPS:-300}"
		done
	done > "$dir/plan"
	lines_guest "$dir" "$topo" "$dir/plan" noplugin
	mdirs+=("$dir")
done

if [ "${LINES_PROBE:-1}" = 1 ]; then
	python3 "$TOP/rig/lines.py" check "$out/probe" "$out/tests/lines_probe" > "$out/probe.tap" || true
	python3 "$TOP/rig/lines.py" report "$out/results.md" "$map" ${dirs[@]+"${dirs[@]}"} \
		--pathlen "$out/probe" ${sdirs[@]+--sat "${sdirs[@]}"} \
		${mdirs[@]+--mixed "${mdirs[@]}"}
	echo "The model's check (lines_probe): $(grep -c '^ok' "$out/probe.tap") of $(grep -c -E '^(not )?ok' "$out/probe.tap") cases exact." |
		tee -a "$out/results.md"
else
	python3 "$TOP/rig/lines.py" report "$out/results.md" "$map" ${dirs[@]+"${dirs[@]}"} \
		${sdirs[@]+--sat "${sdirs[@]}"} ${mdirs[@]+--mixed "${mdirs[@]}"}
	echo "No probe boot (LINES_PROBE=0): the model's check did not run." |
		tee -a "$out/results.md"
fi
for dir in "$out"/*-repeat; do
	[ -d "$dir" ] || continue
	echo "A second boot of $(basename "${dir%-repeat}"): $(python3 "$TOP/rig/lines.py" same "${dir%-repeat}" "$dir")." |
		tee -a "$out/results.md"
done
