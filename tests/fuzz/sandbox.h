/* What the fuzz harnesses share: a kernel with no guest running, set up once per process as
 * `minisentry run` sets one up (memory file, platform, the overlay root on a rootfs, devfs,
 * tmpfs, procfs and sysfs), tasks made for a harness to call the Sentry with, and a teardown
 * that leaves nothing of one input for the next. The platform is tests/fuzz/fake_platform.c. */
#ifndef TESTS_FUZZ_SANDBOX_H
#define TESTS_FUZZ_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct task;

/* The rootfs the harnesses use: $FUZZ_ROOTFS, else alpine-rootfs in the working directory. */
const char *fuzz_rootfs(void);
/* Its absolute path, once fuzz_kernel_init ran (kernel.cfg.rootfs may be a restore's copy). */
const char *fuzz_rootfs_path(void);

/* Once per process: the memory file, the platform, stdio on /dev/null for guests (the
 * harness's own stderr stays), the kinds of files the kernel registers. Exits on failure. */
void fuzz_kernel_init(void);

/* The tree `minisentry run` starts with: the overlay root on fuzz_rootfs(), devfs on /dev,
 * tmpfs on /tmp, procfs on /proc, sysfs on /sys. */
void fuzz_mount_tree(void);

/* A process (its own mm, fd table, fs context, signal handlers), linked, with stdio on
 * /dev/null, like init before its exec. NULL on failure. */
struct task *fuzz_task_new(void);

/* Ends everything an input made: every task, the mounts and the root, the memory file's
 * contents and allocator, what a failed restore left half loaded. */
void fuzz_teardown(void);

/* Reads from fuzz input: each returns zeros once the input is used up. */
struct fuzz_in {
	const uint8_t *p;
	size_t len, off;
};
uint8_t fuzz_u8(struct fuzz_in *in);
uint32_t fuzz_u32(struct fuzz_in *in);
uint64_t fuzz_u64(struct fuzz_in *in);
/* The next N bytes in place (fewer at the end: *GOT says how many). */
const uint8_t *fuzz_bytes(struct fuzz_in *in, size_t n, size_t *got);

#endif
