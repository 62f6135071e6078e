// SPDX-License-Identifier: GPL-2.0

// gofuse_loopback: go-fuse's own loopback filesystem (fs.NewLoopbackRoot,
// what go-fuse's example/loopback serves) as a daemon that sets no
// go-fuse option of the per-device queues: like any unchanged go-fuse
// daemon, it reads GOFUSE_CLONE_BIND (and GOFUSE_CLONE_STATS) from the
// environment, through the patched go-fuse it is built on.
//
//	gofuse_loopback ORIGINAL MOUNTPOINT
//
// It mounts through fusermount3, as go-fuse does by default, serves
// until the mount is unmounted, and exits 0 then.
package main

import (
	"fmt"
	"os"

	"github.com/hanwen/go-fuse/v2/fs"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gofuse_loopback ORIGINAL MOUNTPOINT")
		os.Exit(2)
	}
	root, err := fs.NewLoopbackRoot(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gofuse_loopback:", err)
		os.Exit(1)
	}
	opts := &fs.Options{}
	opts.Name = "gofuse_loopback"
	opts.FsName = os.Args[1]
	srv, err := fs.Mount(os.Args[2], root, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gofuse_loopback: mount:", err)
		os.Exit(1)
	}
	srv.Wait()
}
