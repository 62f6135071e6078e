# SPDX-License-Identifier: GPL-2.0
#
# FUSE per-device input queues: the series for mainline (Linux 7.3), its
# backports to 6.12 and 6.1 (Debian 12's kernel), and an out-of-tree
# fuse.ko for any of them.
#
#   make help             this list
#   make                  work tree, debug guest kernel, both fuse.ko, the tests
#   make demo             where stock and ours read requests, in a 2-node guest
#   make check            the test suite, in guests and on the host, all bases
#   make stress           soak (DURATION= TOPO= FLAVOR=kcsan|rt|builtin|libfuse|gofuse)
#   make bench            stock vs ours benchmark tables and fio (build/bench/)
#   make bench-fio        only the fio part of make bench (build/bench/fio/)
#   make bench-uring      stock, ours and FUSE-over-io-uring side by side, one 7.3 boot
#   make bench-styles     round trip by reader style, bound and unbound
#   make pathprof         instructions per request by function, stock vs ours
#   make bench-lines      cachelines moved per request, 4 to 32 vCPUs (a model)
#   make bench-manycore   make bench on a host with 16+ cores, 2 and 4 nodes
#   make bench-bundle     the many-core benchmark as one file for a bare box
#   make work             build/work: the base with the series, a git tree
#   make patches          build/work's commits back to patches/ and our files
#   make checkpatch       checkpatch --strict on the series and fs/fuse
#   make series-check     each patch on its own: style, build, its guest tests
#   make series           the series as mails (build/series/)
#   make series-range     all series applied, and git range-diff of each backport
#   make series-boot      build/series applied by git am, FUSE built in, booted
#   make libfuse-work     Debian's libfuse 3 with libfuse/patches (clone_bind)
#   make libfuse-patches  build/libfuse/work's commits back to libfuse/patches/
#   make libfuse-deb      the same as Debian packages (build/libfuse/deb/)
#   make libfuse318       sid's libfuse 3.18.3 with libfuse/patches-3.18 (io-uring too)
#   make libfuse318-patches  build/libfuse318/work's commits back to libfuse/patches-3.18/
#   make libfuse318-deb   the same as Debian packages (build/libfuse318/deb/)
#   make gofuse-work      Debian's go-fuse with gofuse/patches, its daemons (its tests, gocryptfs)
#   make gofuse-patches   build/gofuse/work's commits back to gofuse/patches/
#   make KDIR=<dir>       our fuse.ko for that 7.3.y, 6.12.y or 6.1.y kernel build tree
#   make install          build and install it for the running kernel (or KDIR)
#   make uninstall        remove what make install installed
#   make reload           load the installed fuse.ko in place of the loaded one
#   make dkms-source      the DKMS source tree (build/dkms/)
#   make dkms-install     the same through DKMS, every 7.3.y, 6.12.y and 6.1.y kernel
#   make dkms-check       the DKMS build and make install, tested on the host
#   make clean            remove BASE's runs, modules and test programs
#   make distclean        remove build/ (not with commits not in patches/)
#
# rig/README.md says what each builds and runs, and where its output goes.
#
# BASE=6.12 or 6.1 points the targets that work on one base (work,
# patches, demo, series, series-check, stress, checkpatch) at a backport;
# the default is 7.3, mainline.  Everything is built under build/ (ignored;
# build/7.3 for 7.3, build/6.1 for 6.1).  The series live in patches/7.3,
# patches/6.12 and patches/6.1; build/7.3/work (build/work, build/6.1/work)
# is a git work tree of the base with its series applied: edit and commit
# there, then "make patches [BASE=...]".

SHELL := /bin/bash
RIG := ./rig
export KSRC

# The base: 7.3 (build/7.3/), 6.12 (build/) or 6.1 (build/6.1/); rig/README.md
BASE ?= 7.3
export BASE
BUILD := $(if $(filter 6.12,$(BASE)),build,build/$(BASE))

ifneq ($(KDIR),)
.DEFAULT_GOAL := module
endif

