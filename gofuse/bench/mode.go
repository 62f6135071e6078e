// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// setMode sets the go-fuse option of a MODE: CloneBind, on the patched
// go-fuse (gofuse/patches)
func setMode(o *fuse.MountOptions, mode string) error {
	switch mode {
	case "single":
		o.CloneBind = "off"
	case "unbound", "node", "cpu":
		o.CloneBind = mode
	default:
		return fmt.Errorf("mode: single, unbound, node or cpu, not %q", mode)
	}
	return nil
}
