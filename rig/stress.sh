#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make stress [DURATION=seconds] [TOPO=2node|1node|"smp=N nodes=M"]
#             [FLAVOR=debug|kcsan|rt|builtin|libfuse|gofuse]: the routing tests
# (bind, readers, fire), then a long soak of fuse_stress_test on our
# fuse.ko, and the verdict as make check prints it.  FLAVOR=debug (the
# default): the debug guest (lockdep, KASAN, kmemleak), then a kmemleak
# scan; TOPO=1node is the 1-node debug guest that make check leaves out.
# FLAVOR=kcsan: a guest with the KCSAN data-race detector instead of
# KASAN; a KCSAN report that names fuse fails the run.  FLAVOR=rt:
# PREEMPT_RT (spinlocks sleep, preemption where a non-RT kernel forbids
# it).  FLAVOR=builtin: no soak, the series as a kernel with FUSE
# built in takes it (rig/series-boot.sh: git am onto a fresh copy of the
# base, FUSE_FS=y booted for the routing tests, FUSE_FS=m built).
# FLAVOR=libfuse: no soak, the libfuse daemons' guest on ours in TOPO
# (make check runs it in 2 nodes; TOPO=1node for the other topology).
# FLAVOR=gofuse: no soak, go-fuse's suite and gocryptfs on the patched
# go-fuse, on stock and ours, on Debian 12's kernel (whatever BASE says)
# with a Debian userland (rig/gofuse-check.sh).
# BASE=6.1 (FLAVOR=debug): the 6.1 debug kernel, which make check does
# not build; its guest runs what make check's 2-node guests run (stock
# and ours, the routing tests, the fuzzer, the short stress run) before
# the soak.  The short form of the stress test runs in make check.
. "$(dirname "$0")/lib.sh"

duration=${1:-600}
topo=${2:-2node}
case "$duration" in ''|*[!0-9]*) die "DURATION must be a number of seconds" ;; esac

flavor=${FLAVOR:-debug}
frags=()
case "$flavor" in
debug) ;;
kcsan|rt) frags+=("$TOP/rig/$flavor.config") ;;
libfuse) ;;
builtin)
	mkdir -p "$B/runs/host"
	"$TOP/rig/series-boot.sh" "$B/runs/series-builtin" "$B/runs/host/series-builtin.tap" ||
		log "series-boot.sh stopped early"
	exec python3 "$TOP/rig/verdict.py" "$B/runs/series-builtin" \
		"tap:series-builtin:$B/runs/host/series-builtin.tap" ;;
gofuse) exec "$TOP/rig/gofuse-check.sh" "$topo" ;;
*) die "FLAVOR must be debug, kcsan, rt, builtin, libfuse or gofuse" ;;
esac

# The libfuse guest runs on the debug kernel; on 7.3, with sid's libfuse
# 3.18.3
kflavor=$flavor
[ "$flavor" = libfuse ] && kflavor=debug
[ "$flavor" != libfuse ] || [ "$BASE" != 7.3 ] || export RIG_LIBFUSE=3.18
"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
"$TOP/rig/kernel.sh" "$kflavor" ${frags[@]+"${frags[@]}"}
mods=(ours)
[ "$BASE" = 6.1 ] && [ "$flavor" = debug ] && mods=(stock ours)
"$TOP/rig/modules.sh" "$B/kernel-$kflavor" "$B/modules-$kflavor" "${mods[@]}"
"$TOP/rig/selftests.sh"

dir=$B/runs/stress-$flavor
rm -rf "$dir"
mkdir -p "$dir"
plan=("module ours")
[ "${#mods[@]}" = 2 ] && plan=("${PLAN_2NODE[@]}")
case "$flavor" in
libfuse) plan+=("run 600 fuse_libfuse_test.sh ours") ;;
*)
	[ "${#mods[@]}" = 2 ] || plan+=("run 900 fuse_bind_test" "run 1200 fuse_readers_test" \
					"run 900 fuse_fire_test")
	plan+=("run $((duration + 300)) fuse_stress_test -d $duration -r 5 -s ${SEED:-$RANDOM}")
	# make check's churn is 10000 rounds; the debug soak runs 30000
	[ "$flavor" = debug ] && plan+=("run 900 FUSE_MEM_ROUNDS=30000 fuse_mem_test" \
					"run 300 fuse_kmemleak.sh") ;;
esac
printf '%s\n' "${plan[@]}" > "$dir/plan"
"$TOP/rig/initramfs.sh" "$dir/initramfs.cpio.gz" "$dir/plan" \
	"$B/modules-$kflavor" "$B/tests"
"$TOP/rig/guest.sh" "$B/kernel-$kflavor/arch/x86/boot/bzImage" \
	"$dir/initramfs.cpio.gz" "$dir" "$topo" $((duration + 3600))
tr -d '\r' < "$dir/results.log" | grep '^# ' | grep -v '^# *\(RUN\|OK\)' || true
python3 "$TOP/rig/verdict.py" "$dir"
