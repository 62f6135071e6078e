#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: build what is missing, run the suite in the guests against
# our fuse.ko (and stock fuse.ko where it applies) in two topologies, on
# Linux 6.12 and then on 6.1 (rig/check-6.1.sh), and print the verdict.
# The last line is "N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"

# How long each part took, in build/check-times.txt (printed at the end)
mkdir -p "$B"
times=$B/check-times.txt lap_t=$SECONDS
: > "$times"
lap() { echo "$((SECONDS - lap_t)) s	$*" >> "$times"; lap_t=$SECONDS; }

"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
"$TOP/rig/kernel.sh" debug
"$TOP/rig/modules.sh" "$B/kernel-debug" "$B/modules-debug" stock ours
"$TOP/rig/selftests.sh"
lap "6.12 debug kernel, modules and selftests built"

runs=()
guest_run() {	# NAME TOPOLOGY PLAN-LINES...  (FLAVOR=NAME: build/kernel-NAME)
	local name=$1 topo=$2 flavor=${FLAVOR:-debug}; shift 2
	guest_plan "$name" "$B/kernel-$flavor/arch/x86/boot/bzImage" \
		"$B/modules-$flavor" "$topo" "$@"
	runs+=("$B/runs/$name")
}

rm -rf "$B/runs"
# Each topology: the tests, the short stress run, a kmemleak scan with
# fuse.ko still loaded; then (2node) unload and load again after all that
# and check the reloaded module works.  The 2-node guest took 22 minutes
# on a quiet 2-core host on 2026-12-01: it gets 35 where the others get 25.
GUEST_TIMEOUT=2100 guest_run 2node 2node \
	"${PLAN_2NODE[@]}" \
	"run 900 FUSE_MEM_ROUNDS=10000 fuse_mem_test" \
	"run 300 fuse_kmemleak.sh" \
	"module ours" \
	"run 300 fuse_dev_test"
lap "2node guest"
# The routing tests in one node run on Debian's 6.1 kernel below; the
# 1-node debug guest (5 minutes here) is make stress TOPO=1node.

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

# Host-side checks: each patch of the series on its own (checkpatch
# --strict, W=1 and sparse, kernel-doc, its own guest tests), checkpatch
# --strict and sparse on the whole
mkdir -p "$B/runs/host"
"$TOP/rig/series-check.sh" "$B/kernel-debug" "$B/runs/series-patches" \
	> "$B/runs/host/series.tap" || true
runs+=("$B/runs/series-patches")
lap "6.12 series patch by patch"
# checkpatch --strict over a base's series and our files, as one TAP case
checkpatch_tap() {	# BASE NAME DESCRIPTION
	local log=$B/runs/host/$2.log
	{
		if BASE=$1 "$TOP/rig/checkpatch.sh" > "$log" 2>&1; then
			echo "ok 1 $3"
		else
			sed -n '1,40s/^/# /p' "$log" | tee /dev/stderr
			echo "not ok 1 $3"
		fi
		echo "1..1"
	} > "$B/runs/host/$2.tap"
}
checkpatch_tap 6.12 checkpatch "checkpatch --strict on the series and fs/fuse/*"
"$TOP/rig/sparse.sh" "$B/kernel-debug" > "$B/runs/host/sparse.tap" || true
lap "6.12 checkpatch and sparse"

# --- Linux 6.1 (patches/6.1) ---
# Debian 12's own kernel binary (rig/check-6.1.sh; the 6.1 debug kernel is
# make stress BASE=6.1); the series patch by patch against Debian's
# headers (host checks: the 6.1 harness cannot select tests for a
# per-patch guest), checkpatch --strict; and both series
# side by side: same subjects, messages and files of ours, and git
# range-diff in build/series-range.txt.  A part that stops early leaves
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
	"tap:bundle:$B/runs/host/bundle.tap" \
	"tap:host:$B/runs/host/series.tap" "tap:host:$B/runs/host/checkpatch.tap" \
	"tap:host:$B/runs/host/sparse.tap" "tap:gofuse:$B/runs/host/gofuse-unit.tap" \
	"${base_taps[@]}" "${install_taps[@]}"
