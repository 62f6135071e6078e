#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's part on Linux 6.1 (patches/6.1), which rig/check.sh runs
# after the 6.12 part.  Debian's kernel, three guests:
#   debian  Debian 12's own kernel binary (linux-image-6.1.0-NN-amd64, the
#           version of linux-source-6.1: rig/debkernel.sh) with our
#           fuse.ko, cuse.ko and virtiofs.ko built against Debian's headers
#           as DKMS builds them; "stock" there is Debian's own fuse.ko.
#           Both topologies (the 1-node one for the routing tests), and
#           Debian's sshfs on our libfuse and go-fuse's loopback daemon
#           on the patched go-fuse (gofuse/), on stock and on ours.
# The 6.1 debug kernel (a tinyconfig 6.1 kernel with lockdep, KASAN and
# kmemleak, what Debian's binary lacks) and its guest are make stress
# BASE=6.1: they took 12 of make check's minutes, and the code they check
# under lockdep is the same as 6.12's but for where 6.1 queues requests.
# fuse_mem_test's 100000 rounds of clone, bind and close run on Debian's
# kernel (memcg and slab; it has no failslab, so those cases skip there):
# under KASAN on 2 cores they take minutes, and the code they churn is
# the same on both bases (6.12's debug guest runs all of them).
# What 6.1 lacks is skipped by the tests, saying why (no FUSE_NOTIFY_RESEND
# before protocol 7.40).  The runs land in build/6.1/runs (6.1-debian,
# 6.1-debian-1node, 6.1-debian-sshfs), for verdict.py.
# usage: BASE=6.1 check-6.1.sh
. "$(dirname "$0")/lib.sh"

[ "$BASE" = 6.1 ] || die "check-6.1.sh runs with BASE=6.1"
# No run of an earlier check may stand for this one if a build stops it
rm -rf "$B/runs"
"$TOP/rig/base.sh"
"$TOP/rig/work.sh"
debian_guest_build
md=$B/modules-debian
"$TOP/rig/selftests.sh"

guest_plan 6.1-debian "$DEB_VMLINUZ" "$md" 2node \
	"${PLAN_2NODE[@]}" \
	"run 600 fuse_mem_test" \
	"run 120 fuse_companions.sh"
guest_plan 6.1-debian-1node "$DEB_VMLINUZ" "$md" 1node \
	"module ours" \
	"${ROUTING_TESTS[@]}" \
	"$STRESS_1NODE"
"$TOP/rig/debroot.sh"
# and go-fuse's loopback filesystem on the patched go-fuse, unchanged,
# switched by GOFUSE_CLONE_BIND (rig/gofuse.sh check)
"$TOP/rig/gofuse.sh" check
cp "$BROOT/gofuse/bin/ours/gofuse_loopback" "$TOP/rig/tests/gofuse_daemon.sh" "$B/tests/"
INITRAMFS_BASE=$BROOT/libfuse/debroot.tar GUEST_MEM=768 GUEST_CMDLINE=initramfs_async=0 \
	guest_plan 6.1-debian-sshfs "$DEB_VMLINUZ" "$md" 2node \
	"module stock" \
	"run 600 fuse_libfuse_test.sh stock deb" \
	"run 300 gofuse_daemon.sh loopback node fallback" \
	"module ours" \
	"run 600 fuse_libfuse_test.sh ours deb" \
	"run 300 gofuse_daemon.sh loopback off plain" \
	"run 300 gofuse_daemon.sh loopback node bound" \
	"run 300 gofuse_daemon.sh loopback cpu bound"
