# SPDX-License-Identifier: GPL-2.0
# Our own kernel files of the primary (mainline) series, as the 6.12 and
# 6.1 backports add them: there the transport is struct fuse_conn (fc,
# fud->fc, req->fm->fc) and fs/fuse has one header, fuse_i.h.
s/struct fuse_chan\b/struct fuse_conn/g
s/\bfch\b/fc/g
s/kzalloc_obj\(([^,()]+), /kzalloc(sizeof(\1), /g
s/fud->chan\b/fud->fc/g
s/fuse_conn_get_id\(req->chan->conn\)/req->fm->fc->dev/g
s/req->chan\b/req->fm->fc/g
/^#include "dev.h"$/d
/^#include "args.h"$/d
s/^#include "fuse_dev_i.h"$/#include "fuse_i.h"/
