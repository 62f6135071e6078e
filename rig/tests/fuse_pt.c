// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_pt: a small passthrough file system on libfuse 3, for testing the
 * kernel with a real daemon: libfuse's multithreaded loop, optionally with
 * one cloned /dev/fuse fd per worker (-o clone_fd), or with one clone
 * bound per CPU or node (-o clone_bind=cpu|node, libfuse/patches).
 *
 *   fuse_pt SRCDIR MOUNTPOINT [libfuse options, e.g. -f -o clone_fd]
 *
 * With FUSE_PT_OWN_LOOP set in its environment it runs a loop of its own
 * instead of libfuse's, as some daemons do.
 *
 * Every path of the mount is the same path under SRCDIR.  Open files keep
 * their backing fd in fi->fh, and the file system runs with hard_remove and
 * nullpath_ok, so files that were unlinked while open keep working.
 *
 * The rig links it with our libfuse (rig/libfuse.sh) statically and with
 * glibc dynamically.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 31

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

static int src_fd = -1;

/* "/a/b" -> "a/b" relative to src_fd; "/" -> "." */
static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static int neg_errno(int ret)
{
	return ret < 0 ? -errno : ret;
}

static void *pt_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->use_ino = 1;
	cfg->hard_remove = 1;
	cfg->nullpath_ok = 1;
	return NULL;
}

static int pt_getattr(const char *path, struct stat *st,
		      struct fuse_file_info *fi)
{
	if (fi)
		return neg_errno(fstat(fi->fh, st));
	if (!path)
		return -ENOENT;
	return neg_errno(fstatat(src_fd, rel(path), st, AT_SYMLINK_NOFOLLOW));
}

static int pt_access(const char *path, int mask)
{
	return neg_errno(faccessat(src_fd, rel(path), mask, 0));
}

static int pt_readlink(const char *path, char *buf, size_t size)
{
	ssize_t n;

	if (!size)
		return -EINVAL;
	n = readlinkat(src_fd, rel(path), buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int pt_mknod(const char *path, mode_t mode, dev_t rdev)
{
	return neg_errno(mknodat(src_fd, rel(path), mode, rdev));
}

static int pt_mkdir(const char *path, mode_t mode)
{
	return neg_errno(mkdirat(src_fd, rel(path), mode));
}

static int pt_unlink(const char *path)
{
	return neg_errno(unlinkat(src_fd, rel(path), 0));
}

static int pt_rmdir(const char *path)
{
	return neg_errno(unlinkat(src_fd, rel(path), AT_REMOVEDIR));
}

static int pt_symlink(const char *target, const char *path)
{
	return neg_errno(symlinkat(target, src_fd, rel(path)));
}

static int pt_rename(const char *from, const char *to, unsigned int flags)
{
	return neg_errno(renameat2(src_fd, rel(from), src_fd, rel(to), flags));
}

static int pt_link(const char *from, const char *to)
{
	return neg_errno(linkat(src_fd, rel(from), src_fd, rel(to), 0));
}

static int pt_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	if (fi)
		return neg_errno(fchmod(fi->fh, mode));
	return neg_errno(fchmodat(src_fd, rel(path), mode, 0));
}

static int pt_chown(const char *path, uid_t uid, gid_t gid,
		    struct fuse_file_info *fi)
{
	if (fi)
		return neg_errno(fchown(fi->fh, uid, gid));
	return neg_errno(fchownat(src_fd, rel(path), uid, gid,
				  AT_SYMLINK_NOFOLLOW));
}

static int pt_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	int fd, ret;

	if (fi)
		return neg_errno(ftruncate(fi->fh, size));
	fd = openat(src_fd, rel(path), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = neg_errno(ftruncate(fd, size));
	close(fd);
	return ret;
}

static int pt_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	if (fi)
		return neg_errno(futimens(fi->fh, tv));
	return neg_errno(utimensat(src_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW));
}

/* The kernel handles O_APPEND (it sends the offset); O_DIRECT is not ours */
static int backing_flags(int flags)
{
	return (flags & ~(O_APPEND | O_DIRECT | O_NOCTTY)) | O_CLOEXEC;
}

static int pt_open(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(src_fd, rel(path), backing_flags(fi->flags));

	if (fd < 0)
		return -errno;
	fi->fh = fd;
	return 0;
}

static int pt_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int fd = openat(src_fd, rel(path), backing_flags(fi->flags) | O_CREAT,
			mode);

	if (fd < 0)
		return -errno;
	fi->fh = fd;
	return 0;
}

static int pt_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = pread(fi->fh, buf + done, size - done, off + done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (int)done : -errno;
		}
		if (!n)
			break;
		done += n;
	}
	return done;
}

