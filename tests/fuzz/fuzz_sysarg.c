/* Fuzz target: the syscall argument decoders (sentry/sysarg.c) and the guest-memory accessors
 * under them (copy_in, copy_string_in, mm_iovecs). The input is the contents of guest memory,
 * then a list of calls, each with its arguments: paths and *at starting points against a task
 * whose descriptors are a directory, an O_PATH file, a pipe and /dev/null, versioned structs,
 * iovec arrays (read, checked, mapped to Sentry memory, advanced). Guest pointers go into
 * readable, read-only, inaccessible and unmapped memory (fuzz_addr). Results are checked
 * against what each decoder promises where that is cheap. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "sentry/fdtable.h"
#include "sentry/mm.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "tests/fuzz/sandbox.h"
#include "vfs/vfs.h"

#define MEM_LEN 8192 /* the guest memory an input sets */

static struct task *task;

static void install(const char *path, int flags)
{
	struct vfs_file *f;

	/* The table takes the open's reference. */
	if (vfs_open(task->fs, NULL, path, flags, 0, &f) == 0 &&
	    fdtable_install(task->files, f, false, 0, 64) < 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct vfs_file *rd, *wr;

	(void)argc, (void)argv;
	fuzz_kernel_init();
	fuzz_mount_tree();
	if (!(task = fuzz_task_new()))
		abort();
	fuzz_guest_map(task);
	install("/tmp", O_RDONLY | O_DIRECTORY); /* 3 */
	install("/etc/passwd", O_PATH);		 /* 4 */
	if (vfs_pipe_new(0, &rd, &wr) || fdtable_install(task->files, rd, false, 0, 64) < 0 ||
	    fdtable_install(task->files, wr, false, 0, 64) < 0) /* 5, 6 */
		abort();
	install("/proc", O_RDONLY | O_DIRECTORY); /* 7 */
	return 0;
}

static int fuzz_fd(struct fuzz_in *in)
{
	static const int fds[] = {AT_FDCWD, 0, 1, 2, 3, 4, 5, 6, 7, 8, -1, 1 << 20, INT_MIN};
	uint8_t sel = fuzz_u8(in);

	return sel < 2 * sizeof(fds) / sizeof(fds[0]) ? fds[sel / 2] : (int)fuzz_u32(in);
}

static void iovecs(struct fuzz_in *in)
{
	struct iovec *giov, iov[64];
	uint64_t addr = fuzz_addr(in);
	unsigned int cnt = fuzz_u32(in) % 1100;
	size_t limit = fuzz_u64(in), total;
	int flags = fuzz_u8(in) & 3, max = fuzz_u8(in) % 65;
	long n = arg_iovec(task, addr, cnt, &giov);

	if (n < 0)
		return;
	if ((size_t)n > ARG_RW_MAX)
		abort(); /* the total is cut at ARG_RW_MAX */
	int got = arg_iovec_map(task->mm, giov, cnt, limit, flags, iov, max, &total);
	if (got > max)
		abort();
	if (got > 0) {
		size_t sum = 0;
		for (int i = 0; i < got; i++)
			sum += iov[i].iov_len;
		if (sum != total || total > limit)
			abort();
		/* The pieces are the Sentry's view of guest memory: touch every byte. */
		for (int i = 0; i < got; i++) {
			volatile uint8_t *p = iov[i].iov_base;
			for (size_t k = 0; k < iov[i].iov_len; k += 512)
				(void)p[k];
			if (iov[i].iov_len)
				(void)p[iov[i].iov_len - 1];
		}
		arg_iovec_advance(iov, got, fuzz_u64(in) % (total + 2));
	}
	free(giov);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size, 0};
	char path[PATH_MAX], buf[PATH_MAX + 1];
	unsigned char st[4096];
	size_t got;

	const uint8_t *mem = fuzz_bytes(&in, fuzz_u32(&in) % MEM_LEN, &got);
	fuzz_guest_fill(task, mem, got);
	for (int ops = 0; in.off < in.len && ops < 64; ops++) {
		struct vfs_dentry *d = NULL;
		struct vfs_file *empty = NULL;
		long r;

		switch (fuzz_u8(&in) % 8) {
		case 0:
			r = arg_path(task, fuzz_addr(&in), path);
			if (r == 0 && strnlen(path, PATH_MAX) == PATH_MAX)
				abort();
			break;
		case 1: {
			int fd = fuzz_fd(&in);
			uint64_t addr = fuzz_addr(&in);
			arg_path_at(task, fd, addr, (int)fuzz_u32(&in), path, &d);
			break;
		}
		case 2: {
			int fd = fuzz_fd(&in);
			uint64_t addr = fuzz_addr(&in);
			bool want_file = fuzz_u8(&in) & 1;
			r = arg_lookup(task, fd, addr, (int)fuzz_u32(&in), &d,
				       want_file ? &empty : NULL);
			if (r == 0 && d)
				vfs_dentry_put(d);
			else if (r == 0 && !empty)
				abort();
			break;
		}
		case 3: {
			static const size_t ksizes[] = {8, 24, 64, 88, 256};
			size_t ksize = ksizes[fuzz_u8(&in) % 5];
			uint64_t src = fuzz_addr(&in);
			size_t usize = fuzz_u32(&in) % 5000, min = fuzz_u8(&in);
			arg_struct(task, st, ksize, src, usize, min);
			break;
		}
		case 4:
			iovecs(&in);
			break;
		case 5: {
			int fd = fuzz_fd(&in);
			struct vfs_file *f = arg_file(task, fd), *g = arg_file_nopath(task, fd);
			if (g && f != g)
				abort();
			break;
		}
		case 6: {
			uint64_t addr = fuzz_addr(&in);
			size_t max = fuzz_u32(&in) % sizeof(buf);
			r = copy_string_in(task->mm, buf, addr, max);
			if (r >= 0 && ((size_t)r >= max || buf[r]))
				abort();
			break;
		}
		default: {
			struct iovec iov[16];
			uint64_t addr = fuzz_addr(&in);
			size_t len = fuzz_u64(&in) % (4 * FUZZ_AREA_LEN);
			int n = mm_iovecs(task->mm, addr, len, fuzz_u8(&in) & 1, iov,
					  1 + fuzz_u8(&in) % 16);
			if (n > 16)
				abort();
			break;
		}
		}
	}
	return 0;
}
