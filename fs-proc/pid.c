/* /proc/[pid] and /proc/[pid]/task/[tid]: one table of rows each, as Linux's fs/proc/base.c
 * (tgid_base_stuff, tid_base_stuff). The pid directory is a dynamic child of /proc, made on
 * lookup and gone when nothing holds it; its rows are instantiated on demand. Every file
 * takes its snapshot when opened. fd/, fdinfo/ and task/ are dynamic directories. */
#include "fs-proc/internal.h"
#include "vfs/inotify.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILE_ROW(NAME, PERM, SHOW)                                                                 \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | (PERM), .flags = KERNFS_WRITE_EINVAL,            \
		.show = (SHOW), .getattr = procfs_pid_owner                                        \
	}
/* The links of a process (cwd, root, exe) are magic links, as in Linux: they name the
 * object itself. */
#define LINK_ROW(NAME, READLINK, DENTRY)                                                           \
	{                                                                                          \
		.name = (NAME), .mode = S_IFLNK | 0777, .flags = KERNFS_MAGIC_LINK,                \
		.readlink = (READLINK), .link_dentry = (DENTRY), .getattr = procfs_pid_owner       \
	}

static pid_t pid_of(struct kernfs_node *n)
{
	return (pid_t)kernfs_key(n, PROCFS_KEY_PID);
}

static pid_t tid_of(struct kernfs_node *n)
{
	return (pid_t)kernfs_key(n, PROCFS_KEY_TID);
}

int procfs_task(struct procfs *p, struct kernfs_node *n, struct procinfo_task *t)
{
	return p->ops->task(pid_of(n), tid_of(n), t);
}

/* Everything under /proc/PID belongs to the process's effective ids, as Linux shows them
 * (busybox ps takes the USER column from it). */
void procfs_pid_owner(struct kernfs_node *n, struct stat *st)
{
	struct procfs *p = procfs_of(n);
	struct procinfo_task t;

	if (p->ops->owner) {
		uid_t uid;
		gid_t gid;

		if (p->ops->owner(pid_of(n), &uid, &gid) == 0) {
			st->st_uid = uid;
			st->st_gid = gid;
		}
		return;
	}
	if (p->ops->task(pid_of(n), tid_of(n), &t) == 0) {
		st->st_uid = t.euid;
		st->st_gid = t.egid;
	}
}

static int with_task(struct kernfs_node *n, struct procinfo_task *t)
{
	int err = procfs_task(procfs_of(n), n, t);

	return err == -ESRCH ? -ENOENT : err;
}

static int show_stat(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	int err = with_task(n, &t);

	if (!err)
		procfs_fmt_stat(b, &t, procfs_may_read(procfs_of(n), pid_of(n)));
	return err;
}

static int show_statm(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	int err = with_task(n, &t);

	if (!err)
		procfs_fmt_statm(b, &t);
	return err;
}

static int show_status(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	int err = with_task(n, &t);

	if (!err)
		procfs_fmt_status(b, &t, procfs_of(n)->ops->cpus());
	return err;
}

static int show_io(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	int err = with_task(n, &t);

	/* Linux checks ptrace access at read time, beyond the file's 0400. */
	if (!err && !procfs_may_read(procfs_of(n), pid_of(n)))
		err = -EACCES;
	if (!err)
		procfs_fmt_io(b, &t);
	return err;
}

static int show_schedstat(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	int err = with_task(n, &t);

	if (!err)
		procfs_fmt_schedstat(b, &t);
	return err;
}

static int show_limits(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	int err = with_task(n, &t);

	if (!err)
		procfs_fmt_limits(b, &t);
	return err;
}

static int show_comm(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	int err = with_task(n, &t);

	if (!err)
		kernfs_buf_printf(b, "%.16s\n", t.comm);
	return err;
}

static int show_cmdline(struct kernfs_node *n, struct kernfs_buf *b)
{
	return procfs_fmt_cmdline(b, procfs_of(n)->ops, pid_of(n), false);
}

