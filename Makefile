# SPDX-License-Identifier: GPL-2.0
#
# FUSE per-clone input queues: an out-of-tree fuse.ko for Linux 6.12.
#
#   make demo      build fuse.ko, boot a 4-CPU 2-node guest, show routing
#   make check     build everything and run every test in the guest
#   make bench     stock vs ours benchmark table (build/bench/results.md)
#   make KDIR=/lib/modules/$(uname -r)/build
#                  build our fuse.ko for that (6.12.y, CONFIG_FUSE_FS=m) kernel
#
# Everything is built under build/ (ignored).  The series lives in patches/;
# build/work is a git work tree of the base with the series applied: edit
# and commit there, then "make patches".

SHELL := /bin/bash
RIG := ./rig
export KSRC

ifneq ($(KDIR),)
.DEFAULT_GOAL := module
endif

all: deps
	$(RIG)/base.sh
	$(RIG)/work.sh
	$(RIG)/kernel.sh debug tools/testing/selftests/filesystems/fuse/config
	KBUILD_EXTRA="CONFIG_FUSE_CLONE_QUEUE_KUNIT_TEST=y" \
		$(RIG)/modules.sh build/kernel-debug build/modules-debug stock ours
	$(RIG)/selftests.sh

# Our fuse.ko for a real kernel build tree
module: deps
	@test -n "$(KDIR)" || { echo "usage: make KDIR=/lib/modules/<version>/build"; exit 2; }
	$(RIG)/base.sh
	$(RIG)/modules.sh "$(KDIR)" build/module ours
	@echo "built build/module/ours.ko for $(KDIR)"

deps:
	@$(RIG)/deps.sh

demo: deps
	$(RIG)/demo.sh

check: deps
	$(RIG)/check.sh

# Stock vs ours in one guest boot, without debug options; writes build/bench
bench: deps
	$(RIG)/bench.sh

work: deps
	$(RIG)/base.sh
	$(RIG)/work.sh

patches:
	$(RIG)/patches.sh

checkpatch: deps
	$(RIG)/base.sh
	$(RIG)/checkpatch.sh

series-check: deps
	$(RIG)/base.sh
	$(RIG)/work.sh
	$(RIG)/kernel.sh debug tools/testing/selftests/filesystems/fuse/config
	$(RIG)/series-check.sh build/kernel-debug

clean:
	rm -rf build/runs build/modules* build/tests build/module

distclean:
	@if [ -d build/work/.git ] && [ "$$(git -C build/work rev-parse HEAD)" != "$$(cat build/work/.rig-applied 2>/dev/null)" ]; then \
		echo "build/work has commits not in patches/: run make patches first"; exit 1; fi
	rm -rf build


.PHONY: all module deps demo check bench work patches checkpatch series-check clean distclean
