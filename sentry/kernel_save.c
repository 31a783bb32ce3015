/* The kernel's own record in an image (the "kernel" section): configuration, clocks, the pid
 * allocator, the identity of the rootfs and the sandbox-wide state procfs keeps. Loading it
 * checks that this host can take the image (the rootfs is there and is the same tree, the CPU
 * saves the same registers) before anything else is rebuilt. */
#include "common/limits.h"
#include "sentry/confine.h"
#include "sentry/kernel.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs-proc/procfs.h"
#include "platform/platform.h"
#include "sentry/bind.h"
#include "sentry/checkpoint.h"
#include "sentry/filecache.h"
#include "sentry/mqueue.h"
#include "sentry/sched.h"
#include "sentry/task.h"
#include "sentry/vdso.h"
#include "state/codec.h"
#include "vfs/save.h"
#include "vfs/vfs.h"

/* --- the rootfs ---------------------------------------------------------------------------- */

/* What an image needs of the rootfs is exactly the host files it shows through the lower layer
 * of the overlay: the names it saved (cwd, root, open files, mapped files and executables, held
 * unlinked files). Each is recorded with what changes when its content or kind does (type,
 * mode, size, modification time: not inode or device, so a copy of the tree made with cp -a
 * or rsync restores), and a restore refuses a rootfs where one of them changed, naming it.
 * The rest of the tree may change freely: it is looked up afresh after a restore as it would
 * have been after a host change while the sandbox ran. Directories count only as directories:
 * a merged listing the guest was reading is saved whole. */

#define ROOTFS_DEPS_MAX (1u << 20)

struct rootfs_dep {
	char *path; /* "/etc/passwd" */
	uint32_t mode;
	int64_t size;
	struct timespec mtime;
};

static int dep_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rootfs_dep *)a)->path, ((const struct rootfs_dep *)b)->path);
}

static void deps_free(struct rootfs_dep *deps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(deps[i].path);
	free(deps);
}

static struct rootfs_dep dep_of(char *path, const struct stat *st)
{
	struct rootfs_dep d = {.path = path, .mode = st->st_mode};

	if (!S_ISDIR(st->st_mode)) {
		d.size = st->st_size;
		d.mtime = st->st_mtim;
	} else {
		d.mode = S_IFDIR;
	}
	return d;
}

int kernel_ckpt_save_rootfs_deps(struct enc *e)
{
	struct rootfs_dep *deps = NULL;
	size_t n = 0, cap = 0, kept = 0;
	const void *dentry;
	int err = 0;

	for (uint64_t id = 1; !err && (dentry = ckpt_refs_get(e->refs, CK_DENTRY, id)); id++) {
		struct stat st;
		char *path;
		int r = vfs_dentry_lower_file(dentry, &path, &st);
		if (r < 0)
			err = enc_fail(e, "a file of the rootfs: %s", strerror(-r));
		if (r <= 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			struct rootfs_dep *nd = realloc(deps, cap * sizeof(*nd));
			if (!nd) {
				free(path);
				err = enc_fail(e, "out of memory");
				continue;
			}
			deps = nd;
		}
		deps[n++] = dep_of(path, &st);
	}
	if (n)
		qsort(deps, n, sizeof(*deps), dep_cmp);
	for (size_t i = 0; i < n; i++)
		kept += !i || strcmp(deps[i].path, deps[i - 1].path);
	enc_u64(e, kept);
	for (size_t i = 0; !err && i < n; i++) {
		if (i && !strcmp(deps[i].path, deps[i - 1].path))
			continue;
		enc_str(e, deps[i].path);
		enc_u32(e, deps[i].mode);
		enc_i64(e, deps[i].size);
		enc_timespec(e, deps[i].mtime);
	}
	deps_free(deps, n);
	return err ? err : enc_ok(e) ? 0 : -ENOMEM;
}

/* The files an image depends on, as the kernel record lists them; NULL with D failed. */
static struct rootfs_dep *load_deps(struct dec *d, size_t *n)
{
	uint64_t count = dec_max(d, ROOTFS_DEPS_MAX, "rootfs files");
	struct rootfs_dep *deps = calloc(count ? count : 1, sizeof(*deps));

	*n = 0;
	if (!deps) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	for (; *n < count && dec_ok(d); ++*n) {
		struct rootfs_dep *dep = &deps[*n];
		dep->path = dec_str(d);
		dep->mode = dec_u32(d);
		dep->size = dec_i64(d);
		dep->mtime = dec_timespec(d);
		if (dec_ok(d) &&
		    (!dep->path || dep->path[0] != '/' || strlen(dep->path) >= PATH_MAX ||
		     strstr(dep->path, "/../") || strstr(dep->path, "/./")))
			dec_fail(d, "bad rootfs file record");
	}
	if (!dec_ok(d)) {
		deps_free(deps, *n);
		return NULL;
	}
	return deps;
}

/* Whether the file DEP still is what the image saw, in the rootfs whose directory descriptor is
 * ROOT: 0, or a failing decoder naming the file. A copy that kept modification times only to
 * the second (tar's ustar) still matches. */
