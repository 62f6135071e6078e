// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_pt_writer: parallel writers that check their data, one thread pinned
 * to each CPU the process may use.
 *
 *   fuse_pt_writer [-f files] [-s size] [-n writes] [-S seed] MNTDIR SRCDIR
 *
 * Each thread writes its own files under MNTDIR (a passthrough mount of
 * SRCDIR) with pseudo-random content, in chunks of random size at random
 * offsets, with truncations and read-backs in between; keeps a model of
 * the expected content in memory; then fsyncs, drops the cached pages,
 * reads each file back through the mount in random chunk sizes and checks
 * it against the model (size, checksum, every byte), and does the same with
 * the backing file under SRCDIR.  Last, it unlinks the file and checks that
 * the backing file is gone.  Any mismatch or failed call is reported with
 * the file, offset and CPU, and the exit status is 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_CHUNK	(64 * 1024)

static const char *mnt, *src;
static size_t file_size = 256 * 1024;
static int nfiles = 2, nwrites = 200;
static uint64_t seed = 1;

struct writer {
	pthread_t thr;
	int cpu;
	int failed;
	unsigned long long bytes_written, bytes_checked;
	uint64_t rng;
};

static uint64_t rnd(struct writer *w)
{
	/* xorshift64* */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545f4914f6cdd1dULL;
}

/* A chunk length in [1, max], most of them small, some page sized, few big */
static size_t rnd_len(struct writer *w, size_t max)
{
	size_t len;

	switch (rnd(w) % 4) {
	case 0:
		len = 1 + rnd(w) % 512;
		break;
	case 1:
		len = 4096 * (1 + rnd(w) % 4);
		break;
	case 2:
		len = 1 + rnd(w) % 8192;
		break;
	default:
		len = 1 + rnd(w) % MAX_CHUNK;
		break;
	}
	return len < max ? len : max;
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void fail(struct writer *w, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("# FAIL cpu %d: %s\n", w->cpu, msg);
	fflush(stdout);
	w->failed = 1;
}

static int pwrite_all(int fd, const unsigned char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t r = pwrite(fd, p, n, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= r;
		off += r;
	}
	return 0;
}

/* Read [off, off + n) in one pread; returns bytes read or -1 */
static ssize_t pread_full(int fd, unsigned char *p, size_t n, off_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, p + done, n - done, off + done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (!r)
			break;
		done += r;
	}
	return done;
}

static size_t first_diff(const unsigned char *a, const unsigned char *b,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

/*
 * Read the whole of @path in random chunk sizes and compare with the model.
 * @what names the view (the mount or the backing file) in messages.
 */
static void verify_file(struct writer *w, const char *path, const char *what,
			const unsigned char *model, size_t len,
			unsigned char *buf)
{
	struct stat st;
	size_t off = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fail(w, "%s: open %s: %s", what, path, strerror(errno));
		return;
	}
	if (fstat(fd, &st)) {
		fail(w, "%s: fstat %s: %s", what, path, strerror(errno));
		goto out;
	}
	if ((size_t)st.st_size != len) {
		fail(w, "%s: %s is %lld bytes, expected %zu", what, path,
		     (long long)st.st_size, len);
		goto out;
	}
	/* What is cached may be right while the daemon is wrong: drop it */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	while (off < len) {
		size_t n = rnd_len(w, len - off);
		ssize_t r = pread_full(fd, buf + off, n, off);

		if (r != (ssize_t)n) {
			fail(w, "%s: read %s at %zu: %zd of %zu bytes (%s)",
			     what, path, off, r, n, r < 0 ? strerror(errno) : "short");
			goto out;
		}
		off += n;
	}
	/* Nothing beyond the end */
	if (pread_full(fd, buf + len, 1, len) != 0) {
		fail(w, "%s: %s reads data beyond its size %zu", what, path, len);
		goto out;
	}
	if (fnv1a(buf, len) != fnv1a(model, len) || memcmp(buf, model, len)) {
		size_t d = first_diff(buf, model, len);

		fail(w,
		     "%s: %s differs at offset %zu (got 0x%02x, expected 0x%02x; checksum %016llx, expected %016llx)",
		     what, path, d, buf[d], model[d],
		     (unsigned long long)fnv1a(buf, len),
		     (unsigned long long)fnv1a(model, len));
		goto out;
	}
	w->bytes_checked += len;
out:
	close(fd);
}