static int show_environ(struct kernfs_node *n, struct kernfs_buf *b)
{
	return procfs_fmt_cmdline(b, procfs_of(n)->ops, pid_of(n), true);
}

static int show_maps(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_vma *v;
	int nv, err = procfs_get_vmas(procfs_of(n)->ops, pid_of(n), &v, &nv);

	if (err)
		return err;
	procfs_fmt_maps(b, v, nv);
	free(v);
	return 0;
}

static int show_smaps(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_vma *v;
	int nv, err = procfs_get_vmas(procfs_of(n)->ops, pid_of(n), &v, &nv);

	if (err)
		return err;
	procfs_fmt_smaps(b, v, nv);
	free(v);
	return 0;
}

static int show_smaps_rollup(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	struct procinfo_vma *v;
	int nv, err = with_task(n, &t);

	if (!err)
		err = procfs_get_vmas(procfs_of(n)->ops, pid_of(n), &v, &nv);
	if (err)
		return err;
	procfs_fmt_smaps_rollup(b, v, nv, &t);
	free(v);
	return 0;
}

static int show_cpuset(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	procfs_fmt_cpuset(b);
	return 0;
}

static int show_cgroup(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "0::/\n");
	return 0;
}

static int show_zero(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "0\n");
	return 0;
}

static int show_wchan(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "0");
	return 0;
}

static int show_loginuid(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "4294967295");
	return 0;
}

/* oom_score_adj (-1000..1000) is kept on the process (there is no OOM killer to read it);
 * oom_adj is Linux's older scale for the same value (-17..15), converted as Linux does. */
#define OOM_SCORE_ADJ_MAX 1000
#define OOM_ADJUST_MAX 15
#define OOM_DISABLE (-17)