static int pt_write(const char *path, const char *buf, size_t size,
		    off_t off, struct fuse_file_info *fi)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = pwrite(fi->fh, buf + done, size - done, off + done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (int)done : -errno;
		}
		done += n;
	}
	return done;
}

static int pt_statfs(const char *path, struct statvfs *st)
{
	return neg_errno(fstatvfs(src_fd, st));
}

static int pt_flush(const char *path, struct fuse_file_info *fi)
{
	return 0;
}

static int pt_release(const char *path, struct fuse_file_info *fi)
{
	close(fi->fh);
	return 0;
}

static int pt_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	return neg_errno(datasync ? fdatasync(fi->fh) : fsync(fi->fh));
}

static int pt_opendir(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(src_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int err = errno;

		close(fd);
		return -err;
	}
	fi->fh = (uintptr_t)d;
	return 0;
}

/* Offsets are telldir() cookies, so a listing can be resumed anywhere */
static int pt_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	DIR *d = (DIR *)(uintptr_t)fi->fh;
	struct dirent *de;

	seekdir(d, off);
	for (;;) {
		struct stat st = {};

		errno = 0;
		de = readdir(d);
		if (!de)
			return errno ? -errno : 0;
		st.st_ino = de->d_ino;
		st.st_mode = DTTOIF(de->d_type);
		if (fill(buf, de->d_name, &st, telldir(d), 0))
			return 0;
	}
}

static int pt_releasedir(const char *path, struct fuse_file_info *fi)
{
	closedir((DIR *)(uintptr_t)fi->fh);
	return 0;
}

static int pt_fsyncdir(const char *path, int datasync,
		       struct fuse_file_info *fi)
{
	return neg_errno(fsync(dirfd((DIR *)(uintptr_t)fi->fh)));
}

static int pt_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	return neg_errno(fallocate(fi->fh, mode, off, len));
}

static const struct fuse_operations pt_ops = {
	.init		= pt_init,
	.getattr	= pt_getattr,
	.access		= pt_access,
	.readlink	= pt_readlink,
	.mknod		= pt_mknod,
	.mkdir		= pt_mkdir,
	.unlink		= pt_unlink,
	.rmdir		= pt_rmdir,
	.symlink	= pt_symlink,
	.rename		= pt_rename,
	.link		= pt_link,
	.chmod		= pt_chmod,
	.chown		= pt_chown,
	.truncate	= pt_truncate,
	.utimens	= pt_utimens,
	.open		= pt_open,
	.create		= pt_create,
	.read		= pt_read,
	.write		= pt_write,
	.statfs		= pt_statfs,
	.flush		= pt_flush,
	.release	= pt_release,
	.fsync		= pt_fsync,
	.opendir	= pt_opendir,
	.readdir	= pt_readdir,
	.releasedir	= pt_releasedir,
	.fsyncdir	= pt_fsyncdir,
	.fallocate	= pt_fallocate,
};

/*
 * FUSE_PT_OWN_LOOP=1: serve with a loop of our own, as pyfuse3 and
 * qemu-storage-daemon do, on fuse_session_receive_buf() and
 * fuse_session_process_buf() rather than libfuse's loops
 */
static int own_loop(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_buf buf = { .mem = NULL };
	struct fuse_cmdline_opts opts;
	struct fuse_session *se;
	struct fuse *f;
	int res = 1;

	if (fuse_parse_cmdline(&args, &opts) != 0 || !opts.mountpoint)
		return 2;
	f = fuse_new(&args, &pt_ops, sizeof(pt_ops), NULL);
	if (!f)
		goto out;
	if (fuse_mount(f, opts.mountpoint) != 0)
		goto out_destroy;
	se = fuse_get_session(f);
	if (fuse_set_signal_handlers(se) != 0)
		goto out_unmount;
	while (!fuse_session_exited(se)) {
		int n = fuse_session_receive_buf(se, &buf);

		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		fuse_session_process_buf(se, &buf);
	}
	res = 0;
	free(buf.mem);
	fuse_remove_signal_handlers(se);
out_unmount:
	fuse_unmount(f);
out_destroy:
	fuse_destroy(f);
out:
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return res;
}

int main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr,
			"usage: %s SRCDIR MOUNTPOINT [libfuse options]\n",
			argv[0]);
		return 2;
	}
	src_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (src_fd < 0) {
		perror(argv[1]);
		return 1;
	}
	/* The kernel applied the caller's umask already */
	umask(0);
	/* fuse_main() gets argv without SRCDIR */
	argv[1] = argv[0];
	if (getenv("FUSE_PT_OWN_LOOP"))
		return own_loop(argc - 1, argv + 1);
	return fuse_main(argc - 1, argv + 1, &pt_ops, NULL);
}