static void one_file(struct writer *w, int k, unsigned char *model,
		     unsigned char *buf)
{
	char mpath[512], spath[512];
	size_t len = 0;
	struct stat st;
	int fd, i;

	snprintf(mpath, sizeof(mpath), "%s/w%d_%d", mnt, w->cpu, k);
	snprintf(spath, sizeof(spath), "%s/w%d_%d", src, w->cpu, k);
	memset(model, 0, file_size);

	fd = open(mpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fail(w, "create %s: %s", mpath, strerror(errno));
		return;
	}
	for (i = 0; i < nwrites && !w->failed; i++) {
		unsigned int op = rnd(w) % 100;

		if (op < 85) {
			size_t n = rnd_len(w, file_size);
			size_t off = rnd(w) % (file_size - n + 1);
			size_t j;

			for (j = 0; j < n; j++)
				model[off + j] = rnd(w) >> 56;
			if (pwrite_all(fd, model + off, n, off)) {
				fail(w, "write %s at %zu+%zu: %s", mpath, off, n,
				     strerror(errno));
				break;
			}
			w->bytes_written += n;
			if (off + n > len)
				len = off + n;
		} else if (op < 95) {
			/* Read back a range through the page cache */
			size_t n = rnd_len(w, file_size);
			size_t off = rnd(w) % (file_size - n + 1);
			size_t want = off >= len ? 0 :
				      (off + n > len ? len - off : n);
			ssize_t r = pread_full(fd, buf, n, off);

			if (r != (ssize_t)want) {
				fail(w, "read %s at %zu+%zu: got %zd, expected %zu",
				     mpath, off, n, r, want);
				break;
			}
			if (memcmp(buf, model + off, want)) {
				fail(w, "read-back of %s differs at %zu",
				     mpath, off + first_diff(buf, model + off, want));
				break;
			}
		} else {
			size_t nlen = rnd(w) % (file_size + 1);

			if (ftruncate(fd, nlen)) {
				fail(w, "truncate %s to %zu: %s", mpath, nlen,
				     strerror(errno));
				break;
			}
			if (nlen < len)
				memset(model + nlen, 0, len - nlen);
			len = nlen;
		}
	}
	if (!w->failed && fsync(fd))
		fail(w, "fsync %s: %s", mpath, strerror(errno));
	if (close(fd))
		fail(w, "close %s: %s", mpath, strerror(errno));
	if (w->failed)
		return;

	verify_file(w, mpath, "mount", model, len, buf);
	verify_file(w, spath, "backing", model, len, buf);
	if (w->failed)
		return;

	if (unlink(mpath))
		fail(w, "unlink %s: %s", mpath, strerror(errno));
	else if (stat(spath, &st) == 0 || errno != ENOENT)
		fail(w, "%s still there after unlinking %s", spath, mpath);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	unsigned char *model, *buf;
	cpu_set_t set;
	int k;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		fail(w, "cannot pin to cpu %d", w->cpu);
		return NULL;
	}
	model = malloc(file_size);
	buf = malloc(file_size + 1);
	if (!model || !buf) {
		fail(w, "out of memory");
		goto out;
	}
	for (k = 0; k < nfiles && !w->failed; k++)
		one_file(w, k, model, buf);
	if (sched_getcpu() != w->cpu)
		fail(w, "ran on cpu %d, not on its own", sched_getcpu());
out:
	free(model);
	free(buf);
	return NULL;
}

static void usage_exit(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-f files] [-s size] [-n writes] [-S seed] MNTDIR SRCDIR\n",
		prog);
	exit(2);
}

int main(int argc, char *argv[])
{
	struct writer *ws;
	cpu_set_t allowed;
	int opt, cpu, n = 0, i, failed = 0;
	unsigned long long written = 0, checked = 0;

	while ((opt = getopt(argc, argv, "f:s:n:S:")) != -1) {
		switch (opt) {
		case 'f':
			nfiles = atoi(optarg);
			break;
		case 's':
			file_size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			nwrites = atoi(optarg);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			usage_exit(argv[0]);
		}
	}
	if (argc - optind != 2 || nfiles < 1 || file_size < 1 || nwrites < 1)
		usage_exit(argv[0]);
	mnt = argv[optind];
	src = argv[optind + 1];

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("sched_getaffinity");
		return 1;
	}
	ws = calloc(CPU_SETSIZE, sizeof(*ws));
	if (!ws)
		return 1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		ws[n].cpu = cpu;
		ws[n].rng = (seed * 0x9e3779b97f4a7c15ULL) ^ (cpu + 1) * 0xd1b54a32d192ed03ULL;
		if (!ws[n].rng)
			ws[n].rng = 1;
		if (pthread_create(&ws[n].thr, NULL, writer_main, &ws[n])) {
			perror("pthread_create");
			return 1;
		}
		n++;
	}
	for (i = 0; i < n; i++) {
		pthread_join(ws[i].thr, NULL);
		failed |= ws[i].failed;
		written += ws[i].bytes_written;
		checked += ws[i].bytes_checked;
		printf("# cpu %d: %s, %llu bytes written, %llu bytes checked\n",
		       ws[i].cpu, ws[i].failed ? "FAILED" : "ok",
		       ws[i].bytes_written, ws[i].bytes_checked);
	}
	printf("# %d writers, %d files each of up to %zu bytes: %llu written, %llu checked: %s\n",
	       n, nfiles, file_size, written, checked,
	       failed ? "FAILED" : "all data verified");
	/* Verifying nothing is a failure too */
	return failed || !checked ? 1 : 0;
}
