/* The kernel's own record in an image (the "kernel" section): configuration, clocks, the pid
 * allocator, the identity of the rootfs and the sandbox-wide state procfs keeps. Loading it
 * checks that this host can take the image (the rootfs is there and is the same tree, the CPU
 * saves the same registers) before anything else is rebuilt. */
#include "common/limits.h"
#include "sentry/confine.h"
#include "sentry/kernel.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "fs-proc/procfs.h"
#include "platform/platform.h"
#include "sentry/bind.h"
#include "sentry/checkpoint.h"
#include "sentry/filecache.h"
#include "sentry/sched.h"
#include "sentry/task.h"
#include "state/codec.h"
#include "vfs/vfs.h"

/* --- the rootfs ---------------------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory PATH (only subdirectories when DIRS_ONLY), sorted, malloc'd; *N
 * gets how many. NULL (and *N 0) if it cannot be read. */
static char **sorted_names(const char *path, bool dirs_only, size_t *n)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (!dir)
		return NULL;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (dirs_only && de->d_type != DT_DIR))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			char **nn = realloc(names, cap * sizeof(*nn));
			if (!nn)
				break;
			names = nn;
		}
		if (!(names[*n] = strdup(de->d_name)))
			break;
		(*n)++;
	}
	closedir(dir);
	if (*n)
		qsort(names, *n, sizeof(*names), name_cmp);
	return names;
}

/* CRC-32 of the sorted names, types, sizes and modification times in directory PATH. */
static uint32_t dir_fingerprint(uint32_t crc, const char *path)
{
	size_t n;
	char **names = sorted_names(path, false, &n);

	for (size_t i = 0; i < n; i++) {
		char sub[4096];
		struct stat st;
		snprintf(sub, sizeof(sub), "%s/%s", path, names[i]);
		crc = crc32(crc, (const Bytef *)names[i], strlen(names[i]) + 1);
		if (lstat(sub, &st) == 0) {
			uint64_t f[3] = {st.st_mode, S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0,
					 S_ISREG(st.st_mode) ? (uint64_t)st.st_mtime : 0};
			crc = crc32(crc, (const Bytef *)f, sizeof(f));
		}
		free(names[i]);
	}
	free(names);
	return crc;
}

/* The identity of a root filesystem: its top directory and each directory in it, one level
 * down — what a different tree (another distribution, another build) changes, read in a few
 * milliseconds even for a large tree. */
static uint32_t rootfs_fingerprint(const char *rootfs)
{
	uint32_t crc = dir_fingerprint(crc32(0, NULL, 0), rootfs);
	size_t n;
	char **names = sorted_names(rootfs, true, &n);

	for (size_t i = 0; i < n; i++) {
		char sub[4096];
		snprintf(sub, sizeof(sub), "%s/%s", rootfs, names[i]);
		crc = dir_fingerprint(crc, sub);
		free(names[i]);
	}
	free(names);
	return crc;
}

/* --- bind mounts --------------------------------------------------------------------------- */

/* The host paths of the sandbox's bind mounts, listed in the kernel record so that a restore
 * on a host that lacks one says so first, as it does for the rootfs (the mount table in the
 * vfs section opens them). */
static int count_bind(struct vfs_mount *m, void *arg)
{
	if (!strcmp(m->fs_type, "bind"))
		++*(uint32_t *)arg;
	return 0;
}

static int save_bind(struct vfs_mount *m, void *arg)
{
	char guest[4096];

	if (strcmp(m->fs_type, "bind"))
		return 0;
	if (vfs_path(kernel.root, m->mountpoint, guest, sizeof(guest)) < 0)
		return enc_fail(arg, "bind mount of '%s': its mountpoint is too deep", m->source);
	enc_str(arg, m->source);
	enc_str(arg, guest);
	return 0;
}

#define MAX_BINDS 4096

static int check_binds(struct dec *d)
{
	uint32_t n = (uint32_t)dec_max(d, MAX_BINDS, "bind mounts");
	char path[4096], guest[4096];
	struct stat st;

	for (uint32_t i = 0; i < n && dec_ok(d); i++) {
		if (!dec_str_buf(d, path, sizeof(path)) || !dec_str_buf(d, guest, sizeof(guest)))
			return dec_fail(d, "bad kernel record");
		const struct kernel_bind *b = bind_restore_source(guest);
		if (!b)
			return dec_fail(d,
					"the image has a bind mount on %s (of '%s'): name its host "
					"directory with -v HOST:%s[:ro] to restore it",
					guest, path, guest);
		if (stat(b->src, &st))
			return dec_fail(d, "bind mount source '%s' (on %s) is missing: %s", b->src,
					guest, strerror(errno));
	}
	return dec_ok(d) ? 0 : dec_fail(d, "bad kernel record");
}

/* --- the kernel record --------------------------------------------------------------------- */

/* The rootfs a restored kernel uses (kernel.cfg.rootfs points at it). */
static char *restore_rootfs;

