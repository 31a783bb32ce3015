/* The fuzz harnesses' kernel (sandbox.h): set up as kernel_run does it, without a guest, on
 * the fake platform, and taken down after every input so that one input's objects never meet
 * the next one's. */
#include "tests/fuzz/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fs-proc/procfs.h"
#include "fs-sys/sysfs.h"
#include "mem/memfile.h"
#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/task.h"
#include "sentry/timer.h"
#include "sentry/vdso.h"
#include "state/codec.h"
#include "state/image.h"
#include "vfs/vfs.h"

#define MEMFILE_SPAN (1ULL << 40)

static void die(const char *what, int err)
{
	dprintf(2, "fuzz: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(2);
}

const char *fuzz_rootfs(void)
{
	const char *r = getenv("FUZZ_ROOTFS");

	return r && *r ? r : "alpine-rootfs";
}

static char rootfs[4096];

const char *fuzz_rootfs_path(void)
{
	return rootfs;
}

void fuzz_kernel_init(void)
{
	int err;

	if (!realpath(fuzz_rootfs(), rootfs))
		die(fuzz_rootfs(), errno);
	kernel.cfg.rootfs = rootfs;
	kernel.cfg.cpus = 2;
	kernel.next_pid = 1;
	kernel.boot_mono = mono_now();
	clock_gettime(CLOCK_REALTIME, &kernel.boot_real);
	signalfd_register_kind();
	timerfd_register_kind();
	if ((err = memfile_init()))
		die("memory file", err);
	if ((err = vdso_init()))
		die("vdso", err);
	if ((err = platform_init(memfile_fd(), PLACEMENT_SAME, PLATFORM_PTRACE)))
		die("platform", err);
	if ((kernel.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll", errno);
	if ((err = sched_init(kernel.epfd)))
		die("scheduler", err);
	/* Restored host stdio and guest writes to it land on /dev/null, not in the report, and
	 * so do the Sentry's own notes (an unsupported flag, once per value) unless FUZZ_VERBOSE
	 * is set: libFuzzer and the sanitizers write to descriptor 2 without the FILE. */
	int null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
		die("/dev/null", errno);
	close(null);
	FILE *quiet = getenv("FUZZ_VERBOSE") ? NULL : fopen("/dev/null", "w");
	if (quiet)
		stderr = quiet;
}

static int lookup_dir(const char *path, struct vfs_dentry **out)
{
	struct vfs_fs_ctx fs = {.root = kernel.root, .cwd = kernel.root, .umask = 022};

	return vfs_lookup(&fs, NULL, path, VFS_LOOKUP_FOLLOW | VFS_LOOKUP_DIRECTORY, out);
}

static void mount_at(const char *path, const char *type, int (*make)(struct vfs_dentry **))
{
	struct vfs_dentry *mp, *root;

	if (lookup_dir(path, &mp))
		return;
	if (make(&root) == 0) {
		vfs_mount_fs(mp, root, type, type, 0, NULL);
		vfs_dentry_put(root);
	}
	vfs_dentry_put(mp);
}

void fuzz_mount_tree(void)
{
	int err = vfs_mount_overlay_root(rootfs, &kernel.root);

	if (err)
		die(rootfs, err);
	mount_at("/dev", "devtmpfs", vfs_devfs_new);
	mount_at("/tmp", "tmpfs", vfs_tmpfs_new);
	mount_at("/proc", "proc", kernel_new_procfs);
	mount_at("/sys", "sysfs", kernel_new_sysfs);
}

struct task *fuzz_task_new(void)
{
	struct task *t = task_new(kernel.next_pid++);
	struct platform_thread *pt;
	struct vfs_file *null;

	if (!t)
		return NULL;
	t->group_leader = t;
	sched_default_affinity(t);
	t->files = fdtable_new();
	t->sighand = sighand_new();
	t->fs = fs_new(kernel.root, kernel.root, 022);
	if (!t->files || !t->sighand || !t->fs || platform_stub_new(&pt)) {
		task_free(t);
		return NULL;
	}
	if (!(t->mm = mm_new(pt))) {
		platform_thread_release(pt);
		task_free(t);
		return NULL;
	}
	t->pt = pt;
	task_link(t);
	if (vfs_open(t->fs, NULL, "/dev/null", O_RDWR, 0, &null) == 0) {
		for (int fd = 0; fd < 3; fd++)
			fdtable_install_at(t->files, fd, vfs_file_get(null), false, 3);
		vfs_file_put(null);
	}
	return t;
}

void fuzz_guest_map(struct task *t)
{
	const int anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;

	if (mm_map(t->mm, FUZZ_RW_BASE, FUZZ_AREA_LEN, PROT_READ | PROT_WRITE, anon, NULL, 0, 0,
		   NULL) < 0 ||
	    mm_map(t->mm, FUZZ_RO_BASE, FUZZ_AREA_LEN, PROT_READ, anon, NULL, 0, 0, NULL) < 0 ||
	    mm_map(t->mm, FUZZ_NONE_BASE, FUZZ_AREA_LEN, PROT_NONE, anon, NULL, 0, 0, NULL) < 0)
		die("guest memory", ENOMEM);
}

void fuzz_guest_fill(struct task *t, const uint8_t *p, size_t len)
{
	static uint8_t area[FUZZ_AREA_LEN];

	if (len > FUZZ_AREA_LEN)
		len = FUZZ_AREA_LEN;
	memset(area, 0, FUZZ_AREA_LEN);
	memcpy(area, p, len);
	if (copy_out(t->mm, FUZZ_RW_BASE, area, FUZZ_AREA_LEN) ||
	    mm_protect(t->mm, FUZZ_RO_BASE, FUZZ_AREA_LEN, PROT_READ | PROT_WRITE) ||
	    copy_out(t->mm, FUZZ_RO_BASE, area, FUZZ_AREA_LEN) ||
	    mm_protect(t->mm, FUZZ_RO_BASE, FUZZ_AREA_LEN, PROT_READ))
		die("guest memory", EFAULT);
}

uint64_t fuzz_addr(struct fuzz_in *in)
{
	uint8_t sel = fuzz_u8(in);
	uint64_t v = fuzz_u64(in);

	switch (sel % 8) {
	case 0:
	case 1:
		return FUZZ_RW_BASE + v % (FUZZ_AREA_LEN + 64);
	case 2:
		return FUZZ_RW_BASE + FUZZ_AREA_LEN - v % 64; /* running off its end */
	case 3:
		return FUZZ_RO_BASE + v % (FUZZ_AREA_LEN + 64);
	case 4:
		return FUZZ_NONE_BASE + v % FUZZ_AREA_LEN;
	case 5:
		return platform_user_top() - v % 8192;
	case 6:
		return v % 8192; /* NULL and the first pages */
	default:
		return v;
	}
}

/* An empty memory file: every page a hole, nothing allocated (the allocator state is what a
 * restore of an empty version 1 "memory" section leaves). */
static void reset_memfile(void)
{
	static const uint8_t empty[24] = {[16] = 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const struct image v1 = {.version = 1, .codec = IMAGE_CODEC_ZLIB, .dirfd = -1};
	const struct memfile_load_opts o = {.img = &v1, .dir = "(reset)"};
	struct dec d;
	char *err = NULL;

	memfile_zero(0, MEMFILE_SPAN);
	dec_init(&d, empty, sizeof(empty), NULL);
	if (memfile_load(&d, &o, &err))
		die(err ? err : "memory file reset", EINVAL);
	dec_free(&d);
}

void fuzz_teardown_tasks(void)
{
	/* kernel_teardown, but each task also leaves the tid hash: the next input's tasks look
	 * tids up there, and a restore's pids are its own. */
	struct task *t;

	kernel_free_dead();
	while ((t = task_list_first())) {
		task_cancel_wait(t);
		if (t->pt)
			platform_kill(t->pt);
		task_unlink_free(t);
	}
	kernel_free_dead();
	platform_kill_all();
	kernel.next_pid = 1;
	kernel.current = NULL;
}

void fuzz_teardown(void)
{
	fuzz_teardown_tasks();
	vfs_umount_all();
	if (kernel.root)
		vfs_dentry_put(kernel.root);
	kernel.root = NULL;
	reset_memfile();
}

uint8_t fuzz_u8(struct fuzz_in *in)
{
	return in->off < in->len ? in->p[in->off++] : 0;
}

uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v |= (uint32_t)fuzz_u8(in) << (8 * i);
	return v;
}

uint64_t fuzz_u64(struct fuzz_in *in)
{
	uint64_t lo = fuzz_u32(in);

	return lo | (uint64_t)fuzz_u32(in) << 32;
}

const uint8_t *fuzz_bytes(struct fuzz_in *in, size_t n, size_t *got)
{
	const uint8_t *p = in->p + in->off;

	*got = n < in->len - in->off ? n : in->len - in->off;
	in->off += *got;
	return p;
}