static int parse_int(const char *data, long lo, long hi, long *out)
{
	char *end;
	long v = strtol(data, &end, 10);

	while (*end == '\n' || *end == ' ')
		end++;
	if (end == data || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int set_oom(struct kernfs_node *n, long adj)
{
	const struct procinfo_ops *ops = procfs_of(n)->ops;

	return ops->set_oom_score_adj ? ops->set_oom_score_adj(pid_of(n), (int)adj) : -EIO;
}

static int store_oom_score_adj(struct kernfs_node *n, const char *data, size_t len)
{
	long v;
	int err = parse_int(data, -OOM_SCORE_ADJ_MAX, OOM_SCORE_ADJ_MAX, &v);

	(void)len;
	return err ? err : set_oom(n, v);
}

static int store_oom_adj(struct kernfs_node *n, const char *data, size_t len)
{
	long v;
	int err = parse_int(data, OOM_DISABLE, OOM_ADJUST_MAX, &v);

	(void)len;
	if (err)
		return err;
	return set_oom(n, v == OOM_ADJUST_MAX ? OOM_SCORE_ADJ_MAX
					      : v * OOM_SCORE_ADJ_MAX / -OOM_DISABLE);
}

static int show_oom_score_adj(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	int err = with_task(n, &t);

	if (!err)
		kernfs_buf_printf(b, "%d\n", t.oom_score_adj);
	return err;
}

static int show_oom_adj(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procinfo_task t;
	int err = with_task(n, &t);

	if (err)
		return err;
	int adj = t.oom_score_adj == OOM_SCORE_ADJ_MAX
		      ? OOM_ADJUST_MAX
		      : t.oom_score_adj * -OOM_DISABLE / OOM_SCORE_ADJ_MAX;
	kernfs_buf_printf(b, "%d\n", adj);
	return 0;
}

/* Links: paths as the reader sees them, from its root. */

static int put_path(struct procfs *p, struct vfs_dentry *d, struct kernfs_buf *b)
{
	char path[4096];
	int len = vfs_path(p->ops->reader_root(), d, path, sizeof(path));

	if (len < 0)
		return len;
	kernfs_buf_puts(b, path);
	if (d->unhashed)
		kernfs_buf_puts(b, " (deleted)");
	return 0;
}

static int get_dentry(struct kernfs_node *n, int (*get)(pid_t pid, struct vfs_dentry **out),
		      struct vfs_dentry **out)
{
	int err = get(pid_of(n), out);

	return err == -ESRCH ? -ENOENT : err;
}

static int readlink_dentry(struct kernfs_node *n, struct kernfs_buf *b,
			   int (*get)(pid_t pid, struct vfs_dentry **out))
{
	struct vfs_dentry *d;
	int err = get_dentry(n, get, &d);

	if (err)
		return err;
	err = put_path(procfs_of(n), d, b);
	vfs_dentry_put(d);
	return err;
}

static int readlink_cwd(struct kernfs_node *n, struct kernfs_buf *b)
{
	return readlink_dentry(n, b, procfs_of(n)->ops->cwd);
}

static int dentry_cwd(struct kernfs_node *n, struct vfs_dentry **out)
{
	return get_dentry(n, procfs_of(n)->ops->cwd, out);
}

/* /proc/PID/root reads as the path of the process's root from the reader's: "/" when they
 * share it. Following it lands on that root, as on Linux. */
static int readlink_root(struct kernfs_node *n, struct kernfs_buf *b)
{
	return readlink_dentry(n, b, procfs_of(n)->ops->root);
}

static int dentry_root(struct kernfs_node *n, struct vfs_dentry **out)
{
	return get_dentry(n, procfs_of(n)->ops->root, out);
}

static int readlink_exe(struct kernfs_node *n, struct kernfs_buf *b)
{
	return readlink_dentry(n, b, procfs_of(n)->ops->exe);
}

static int dentry_exe(struct kernfs_node *n, struct vfs_dentry **out)
{
	return get_dentry(n, procfs_of(n)->ops->exe, out);
}

/* fd/ and fdinfo/ */

static int fd_file(struct kernfs_node *n, struct vfs_file **f, bool *cloexec)
{
	int err =
	    procfs_of(n)->ops->fd_file(pid_of(n), (int)kernfs_key(n, PROCFS_KEY_FD), f, cloexec);

	return err == -ESRCH ? -ENOENT : err;
}

static int link_file_fd(struct kernfs_node *n, struct vfs_file **out)
{
	bool cloexec;

	return fd_file(n, out, &cloexec);
}

static int readlink_fd(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct vfs_file *f;
	struct stat st;
	char tbuf[64];
	bool cloexec;
	int err = fd_file(n, &f, &cloexec);

	if (err)
		return err;
	if (f->dentry) {
		err = put_path(procfs_of(n), f->dentry, b);
	} else if (vfs_is_eventfd(f)) {
		kernfs_buf_puts(b, "anon_inode:[eventfd]");
	} else if (vfs_is_epoll(f)) {
		kernfs_buf_puts(b, "anon_inode:[eventpoll]");
	} else if (vfs_is_inotify(f)) {
		kernfs_buf_puts(b, "anon_inode:inotify");
	} else if (f->ops->getattr && f->ops->getattr(f, &st) == 0 &&
		   (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		kernfs_buf_printf(b, "%s:[%llu]", S_ISFIFO(st.st_mode) ? "pipe" : "socket",
				  (unsigned long long)st.st_ino);
	} else if (f->ops->ioctl && f->ops->ioctl(f, TCGETS, tbuf) == 0) {
		kernfs_buf_puts(b, "/dev/pts/0"); /* the sandbox's terminal (sentry/kernel.c) */
	} else if (f->ops->host_fd && f->ops->host_fd(f) >= 0 && f->ops->getattr &&
		   f->ops->getattr(f, &st) == 0) {
		/* A host file handed in as stdio: its host path is not the guest's business. */
		kernfs_buf_printf(b, "host:[%llu]", (unsigned long long)st.st_ino);
	} else {
		kernfs_buf_puts(b, "anon_inode:[unknown]");
	}
	vfs_file_put(f);
	return err;
}

/* A descriptor's link shows how it is open: r-x for reading, -wx for writing. */
static void fd_link_getattr(struct kernfs_node *n, struct stat *st)
{
	struct vfs_file *f;
	bool cloexec;

	procfs_pid_owner(n, st);
	if (fd_file(n, &f, &cloexec))
		return;
	st->st_mode = S_IFLNK;
	if ((f->flags & O_ACCMODE) != O_WRONLY)
		st->st_mode |= S_IRUSR | S_IXUSR;
	if ((f->flags & O_ACCMODE) != O_RDONLY)
		st->st_mode |= S_IWUSR | S_IXUSR;
	st->st_size = 64;
	vfs_file_put(f);
}

/* Linux's inotify_fdinfo line for one watch (without a file handle): the device as the
 * kernel encodes it inside (major << 20 | minor). */
static void show_inotify_watch(int wd, uint32_t mask, struct vfs_dentry *d, void *arg)
{
	struct stat st = {0};

	vfs_stat(d, &st);
	kernfs_buf_printf(arg, "inotify wd:%x ino:%llx sdev:%x mask:%x ignored_mask:0\n", wd,
			  (unsigned long long)st.st_ino,
			  (unsigned int)(major(st.st_dev) << 20 | minor(st.st_dev)), mask);
}

static int show_fdinfo(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct vfs_file *f;
	struct stat st = {0};
	bool cloexec;
	int err = fd_file(n, &f, &cloexec);

	if (err)
		return err;
	if (f->ops->getattr)
		f->ops->getattr(f, &st);
	kernfs_buf_printf(b, "pos:\t%lld\nflags:\t0%o\nmnt_id:\t%d\nino:\t%llu\n",
			  (long long)f->pos, (unsigned int)(f->flags | (cloexec ? O_CLOEXEC : 0)),
			  vfs_mount_id(f->dentry), (unsigned long long)st.st_ino);
	if (vfs_is_eventfd(f))
		kernfs_buf_printf(b, "eventfd-count: %16llx\n",
				  (unsigned long long)vfs_eventfd_count(f));
	if (vfs_is_inotify(f))
		vfs_inotify_foreach_watch(f, show_inotify_watch, b);
	vfs_file_put(f);
	return 0;
}

static const struct kernfs_entry fd_link_entry = {.mode = S_IFLNK | 0700,
						  .flags = KERNFS_MAGIC_LINK,
						  .readlink = readlink_fd,
						  .link_file = link_file_fd,
						  .getattr = fd_link_getattr};
static const struct kernfs_entry fdinfo_entry = {.mode = S_IFREG | 0444,
						 .flags = KERNFS_WRITE_EINVAL,
						 .show = show_fdinfo,
						 .getattr = procfs_pid_owner};

static int parse_num(const char *name, long *out)
{
	char *end;
	long v;

	if (name[0] < '0' || name[0] > '9' || (name[0] == '0' && name[1]))
		return -ENOENT;
	v = strtol(name, &end, 10);
	if (*end || v < 0 || v > 0x7fffffff)
		return -ENOENT;
	*out = v;
	return 0;
}

static int get_fds(struct kernfs_node *dir, int **out)
{
	const struct procinfo_ops *ops = procfs_of(dir)->ops;
	int max = 64, n;
	int *fds;

	for (;;) {
		fds = malloc((size_t)max * sizeof(*fds));
		if (!fds)
			return -ENOMEM;
		n = ops->fds(pid_of(dir), fds, max);
		if (n <= max)
			break;
		free(fds);
		max = n + 16;
	}
	if (n < 0)
		free(fds);
	else
		*out = fds;
	return n;
}

static int fd_iterate_as(struct kernfs_node *dir, kernfs_emit_fn emit, void *ctx, mode_t mode)
{
	char name[16];
	int *fds, n = get_fds(dir, &fds);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%d", fds[i]);
		if (emit(ctx, name, mode, fds[i]))
			break;
	}
	free(fds);
	return 0;
}

static int fd_iterate(struct kernfs_node *dir, kernfs_emit_fn emit, void *ctx)
{
	return fd_iterate_as(dir, emit, ctx, S_IFLNK);
}

static int fdinfo_iterate(struct kernfs_node *dir, kernfs_emit_fn emit, void *ctx)
{
	return fd_iterate_as(dir, emit, ctx, S_IFREG);
}

static int fd_lookup_as(struct kernfs_node *dir, const char *name, struct kernfs_child_desc *out,
			const struct kernfs_entry *e)
{
	struct vfs_file *f;
	bool cloexec;
	long fd;
	int err = parse_num(name, &fd);

	if (err)
		return err;
	if (!procfs_restoring()) {
		err = procfs_of(dir)->ops->fd_file(pid_of(dir), (int)fd, &f, &cloexec);
		if (err)
			return -ENOENT;
		vfs_file_put(f);
	}
	out->entry = e;
	out->key[PROCFS_KEY_FD] = fd;
	out->arg = fd;
	return 0;
}

static int fd_lookup(struct kernfs_node *dir, const char *name, struct kernfs_child_desc *out)
{
	return fd_lookup_as(dir, name, out, &fd_link_entry);
}

static int fdinfo_lookup(struct kernfs_node *dir, const char *name, struct kernfs_child_desc *out)
{
	return fd_lookup_as(dir, name, out, &fdinfo_entry);
}

static const struct kernfs_dyn_ops fd_dyn = {.iterate = fd_iterate, .lookup = fd_lookup};
static const struct kernfs_dyn_ops fdinfo_dyn = {.iterate = fdinfo_iterate,
						 .lookup = fdinfo_lookup};

/* task/ */

static const struct kernfs_entry tid_entry;

static int get_tids(struct kernfs_node *dir, pid_t **out)
{
	const struct procinfo_ops *ops = procfs_of(dir)->ops;
	int max = 16, n;
	pid_t *tids;

	for (;;) {
		tids = malloc((size_t)max * sizeof(*tids));
		if (!tids)
			return -ENOMEM;
		n = ops->tids(pid_of(dir), tids, max);
		if (n <= max)
			break;
		free(tids);
		max = n + 16;
	}
	if (n < 0)
		free(tids);
	else
		*out = tids;
	return n;
}

static int task_iterate(struct kernfs_node *dir, kernfs_emit_fn emit, void *ctx)
{
	char name[16];
	pid_t *tids;
	int n = get_tids(dir, &tids);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%d", tids[i]);
		if (emit(ctx, name, S_IFDIR, tids[i]))
			break;
	}
	free(tids);
	return 0;
}

static int task_lookup(struct kernfs_node *dir, const char *name, struct kernfs_child_desc *out)
{
	pid_t *tids;
	long tid;
	int n, err = parse_num(name, &tid);

	if (err)
		return err;
	if (!procfs_restoring()) {
		n = get_tids(dir, &tids);
		if (n < 0)
			return -ENOENT;
		err = -ENOENT;
		for (int i = 0; i < n; i++)
			if (tids[i] == tid)
				err = 0;
		free(tids);
		if (err)
			return err;
	}
	out->entry = &tid_entry;
	out->key[PROCFS_KEY_TID] = tid;
	out->arg = tid;
	return 0;
}

/* task/ counts a link per thread, as Linux's proc_task_getattr. */
static void task_getattr(struct kernfs_node *n, struct stat *st)
{
	pid_t *tids;
	int nt = get_tids(n, &tids);

	procfs_pid_owner(n, st);
	if (nt > 0) {
		st->st_nlink += (nlink_t)nt;
		free(tids);
	}
}

static const struct kernfs_dyn_ops task_dyn = {.iterate = task_iterate, .lookup = task_lookup};

/* The rows. */

#define COMMON_ROWS                                                                                \
	{.name = "fd", .mode = S_IFDIR | 0500, .dyn = &fd_dyn, .getattr = procfs_pid_owner},       \
	    {.name = "fdinfo",                                                                     \
	     .mode = S_IFDIR | 0500,                                                               \
	     .dyn = &fdinfo_dyn,                                                                   \
	     .getattr = procfs_pid_owner},                                                         \
	    FILE_ROW("environ", 0400, show_environ), FILE_ROW("status", 0444, show_status),        \
	    FILE_ROW("limits", 0444, show_limits), FILE_ROW("comm", 0644, show_comm),              \
	    FILE_ROW("cmdline", 0444, show_cmdline), FILE_ROW("stat", 0444, show_stat),            \
	    FILE_ROW("statm", 0444, show_statm), FILE_ROW("maps", 0444, show_maps),                \
	    LINK_ROW("cwd", readlink_cwd, dentry_cwd),                                             \
	    {.name = "ns",                                                                         \
	     .mode = S_IFDIR | 0511,                                                               \
	     .flags = KERNFS_LAZY,                                                                 \
	     .children = procfs_ns_rows,                                                           \
	     .getattr = procfs_pid_owner},                                                         \
	    {.name = "net",                                                                        \
	     .mode = S_IFDIR | 0555,                                                               \
	     .flags = KERNFS_LAZY,                                                                 \
	     .children = procfs_net_rows,                                                          \
	     .getattr = procfs_pid_owner},                                                         \
	    LINK_ROW("root", readlink_root, dentry_root),                                          \
	    LINK_ROW("exe", readlink_exe, dentry_exe),                                             \
	    FILE_ROW("mounts", 0444, procfs_show_mounts),                                          \
	    FILE_ROW("mountinfo", 0444, procfs_show_mountinfo),                                    \
	    FILE_ROW("smaps", 0444, show_smaps),                                                   \
	    FILE_ROW("smaps_rollup", 0444, show_smaps_rollup),                                     \
	    FILE_ROW("wchan", 0444, show_wchan), FILE_ROW("schedstat", 0444, show_schedstat),      \
	    FILE_ROW("cpuset", 0444, show_cpuset), FILE_ROW("cgroup", 0444, show_cgroup),          \
	    FILE_ROW("oom_score", 0444, show_zero),                                                \
	    {.name = "oom_adj",                                                                    \
	     .mode = S_IFREG | 0644,                                                               \
	     .show = show_oom_adj,                                                                 \
	     .store = store_oom_adj,                                                               \
	     .getattr = procfs_pid_owner},                                                         \
	    {.name = "oom_score_adj",                                                              \
	     .mode = S_IFREG | 0644,                                                               \
	     .show = show_oom_score_adj,                                                           \
	     .store = store_oom_score_adj,                                                         \
	     .getattr = procfs_pid_owner},                                                         \
	    FILE_ROW("loginuid", 0644, show_loginuid), FILE_ROW("io", 0400, show_io)

static const struct kernfs_entry tgid_rows[] = {
    {.name = "task", .mode = S_IFDIR | 0555, .dyn = &task_dyn, .getattr = task_getattr},
    COMMON_ROWS,
    FILE_ROW("mountstats", 0400, procfs_show_mountstats),
};

static const struct kernfs_entry tid_rows[] = {COMMON_ROWS};

const struct kernfs_entry procfs_pid_entry = {
    .mode = S_IFDIR | 0555,
    .flags = KERNFS_LAZY,
    .children = tgid_rows,
    .nchildren = sizeof(tgid_rows) / sizeof(tgid_rows[0]),
    .getattr = procfs_pid_owner,
};

static const struct kernfs_entry tid_entry = {
    .mode = S_IFDIR | 0555,
    .flags = KERNFS_LAZY,
    .children = tid_rows,
    .nchildren = sizeof(tid_rows) / sizeof(tid_rows[0]),
    .getattr = procfs_pid_owner,
};
