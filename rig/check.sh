#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: build what is missing, run the suite in the guests against
# our fuse.ko (and stock fuse.ko where it applies), on Linux 7.3 (the
# primary series) first, then on its backports, 6.12 and 6.1
# (rig/check-6.1.sh), and print the verdict.  The last line is "N passed,
# N failed, N skipped".
. "$(dirname "$0")/lib.sh"

# How long each part took, in build/check-times.txt (printed at the end)
mkdir -p "$BROOT"
times=$BROOT/check-times.txt lap_t=$SECONDS
: > "$times"
lap() { echo "$((SECONDS - lap_t)) s	$*" >> "$times"; lap_t=$SECONDS; }

runs=()
guest_run() {	# NAME TOPOLOGY PLAN-LINES...  (FLAVOR=NAME: kernel-NAME of BASE)
	local name=$1 topo=$2 flavor=${FLAVOR:-debug}; shift 2
	guest_plan "$name" "$B/kernel-$flavor/arch/x86/boot/bzImage" \
		"$B/modules-$flavor" "$topo" "$@"
	runs+=("$B/runs/$name")
}
# The base's debug kernel, stock and our fuse.ko for it, the guest programs
base_build_all() {
	"$TOP/rig/base.sh"
	"$TOP/rig/work.sh"
	"$TOP/rig/kernel.sh" debug
	"$TOP/rig/modules.sh" "$B/kernel-debug" "$B/modules-debug" stock ours
	"$TOP/rig/selftests.sh"
}
# checkpatch --strict over a base's series and our files, as one TAP case
checkpatch_tap() {	# BASE NAME DESCRIPTION
	local log=$BROOT/runs/host/$2.log
	{
		if BASE=$1 "$TOP/rig/checkpatch.sh" > "$log" 2>&1; then
			echo "ok 1 $3"
		else
			sed -n '1,40s/^/# /p' "$log" | tee /dev/stderr
			echo "not ok 1 $3"
		fi
		echo "1..1"
	} > "$BROOT/runs/host/$2.tap"
}
host_taps=()

# --- Linux 7.3 (patches/7.3): mainline, the primary series ---
# Debian's linux-source-7.3 (trixie-backports, fetched with private apt
# lists); FUSE-over-io-uring built in, enable_uring off unless a test
# turns it on.  Each topology's tests, the short stress run, fuse_mem_test
# and a kmemleak scan with fuse.ko still loaded; then unload and load
# again after all that and check the reloaded module works.  Then each
# patch on its own (checkpatch --strict, W=1, kernel-doc, its own guest
# tests), checkpatch and W=1 on the whole.
export BASE=7.3
B=$(base_build 7.3) PATCHES=$TOP/patches/7.3
rm -rf "$B/runs" "$BROOT/runs"
mkdir -p "$BROOT/runs/host"
base_build_all
lap "7.3 debug kernel, modules and selftests built"
GUEST_TIMEOUT=2100 guest_run 7.3-2node 2node \
	"${PLAN_2NODE[@]}" \
	"run 900 FUSE_MEM_ROUNDS=10000 fuse_mem_test" \
	"run 300 fuse_kmemleak.sh" \
	"module ours" \
	"run 300 fuse_dev_test"
lap "7.3 2node guest"
"$TOP/rig/series-check.sh" "$B/kernel-debug" "$B/runs/7.3-series-patches" \
	> "$BROOT/runs/host/series-7.3.tap" || true
runs+=("$B/runs/7.3-series-patches")
checkpatch_tap 7.3 checkpatch-7.3 "checkpatch --strict on the 7.3 series and fs/fuse/*"
"$TOP/rig/sparse.sh" "$B/kernel-debug" > "$BROOT/runs/host/sparse-7.3.tap" || true
host_taps+=("tap:host-7.3:$BROOT/runs/host/series-7.3.tap"
	    "tap:host-7.3:$BROOT/runs/host/checkpatch-7.3.tap"
	    "tap:host-7.3:$BROOT/runs/host/sparse-7.3.tap")
lap "7.3 series patch by patch, checkpatch, W=1"

# --- Linux 6.12 (patches/6.12), the first backport ---
# The routing tests, the fuzzer and the stress run in 2 nodes (what 7.3's
# guest runs besides is the same code); real libfuse daemons; the checks
# of the benchmarks' own tools, which run on the 6.12 kernels; each patch
# on its own, checkpatch and sparse.
export BASE=6.12
B=$(base_build 6.12) PATCHES=$TOP/patches/6.12
base_build_all
lap "6.12 debug kernel, modules and selftests built"
guest_run 2node 2node "${PLAN_2NODE[@]}"
lap "6.12 2node guest"
# Real libfuse daemons on our libfuse (libfuse/patches): Debian's
# passthrough_ll and passthrough_hp and fuse_pt with -o clone_bind under
# data-checking writers (also under taskset and with max_idle_threads=1),
# fs_mark and dbench; on stock the same daemons fall back to clone_fd.
# (The 1-node topology: make stress FLAVOR=libfuse.)
guest_run libfuse 2node \
	"module stock" \
	"run 600 fuse_libfuse_test.sh stock" \
	"module ours" \
	"run 600 fuse_libfuse_test.sh ours"