int kernel_ckpt_save(struct enc *e)
{
	uint64_t ntasks = 0;

	/* Cached file pages no mapping holds would be saved as memory: the cache goes (it is
	 * refilled on demand). */
	filecache_clear();

	enc_str(e, kernel.cfg.rootfs);
	/* The rootfs by its host path, and its fingerprint as the locked Sentry reaches it. */
	const char *reach = confine_rootfs(kernel.cfg.rootfs);
	if (!reach)
		return enc_fail(e, "rootfs '%s': %s", kernel.cfg.rootfs, strerror(errno));
	enc_u32(e, rootfs_fingerprint(reach));
	enc_u32(e, kernel.cfg.cpus);
	enc_bool(e, kernel.cfg.eager_kernfs);
	enc_u32(e, kernel.next_pid);
	enc_u32(e, kernel.tty_sid);
	enc_u32(e, kernel.tty_fg_pgid);
	enc_timespec(e, kernel.boot_mono);
	enc_timespec(e, kernel.boot_real);
	enc_u64(e, kernel.forks);
	enc_timespec(e, mono_now());
	enc_u64(e, platform_fpstate_size());
	enc_u64(e, platform_xfeatures());
	/* Tasks are queued in list order (the order restore links them in); their records
	 * follow in the tasks section. */
	for_each_task(t)
		ntasks++;
	enc_u64(e, ntasks);
	for_each_task(t)
		if (!ckpt_refs_id(e->refs, CK_TASK, t))
			return enc_fail(e, "out of memory");
	int err = procfs_state_save(e);
	if (err)
		return err;
	/* Fields added since the first image: a restore of an older image finds none. */
	enc_str(e, kernel.hostname);
	uint32_t nbinds = 0;
	vfs_mounts_foreach(count_bind, &nbinds);
	enc_u64(e, nbinds);
	vfs_mounts_foreach(save_bind, e);
	enc_bool(e, vfs_overlay_is_rdonly());
	return 0;
}

int kernel_ckpt_load(struct dec *d, const struct kernel_restore_opts *o)
{
	char rootfs[4096];

	if (!dec_str_buf(d, rootfs, sizeof(rootfs)))
		return dec_fail(d, "bad kernel record");
	uint32_t fingerprint = dec_u32(d);
	kernel.cfg.cpus = (int)dec_u32(d);
	kernel.cfg.eager_kernfs = dec_bool(d);
	kernel.next_pid = (pid_t)dec_u32(d);
	kernel.tty_sid = (pid_t)dec_u32(d);
	kernel.tty_fg_pgid = (pid_t)dec_u32(d);
	kernel.boot_mono = dec_timespec(d);
	kernel.boot_real = dec_timespec(d);
	kernel.forks = dec_u64(d);
	struct timespec guest_now = dec_timespec(d);
	uint64_t fpsize = dec_u64(d), xfeatures = dec_u64(d);
	dec_u64(d); /* the task count: inspect's */
	if (dec_ok(d))
		procfs_state_load(d);
	if (dec_ok(d) && !dec_at_end(d) &&
	    !dec_str_buf(d, kernel.hostname, sizeof(kernel.hostname)))
		return dec_fail(d, "bad kernel record");
	int err;
	bind_restore_init(o->binds, o->nbinds);
	if (dec_ok(d) && !dec_at_end(d) && (err = check_binds(d)))
		return err;
	if (dec_ok(d) && !dec_at_end(d))
		kernel.cfg.root_readonly = dec_bool(d);
	if (!dec_ok(d) || kernel.cfg.cpus < 1 || kernel.cfg.cpus > MAX_CPUS ||
	    kernel.next_pid < 2 || guest_now.tv_sec < 0)
		return dec_fail(d, "bad kernel record");
	if (fpsize != platform_fpstate_size() || (xfeatures & ~platform_xfeatures()))
		return dec_fail(d,
				"the image was taken on a CPU with other register state (xsave "
				"size %llu, features %#llx; here %zu, %#llx)",
				(unsigned long long)fpsize, (unsigned long long)xfeatures,
				platform_fpstate_size(), (unsigned long long)platform_xfeatures());
	const char *use = o->rootfs ? o->rootfs : rootfs;
	struct stat st;
	if (stat(use, &st) || !S_ISDIR(st.st_mode))
		return dec_fail(d, "rootfs '%s' of the image is missing (--rootfs gives another)",
				use);
	if (rootfs_fingerprint(use) != fingerprint && !o->force)
		return dec_fail(
		    d, "rootfs '%s' is not the one the image was taken on (--force uses it anyway)",
		    use);
	free(restore_rootfs);
	restore_rootfs = strdup(use);
	if (!restore_rootfs)
		return dec_fail(d, "out of memory");
	kernel.cfg.rootfs = restore_rootfs;
	mono_continue_from(guest_now);
	return 0;
}