all: deps
	$(RIG)/base.sh
	$(RIG)/work.sh
	$(RIG)/kernel.sh debug
	$(RIG)/modules.sh $(BUILD)/kernel-debug $(BUILD)/modules-debug stock ours
	$(RIG)/selftests.sh

# Our fuse.ko for a real kernel build tree
module: deps
	@test -n "$(KDIR)" || { echo "usage: make KDIR=/lib/modules/<version>/build"; exit 2; }
	$(RIG)/module.sh "$(KDIR)"

deps:
	@$(RIG)/deps.sh

demo: deps
	$(RIG)/demo.sh

check: deps
	$(RIG)/check.sh

# Long soak of the chaos stress test (seconds; make check runs 30 s),
# after the routing tests (bind, readers, fire); FLAVOR=kcsan or rt in
# the KCSAN or PREEMPT_RT guest; FLAVOR=builtin runs no soak but the
# series built into a kernel (make series-boot), FLAVOR=libfuse the
# libfuse daemons' guest (TOPO=1node: what check skips), and
# FLAVOR=gofuse go-fuse's suite and gocryptfs on stock and ours
# (rig/gofuse-check.sh)
DURATION ?= 600
TOPO ?= 2node
FLAVOR ?= debug
stress: deps
	FLAVOR="$(FLAVOR)" $(RIG)/stress.sh "$(DURATION)" "$(TOPO)"

# Stock vs ours in one guest boot, without debug options; writes build/bench
bench: deps
	$(RIG)/bench.sh

# make bench on a host with 16+ cores: 2 and 4 nodes, KVM if it boots
# (build/bench-manycore)
bench-manycore: deps
	$(RIG)/bench-manycore.sh

# Where a round trip's instructions go, by function, stock against ours
# (QEMU instruction clock and a TCG plugin; build/pathprof/profile.md)
pathprof: deps
	$(RIG)/pathprof.sh

# Cacheline transfers per request in simulated 4- to 32-vCPU machines
# (rig/pathprof/lines.c, rig/lines.py; build/bench-lines/results.md)
bench-lines: deps
	$(RIG)/bench-lines.sh

# The many-core benchmark in one self-contained file (rig/bench-bundle.sh)
bench-bundle: deps
	$(RIG)/bench-bundle.sh

# The round trip of each reader style, bound and unbound
# (build/bench/styles/results.md)
bench-styles: deps
	$(RIG)/bench-styles.sh

# Only the fio run of make bench (build/bench/fio/results.md)
bench-fio: deps
	$(RIG)/fio-bench.sh

# Bound /dev/fuse beside FUSE-over-io-uring on 7.3, one boot
# (build/7.3/bench-uring/results.md)
bench-uring: deps
	BASE=7.3 $(RIG)/bench-uring.sh

work: deps
	$(RIG)/base.sh
	$(RIG)/work.sh

# libfuse: Debian's fuse3 source package, built as it is and with
# libfuse/patches (build/libfuse/{stock,ours}); build/libfuse/work is its git
# tree: commit there, then "make libfuse-patches"
libfuse-work: deps
	$(RIG)/libfuse.sh

libfuse-patches:
	$(RIG)/libfuse-patches.sh

# Debian's fuse3 source package with libfuse/patches, built with
# dpkg-buildpackage (build/libfuse/deb/*.deb)
libfuse-deb: deps
	$(RIG)/libfuse-deb.sh

# libfuse 3.18.3 (Debian sid's source) with libfuse/patches-3.18, stock and
# ours, with FUSE-over-io-uring (build/libfuse318/)
libfuse318: deps
	$(RIG)/libfuse318.sh

libfuse318-patches:
	$(RIG)/libfuse318.sh patches

libfuse318-deb: deps
	$(RIG)/libfuse-deb.sh 3.18