static int check_dep(struct dec *d, int root, const char *rootfs, const struct rootfs_dep *dep)
{
	struct open_how how = {
	    .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	const char *rel = dep->path + 1;
	struct stat st;
	long fd;

	if (!*rel)
		return 0; /* the rootfs itself, a directory */
	do
		fd = syscall(SYS_openat2, root, rel, &how, sizeof(how));
	while (fd < 0 && errno == EINTR);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return dec_fail(d,
				"rootfs '%s': '%s', which the image depends on, is gone (--force "
				"restores anyway)",
				rootfs, dep->path);
	if (fd < 0)
		return dec_fail(d, "rootfs '%s': '%s': %s", rootfs, dep->path, strerror(errno));
	int r = fstat((int)fd, &st);
	close((int)fd);
	if (r)
		return dec_fail(d, "rootfs '%s': '%s': %s", rootfs, dep->path, strerror(errno));
	struct rootfs_dep now = dep_of(NULL, &st);
	bool same_time = now.mtime.tv_sec == dep->mtime.tv_sec &&
			 (now.mtime.tv_nsec == dep->mtime.tv_nsec || now.mtime.tv_nsec == 0);
	if (now.mode != dep->mode || now.size != dep->size || !same_time)
		return dec_fail(d,
				"rootfs '%s': '%s', which the image depends on, has changed since "
				"the checkpoint (--force restores anyway)",
				rootfs, dep->path);
	return 0;
}

static int check_deps(struct dec *d, const char *rootfs, const struct rootfs_dep *deps, size_t n)
{
	/* As the Sentry reaches the rootfs (a detached copy of the mount when confined). */
	const char *reach = confine_rootfs(rootfs);
	int root, err = 0;

	if (!reach || (root = open(reach, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return dec_fail(d, "rootfs '%s': %s", rootfs, strerror(errno));
	for (size_t i = 0; !err && i < n; i++)
		err = check_dep(d, root, rootfs, &deps[i]);
	close(root);
	return err;
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
	enc_str(e, kernel.hostname);
	enc_str(e, kernel.domainname);
	uint32_t nbinds = 0;
	vfs_mounts_foreach(count_bind, &nbinds);
	enc_u64(e, nbinds);
	vfs_mounts_foreach(save_bind, e);
	enc_bool(e, vfs_overlay_is_rdonly());
	/* Which vDSO the guests' pointers into [vdso] are for (mms section). */
	enc_u64(e, vdso_id());
	return mqueue_save(e);
}

/* The configuration just loaded, checked against this host; sets the rootfs. */
static int kernel_check_config(struct dec *d, const char *rootfs, struct timespec guest_now,
			       uint64_t fpsize, uint64_t xfeatures,
			       const struct kernel_restore_opts *o)
{
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
	/* As the Sentry reaches it: a warm slot's Sentry, locked in, reaches only the rootfs
	 * of its golden image, opened before (sentry/warm.c). */
	const char *reach = confine_rootfs(use);
	struct stat st;
	if (!reach && errno == EXDEV)
		return dec_fail(d,
				"rootfs '%s' of the image is not the golden image's, the one a "
				"waiting Sentry of these slots has opened",
				use);
	if (!reach || stat(reach, &st) || !S_ISDIR(st.st_mode))
		return dec_fail(d, "rootfs '%s' of the image is missing (--rootfs gives another)",
				use);
	free(restore_rootfs);
	restore_rootfs = strdup(use);
	if (!restore_rootfs)
		return dec_fail(d, "out of memory");
	kernel.cfg.rootfs = restore_rootfs;
	return 0;
}

int kernel_ckpt_rootfs(const void *data, size_t len, char *buf, size_t size)
{
	struct dec d;
	int err = 0;

	dec_init(&d, data, len, NULL);
	if (!dec_str_buf(&d, buf, size))
		err = -EINVAL;
	dec_free(&d);
	return err;
}

int kernel_ckpt_load(struct dec *d, const struct kernel_restore_opts *o)
{
	char rootfs[4096];

	if (!dec_str_buf(d, rootfs, sizeof(rootfs)))
		return dec_fail(d, "bad kernel record");
	kernel.cfg.cpus = (int)dec_u32(d);
	kernel.cfg.eager_kernfs = dec_bool(d);
	kernel.next_pid = (pid_t)dec_u32(d);
	kernel.tty_sid = (pid_t)dec_u32(d);
	kernel.tty_fg_pgid = (pid_t)dec_u32(d);
	/* Restored without a terminal, the session has lost its controlling one (as after a
	 * hangup): no tty_nr, no job control through stdio. */
	if (!isatty(STDIN_FILENO))
		kernel.tty_sid = 0;
	kernel.boot_mono = dec_timespec(d);
	kernel.boot_real = dec_timespec(d);
	kernel.forks = dec_u64(d);
	struct timespec guest_now = dec_timespec(d);
	uint64_t fpsize = dec_u64(d), xfeatures = dec_u64(d);
	dec_u64(d); /* the task count: inspect's */
	if (dec_ok(d))
		procfs_state_load(d);
	if (dec_ok(d) && (!dec_str_buf(d, kernel.hostname, sizeof(kernel.hostname)) ||
			  !dec_str_buf(d, kernel.domainname, sizeof(kernel.domainname))))
		return dec_fail(d, "bad kernel record");
	bind_restore_init(o->binds, o->nbinds);
	int err;
	if (dec_ok(d) && (err = check_binds(d)))
		return err;
	if (dec_ok(d))
		kernel.cfg.root_readonly = dec_bool(d);
	if (dec_ok(d))
		vdso_set_image_id(dec_u64(d));
	if (dec_ok(d) && (err = mqueue_load(d)))
		return err;
	size_t ndeps = 0;
	struct rootfs_dep *deps = dec_ok(d) ? load_deps(d, &ndeps) : NULL;
	if (!deps)
		return dec_fail(d, "bad kernel record");
	err = kernel_check_config(d, rootfs, guest_now, fpsize, xfeatures, o);
	if (!err && !o->force)
		err = check_deps(d, kernel.cfg.rootfs, deps, ndeps);
	deps_free(deps, ndeps);
	if (!err)
		mono_continue_from(guest_now);
	return err;
}
