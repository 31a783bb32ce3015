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

/* Once per process: the memory file, the platform, stdio on /dev/null for guests and the
 * Sentry's stderr notes (unless $FUZZ_VERBOSE), the kinds of files the kernel registers.
 * Exits on failure. */
void fuzz_kernel_init(void);

/* The tree `minisentry run` starts with: the overlay root on fuzz_rootfs(), devfs on /dev,
 * tmpfs on /tmp, procfs on /proc, sysfs on /sys. */
void fuzz_mount_tree(void);

/* A process (its own mm, fd table, fs context, signal handlers), linked, with stdio on
 * /dev/null, like init before its exec. NULL on failure. */
struct task *fuzz_task_new(void);

/* Guest memory for harnesses that hand the Sentry guest pointers: in T's address space a
 * read-write area, a read-only one and an inaccessible one, each with unmapped pages after
 * it. fuzz_guest_fill writes LEN bytes (the rest zero) into both readable areas; fuzz_addr
 * reads an address from IN that points into one of them, into a gap, near the top of user
 * space, or anywhere. */
#define FUZZ_RW_BASE 0x10000000UL
#define FUZZ_RO_BASE 0x20000000UL
#define FUZZ_NONE_BASE 0x30000000UL
#define FUZZ_AREA_LEN (16 * 4096UL)
void fuzz_guest_map(struct task *t);
void fuzz_guest_fill(struct task *t, const uint8_t *p, size_t len);
struct fuzz_in;
uint64_t fuzz_addr(struct fuzz_in *in);

/* Ends every task (the tree stays, with what they wrote in it). */
void fuzz_teardown_tasks(void);
/* Ends everything an input made: every task, the mounts and the root, the memory file's
 * contents and allocator. */
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