# go-fuse: Debian's go-fuse with gofuse/patches (build/gofuse/work, a git
# tree: commit there, then "make gofuse-patches"), the loopback and
# benchmark daemons, and where the sources are served, go-fuse's test
# binaries of both and gocryptfs on ours (build/gofuse/bin)
gofuse-work: deps
	$(RIG)/gofuse.sh

gofuse-patches:
	$(RIG)/gofuse-patches.sh

patches:
	$(RIG)/patches.sh

checkpatch: deps
	$(RIG)/base.sh
	$(RIG)/checkpatch.sh

series-check: deps
	$(RIG)/base.sh
	$(RIG)/work.sh
	$(RIG)/kernel.sh debug
	$(RIG)/selftests.sh
	$(RIG)/series-check.sh $(BUILD)/kernel-debug $(BUILD)/runs/series-patches \
		> $(BUILD)/series-check.tap; \
	python3 $(RIG)/verdict.py tap:series-check:$(BUILD)/series-check.tap \
		$$([ ! -d $(BUILD)/runs/series-patches ] || echo $(BUILD)/runs/series-patches)

# Installing on a real machine (no deps: nothing else is installed for it).
# make install/uninstall: KDIR (default: the running kernel's build tree),
# INSTALL_MOD_PATH (a staging root), DRY_RUN=1 (only say what it would do).
install:
	KDIR="$(KDIR)" $(RIG)/install.sh install

uninstall:
	KDIR="$(KDIR)" $(RIG)/install.sh uninstall

# Load the installed fuse.ko in place of the loaded one (no FUSE mounts)
reload:
	$(RIG)/install.sh reload

# DKMS: build/dkms/fuse-clone-queues-<version>/, then dkms add/build/install
dkms-source:
	$(RIG)/dkms.sh source

dkms-install:
	$(RIG)/dkms.sh install

# The DKMS build and make install tested without touching the system, and
# the DKMS-built module in the guest
dkms-check: deps
	$(RIG)/dkms-check.sh $(BUILD)/runs/dkms $(BUILD)/runs/host/dkms.tap
	python3 $(RIG)/verdict.py $(BUILD)/runs/dkms tap:dkms:$(BUILD)/runs/host/dkms.tap

# Both series applied to their bases, and git range-diff between them
# (build/series-range.txt)
series-range: deps
	$(RIG)/series-range.sh

# The upstream-style series with a cover letter, in build/series/
series:
	$(RIG)/base.sh
	$(RIG)/series.sh

# build/series applied with git am to a fresh base, built with FUSE=y (and
# booted: the routing tests on built-in FUSE) and with FUSE=m
series-boot: deps
	$(RIG)/series-boot.sh $(BUILD)/runs/series-builtin $(BUILD)/runs/host/series-builtin.tap
	python3 $(RIG)/verdict.py $(BUILD)/runs/series-builtin \
		tap:series-builtin:$(BUILD)/runs/host/series-builtin.tap

clean:
	rm -rf $(BUILD)/runs $(BUILD)/modules* $(BUILD)/tests $(BUILD)/module

distclean:
	@for w in build/work build/6.1/work; do \
		if [ -d $$w/.git ] && [ "$$(git -C $$w rev-parse HEAD)" != "$$(cat $$w/.rig-applied 2>/dev/null)" ]; then \
			echo "$$w has commits not in patches/: run make patches (BASE=) first"; exit 1; fi; \
	done
	rm -rf build

# The commands of the header above, one line each
help:
	@sed -n 's/^#   \(make .*\)$$/  \1/p' $(firstword $(MAKEFILE_LIST))
	@echo "  (BASE=6.1: the Linux 6.1 series; rig/README.md says more)"

.PHONY: all help module deps demo check stress bench bench-manycore work patches checkpatch series-check clean distclean \
	libfuse-work libfuse-patches libfuse-deb libfuse318 libfuse318-patches libfuse318-deb gofuse-work gofuse-patches bench-fio bench-uring bench-styles pathprof bench-lines bench-bundle \
	install uninstall reload dkms-source dkms-install dkms-check series series-boot series-range