lap "libfuse built, libfuse guests"
# The cacheline model of make bench-lines checks itself: lines_probe's
# cases of known sharing on the benchmark kernel (which the bundle below
# needs too), on the instruction clock with the TCG plugin, against the
# counts the model must give (host TAP)
"$TOP/rig/bench-lines.sh" check "$B/runs/lines" "$B/runs/host/lines.tap" ||
	log "bench-lines.sh check stopped early"
runs+=("$B/runs/lines")
lap "cacheline model check (QEMU plugin, bench kernel, icount guest)"
# The many-core bundle, built with a short plan (one repeat, 300
# operations a run) and run as a bare box would run it: outside the
# clone, coreutils alone on PATH, 4 vCPUs (MANYCORE_FORCE=1; host TAP)
BUNDLE_REPEATS=1 BUNDLE_OPS=300 "$TOP/rig/bench-bundle.sh" check \
	> "$B/runs/host/bundle.tap" || log "bench-bundle.sh check failed"
lap "many-core bundle check"

"$TOP/rig/series-check.sh" "$B/kernel-debug" "$B/runs/series-patches" \
	> "$BROOT/runs/host/series.tap" || true
runs+=("$B/runs/series-patches")
checkpatch_tap 6.12 checkpatch "checkpatch --strict on the 6.12 series"
"$TOP/rig/sparse.sh" "$B/kernel-debug" > "$BROOT/runs/host/sparse.tap" || true
host_taps+=("tap:host:$BROOT/runs/host/series.tap" "tap:host:$BROOT/runs/host/checkpatch.tap"
	    "tap:host:$BROOT/runs/host/sparse.tap")
lap "6.12 series patch by patch, checkpatch and sparse"

# --- Linux 6.1 (patches/6.1) ---
# Debian 12's own kernel binary (rig/check-6.1.sh; the 6.1 debug kernel is
# make stress BASE=6.1); the series patch by patch against Debian's
# headers (host checks: the 6.1 harness cannot select tests for a
# per-patch guest), checkpatch --strict; and the three series side by
# side: the backports with the primary's subjects, messages and files of
# ours, and git range-diff in build/series-range.txt.  A part that stops early leaves
# its runs or TAP missing, and the verdict counts them.
B61=$(base_build 6.1)
BASE=6.1 "$TOP/rig/check-6.1.sh" || log "check-6.1.sh stopped early"
runs+=("$B61/runs/6.1-debian" "$B61/runs/6.1-debian-1node" "$B61/runs/6.1-debian-sshfs")
lap "6.1 guests (check-6.1.sh)"
# go-fuse's tests of CloneBind (gofuse/patches), built by check-6.1.sh
gofuse_unit() {
	local out
	if out=$(cd /tmp && "$BROOT/gofuse/bin/ours/clone.test" -test.v \
		 -test.run 'CloneBind|ClonePlaces|FuseDevBind|CpuList' 2>&1); then
		echo "ok 1 go-fuse's tests of CloneBind: $(grep -c '^--- PASS' <<< "$out") passed"
	else
		sed 's/^/# /' <<< "$out" | tail -n 30
		echo "not ok 1 go-fuse's tests of CloneBind"
	fi
	echo "1..1"
}
gofuse_unit > "$B/runs/host/gofuse-unit.tap"
DEB_KDIR=$B61/missing-debian-headers
[ ! -f "$B61/debian/env" ] || . "$B61/debian/env"
BASE=6.1 "$TOP/rig/series-check.sh" "$DEB_KDIR" "$B61/runs/series-patches" \
	> "$B/runs/host/series-6.1.tap" || true
checkpatch_tap 6.1 checkpatch-6.1 "checkpatch --strict on the 6.1 series"
"$TOP/rig/series-range.sh" > "$B/runs/host/series-range.tap" || true
base_taps=("tap:host-6.1:$B/runs/host/series-6.1.tap"
	   "tap:host-6.1:$B/runs/host/checkpatch-6.1.tap"
	   "tap:series-range:$B/runs/host/series-range.tap")
lap "6.1 series patch by patch, checkpatch, range-diff"

# --- As users install it (rig/dkms-check.sh) ---
# DKMS builds and installs fuse.ko in trees under build/dkms-test, and make
# install refuses what it must (host TAP); the DKMS-built module runs the
# routing tests in a guest.  A script that stops early leaves its TAP
# short, and the verdict counts what is missing.  (The series applied with
# git am and built with FUSE_FS=y and =m is make stress FLAVOR=builtin.)
"$TOP/rig/dkms-check.sh" "$B/runs/dkms" "$B/runs/host/dkms.tap" ||
	log "dkms-check.sh stopped early"
runs+=("$B/runs/dkms")
install_taps=("tap:dkms:$B/runs/host/dkms.tap")
lap "DKMS"
log "time by part (build/check-times.txt):"
sed 's/^/[rig]   /' "$times" >&2
# --- end of the install checks ---

python3 "$TOP/rig/verdict.py" "${runs[@]}" "tap:lines:$B/runs/host/lines.tap" \
	"tap:bundle:$B/runs/host/bundle.tap" "${host_taps[@]}" \
	"tap:gofuse:$B/runs/host/gofuse-unit.tap" \
	"${base_taps[@]}" "${install_taps[@]}"
