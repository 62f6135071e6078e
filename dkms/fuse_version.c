// SPDX-License-Identifier: GPL-2.0
/*
 * Linked into fuse.ko by the out-of-tree builds of fs/fuse with per-device
 * input queues (DKMS, make install, the test rig), never by the kernel
 * series: modinfo and /sys/module/fuse/version say which version of the
 * patchset this is, modinfo's "base" which kernel release its fs/fuse
 * sources came from (FUSE_OOT_BASE, set by the build's Kbuild).
 */
#include <linux/module.h>

#define FUSE_OOT_VERSION "1.3"

MODULE_VERSION(FUSE_OOT_VERSION);
MODULE_INFO(base, FUSE_OOT_BASE);
