/* Fuzz target: the ELF loader. Each input is an executable: elf_parse (sentry/elf.c) reads it
 * from memory, then the whole of exec (sentry/exec.c: #! scripts, the headers, PT_INTERP, the
 * mappings, the initial stack) runs it as /tmp/x in a sandbox's tree, for a fresh process, on
 * the fake platform. If the input holds the marker "\0INTERP\0", what follows it is written to
 * /tmp/i as well, so that a PT_INTERP or #! naming /tmp/i loads fuzzed bytes too (the rootfs's
 * own /lib/ld-musl-x86_64.so.1 is there for real ones). Seeds: tests/fuzz/corpus/elf, small
 * real executables. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "sentry/elf.h"
#include "sentry/exec.h"
#include "sentry/kernel.h"
#include "sentry/task.h"
#include "tests/fuzz/sandbox.h"
#include "vfs/vfs.h"

static const char marker[8] = "\0INTERP";

struct buf {
	const uint8_t *p;
	size_t len;
};

static ssize_t buf_read(void *ctx, void *out, size_t len, uint64_t off)
{
	const struct buf *b = ctx;

	if (off >= b->len)
		return 0;
	if (len > b->len - off)
		len = b->len - off;
	memcpy(out, b->p + off, len);
	return (ssize_t)len;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_kernel_init();
	fuzz_mount_tree();
	return 0;
}

/* Writes LEN bytes at P to PATH (mode 0755), replacing what was there. */
static void put_file(struct task *t, const char *path, const uint8_t *p, size_t len)
{
	struct vfs_file *f;
	struct iovec iov = {(void *)p, len};

	if (vfs_open(t->fs, NULL, path, O_WRONLY | O_CREAT | O_TRUNC, 0755, &f))
		abort();
	if (len && f->ops->write(f, &iov, 1, &f->pos) != (ssize_t)len)
		abort();
	vfs_file_put(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf exe = {data, size}, interp = {NULL, 0};
	struct elf_info info;
	char *argv[] = {"/tmp/x", "arg", NULL}, *envp[] = {"PATH=/bin", "HOME=/", NULL};

	const uint8_t *m = memmem(data, size, marker, sizeof(marker));
	if (m) {
		exe.len = (size_t)(m - data);
		interp.p = m + sizeof(marker);
		interp.len = size - exe.len - sizeof(marker);
	}
	elf_parse(buf_read, &exe, exe.len, &info);

	struct task *t = fuzz_task_new();
	if (!t)
		abort();
	put_file(t, "/tmp/x", exe.p, exe.len);
	put_file(t, "/tmp/i", interp.p, interp.len);
	exec_load(t, "/tmp/x", argv, envp);
	fuzz_teardown_tasks();
	return 0;
}
