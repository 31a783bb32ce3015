/* The Sentry's part of a checkpoint: quiescing the sandbox, the kernel record, tasks with their
 * registers and signal state, filesystem contexts and signal handler tables — and, on restore,
 * the new host threads and the order in which the restored tasks start again. The image is
 * assembled by state/checkpoint.c, which calls the save and load functions here through its
 * table of kinds. */
#include "sentry/checkpoint.h"
#include "sentry/confine.h"
#include "sentry/filecache.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "fs-proc/procfs.h"
#include "mem/memfile.h"
#include "platform/platform.h"
#include "sentry/fdtable.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/task.h"
#include "sentry/timer.h"
#include "state/codec.h"
#include "vfs/save.h"

/* --- quiesce ------------------------------------------------------------------------------- */

/* A thread caught entering a syscall while it was being stopped is put back onto its syscall
 * instruction, as Linux does for a restart: resumed (now or after a restore) it makes the
 * syscall again, so no task is ever saved half-way into one. */
static int rewind_syscall(struct task *t)
{
	struct user_regs_struct regs;
	int err = platform_get_regs(t->pt, &regs);

	if (err)
		return err;
	regs.rax = regs.orig_rax;
	regs.rip -= 2;
	regs.orig_rax = -1;
	return platform_set_regs(t->pt, &regs);
}

int kernel_quiesce(void)
{
	int running = 0;

	for (struct task *t = kernel.tasks; t; t = t->next)
		if (t->running && t->pt && platform_interrupt(t->pt) == 0)
			running++;
	while (running > 0) {
		struct platform_event ev;
		int r = platform_wait(&ev, true);
		if (r == -EINTR)
			continue;
		if (r)
			return r;
		struct task *t = task_by_host_tid(ev.tid);
		if (!t) {
			if (ev.kind != PEV_EXITED)
				platform_continue_stray(ev.tid);
			continue;
		}
		if (!t->running)
			continue;
		t->running = false;
		running--;
		switch (ev.kind) {
		case PEV_SYSCALL:
			if ((r = rewind_syscall(t)))
				return r;
			break;
		case PEV_SIGNAL:
			/* A fault is raised again by the same instruction when the thread goes on;
			 * a host signal aimed at a stub is never the guest's. */
		case PEV_STOP:
			break;
		case PEV_EXITED:
			t->pt->tid = -1;
			kernel_exit_group(t, ev.sig ? ev.sig : ev.exit_status << 8);
			break;
		}
	}
	kernel_free_dead();
	return 0;
}

void kernel_unquiesce(void)
{
	for (struct task *t = kernel.tasks; t; t = t->next)
		if (t->pt && !t->running && !t->blocked && !t->parked &&
		    signal_deliver(t, 0, false))
			kernel_resume(t);
}

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
uint32_t kernel_rootfs_fingerprint(const char *rootfs)
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

/* --- the kernel record --------------------------------------------------------------------- */

static void enc_ts(struct enc *e, struct timespec ts)
{
	enc_i64(e, ts.tv_sec);
	enc_i64(e, ts.tv_nsec);
}

static struct timespec dec_ts(struct dec *d)
{
	struct timespec ts = {dec_i64(d), dec_i64(d)};

	if (ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
		dec_fail(d, "bad time");
	return ts;
}

int kernel_ckpt_save(struct enc *e)
{
	uint64_t ntasks = 0;

	/* Cached file pages no mapping holds would be saved as memory: the cache goes (it is
	 * refilled on demand). */
	filecache_clear();

	/* The rootfs by its host path, and its fingerprint as the locked Sentry reaches it. */
	const char *reach = confine_rootfs(kernel.cfg.rootfs);
	if (!reach)
		return enc_fail(e, "rootfs '%s': %s", kernel.cfg.rootfs, strerror(errno));
	enc_str(e, kernel.cfg.rootfs);
	enc_u32(e, kernel_rootfs_fingerprint(reach));
	enc_u32(e, kernel.cfg.cpus);
	enc_bool(e, kernel.cfg.eager_kernfs);
	enc_u32(e, kernel.next_pid);
	enc_u32(e, kernel.tty_sid);
	enc_u32(e, kernel.tty_fg_pgid);
	enc_ts(e, kernel.boot_mono);
	enc_ts(e, kernel.boot_real);
	enc_u64(e, kernel.forks);
	enc_ts(e, mono_now());
	enc_u64(e, platform_fpstate_size());
	enc_u64(e, platform_xfeatures());
	/* Tasks are queued in list order (the order restore links them in); their records
	 * follow in the tasks section. */
	for (struct task *t = kernel.tasks; t; t = t->next)
		ntasks++;
	enc_u64(e, ntasks);
	for (struct task *t = kernel.tasks; t; t = t->next)
		if (!ckpt_refs_id(e->refs, CK_TASK, t))
			return enc_fail(e, "out of memory");
	return procfs_state_save(e);
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
	kernel.boot_mono = dec_ts(d);
	kernel.boot_real = dec_ts(d);
	kernel.forks = dec_u64(d);
	struct timespec guest_now = dec_ts(d);
	uint64_t fpsize = dec_u64(d), xfeatures = dec_u64(d);
	dec_u64(d); /* the task count: inspect's */
	if (dec_ok(d))
		procfs_state_load(d);
	if (!dec_ok(d) || kernel.cfg.cpus < 1 || kernel.cfg.cpus > 512 || kernel.next_pid < 2)
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
	if (kernel_rootfs_fingerprint(use) != fingerprint && !o->force)
		return dec_fail(
		    d, "rootfs '%s' is not the one the image was taken on (--force uses it anyway)",
		    use);
	free(kernel_restore_rootfs);
	kernel_restore_rootfs = strdup(use);
	if (!kernel_restore_rootfs)
		return dec_fail(d, "out of memory");
	kernel.cfg.rootfs = kernel_restore_rootfs;
	mono_continue_from(guest_now);
	return 0;
}

char *kernel_restore_rootfs;

static int make_fs(const char *fs_type, struct vfs_dentry **root)
{
	if (!strcmp(fs_type, "proc"))
		return kernel_new_procfs(root);
	if (!strcmp(fs_type, "sysfs"))
		return kernel_new_sysfs(root);
	return -ENODEV;
}

int kernel_vfs_save(struct enc *e)
{
	return vfs_save(e);
}

int kernel_vfs_load(struct dec *d)
{
	const char *reach = confine_rootfs(kernel.cfg.rootfs);

	if (!reach)
		return dec_fail(d, "rootfs '%s': %s", kernel.cfg.rootfs, strerror(errno));
	return vfs_load(d, reach, make_fs, &kernel.root);
}

/* --- filesystem contexts and signal handler tables ----------------------------------------- */

int fsctx_save(struct enc *e, const void *obj)
{
	const struct vfs_fs_ctx *fs = obj;

	enc_ref(e, CK_DENTRY, fs->root);
	enc_ref(e, CK_DENTRY, fs->cwd);
	enc_u32(e, fs->umask);
	return 0;
}

void *fsctx_load(struct dec *d)
{
	struct vfs_dentry *root = dec_ref(d, CK_DENTRY), *cwd = dec_ref(d, CK_DENTRY);
	mode_t umask = dec_u32(d);

	if (!dec_ok(d) || !root || !cwd || (umask & ~0777)) {
		dec_fail(d, "bad filesystem context");
		return NULL;
	}
	struct vfs_fs_ctx *fs = fs_new(root, cwd, umask);
	if (!fs)
		dec_fail(d, "out of memory");
	return fs;
}

void fsctx_drop(void *fs)
{
	fs_put(fs);
}

int sighand_save(struct enc *e, const void *obj)
{
	const struct sighand *sh = obj;

	for (int i = 0; i < NSIG_GUEST; i++) {
		enc_u64(e, sh->act[i].handler);
		enc_u64(e, sh->act[i].flags);
		enc_u64(e, sh->act[i].restorer);
		enc_u64(e, sh->act[i].mask);
	}
	return 0;
}

void *sighand_load(struct dec *d)
{
	struct sighand *sh = calloc(1, sizeof(*sh));

	if (!sh) {
		dec_fail(d, "out of memory");
		return NULL;
	}
	sh->refs = 1;
	for (int i = 0; i < NSIG_GUEST; i++) {
		sh->act[i].handler = dec_u64(d);
		sh->act[i].flags = dec_u64(d);
		sh->act[i].restorer = dec_u64(d);
		sh->act[i].mask = dec_u64(d);
	}
	if (!dec_ok(d)) {
		free(sh);
		return NULL;
	}
	return sh;
}

void sighand_drop(void *obj)
{
	struct sighand *sh = obj;

	if (--sh->refs == 0)
		free(sh);
}

/* --- tasks --------------------------------------------------------------------------------- */

static void pending_save(struct enc *e, const struct sigpending *p)
{
	uint64_t n = 0;

	enc_u64(e, p->set);
	for (const struct sigqueued *q = p->head; q; q = q->next)
		n++;
	enc_u64(e, n);
	for (const struct sigqueued *q = p->head; q; q = q->next)
		enc_raw(e, &q->info, sizeof(q->info));
}

static void pending_load(struct dec *d, struct sigpending *p)
{
	struct sigqueued **tail = &p->head;

	p->set = dec_u64(d);
	uint64_t n = dec_max(d, 1 << 16, "signal queue");
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		struct sigqueued *q = calloc(1, sizeof(*q));
		if (!q) {
			dec_fail(d, "out of memory");
			return;
		}
		*tail = q;
		tail = &q->next;
		dec_raw(d, &q->info, sizeof(q->info));
		if (q->info.si_signo < 1 || q->info.si_signo > NSIG_GUEST ||
		    !(p->set & SIGBIT(q->info.si_signo)))
			dec_fail(d, "bad queued signal");
	}
}

static void syscall_save(struct enc *e, const struct platform_syscall *sc)
{
	enc_i64(e, sc->nr);
	for (int i = 0; i < 6; i++)
		enc_u64(e, sc->args[i]);
	enc_u64(e, sc->ip);
	enc_u64(e, sc->sp);
	enc_bool(e, sc->native);
}

static void syscall_load(struct dec *d, struct platform_syscall *sc)
{
	sc->nr = dec_i64(d);
	for (int i = 0; i < 6; i++)
		sc->args[i] = dec_u64(d);
	sc->ip = dec_u64(d);
	sc->sp = dec_u64(d);
	sc->native = dec_bool(d);
}

/* The task whose syscall asked for the checkpoint (--save-restore-test) gets this result. */
static struct task *saving_task;
static long saving_result;

void kernel_ckpt_set_caller(struct task *t, long result)
{
	saving_task = t;
	saving_result = result;
}

int task_save(struct enc *e, const void *obj)
{
	const struct task *t = obj;

	if (t->vfork_parent || t->vfork_child)
		return enc_fail(e, "a vfork child that has not exec'd yet");
	enc_u32(e, t->tid);
	enc_u32(e, t->tgid);
	enc_u32(e, t->pgid);
	enc_u32(e, t->sid);
	enc_u32(e, t->group_leader ? t->group_leader->tid : 0);
	enc_u32(e, t->parent ? t->parent->tid : 0);
	enc_u32(e, t->exit_signal);
	enc_bool(e, t->zombie);
	enc_u32(e, t->exit_status);
	enc_ts(e, t->cpu_time);
	/* The stubs a restore makes start from zero: the process's time so far is its base. */
	enc_ts(e, t->group_leader == t && t->pt ? process_cpu_time((struct task *)t) : t->cpu_base);
	enc_u32(e, t->uid);
	enc_u32(e, t->euid);
	enc_u32(e, t->suid);
	enc_u32(e, t->gid);
	enc_u32(e, t->egid);
	enc_u32(e, t->sgid);
	enc_u32(e, t->ngroups);
	for (int i = 0; i < t->ngroups; i++)
		enc_u32(e, t->groups[i]);
	enc_ref(e, CK_MM, t->mm);
	enc_ref(e, CK_FDTABLE, t->files);
	enc_ref(e, CK_FSCTX, t->fs);
	enc_ref(e, CK_SIGHAND, t->sighand);
	enc_u64(e, t->sigmask);
	pending_save(e, &t->pending);
	pending_save(e, &t->shared_pending);
	enc_bool(e, t->has_saved_sigmask);
	enc_u64(e, t->saved_sigmask);
	enc_u64(e, (uintptr_t)t->altstack.ss_sp);
	enc_u32(e, t->altstack.ss_flags);
	enc_u64(e, t->altstack.ss_size);
	enc_i64(e, t->intr_ret);
	enc_u64(e, t->fault_addr);
	enc_u64(e, t->fault_trapno);
	enc_u64(e, t->fault_err);
	enc_ts(e, t->cchild_time);
	enc_i64(e, t->maxrss);
	enc_i64(e, t->cchild_maxrss);
	enc_u64(e, t->rss_peak);
	for (int r = 0; r < RLIM_NLIMITS; r++) {
		enc_u64(e, t->rlim[r].rlim_cur);
		enc_u64(e, t->rlim[r].rlim_max);
	}
	for (int i = 0; i < 8; i++)
		enc_u64(e, t->affinity[i]);
	enc_bool(e, t->did_exec);
	enc_u64(e, t->clear_child_tid);
	enc_u64(e, t->robust_list);
	enc_bool(e, t->no_new_privs);
	enc_u32(e, (uint32_t)t->oom_score_adj);
	enc_raw(e, t->comm, sizeof(t->comm));
	enc_ts(e, t->start_time);
	enc_ref(e, CK_DENTRY, t->exe);
	enc_u64(e, t->rchar);
	enc_u64(e, t->wchar);
	enc_u64(e, t->syscr);
	enc_u64(e, t->syscw);
	enc_u64(e, t->nsyscalls);
	enc_u64(e, t->resumes);
	/* Where it stands in a syscall: blocked ones are retried after a restore. */
	syscall_save(e, &t->sc);
	enc_bool(e, t->blocked);
	enc_bool(e, t->retry);
	enc_bool(e, t->interrupt_pending);
	enc_bool(e, t->sigwait_zero);
	enc_u64(e, t->sigwait_set);
	enc_bool(e, t->child_subreaper);
	enc_u32(e, t->pdeath_signal);
	timers_save(e, t);
	enc_bool(e, t->thread_gone);
	enc_bool(e, t->had_threads);
	enc_bool(e, t->stopped);
	enc_u32(e, t->stop_sig);
	enc_bool(e, t->stop_report);
	enc_bool(e, t->cont_report);
	enc_bool(e, t->parked);
	enc_ts(e, t->sys_deadline);
	enc_u64(e, t->io_done);
	enc_ref(e, CK_FILE, t->pending_open);
	enc_bool(e, t->futex_woken);
	enc_bool(e, t->futex_timed);
	enc_bool(e, t->futex_requeued);
	enc_u64(e, t->futex_key);
	/* The host thread's registers, as they must be when it next runs. */
	enc_bool(e, t->pt != NULL);
	if (t->pt) {
		struct user_regs_struct regs;
		size_t fpsize = platform_fpstate_size();
		void *fp = malloc(fpsize);
		int err = fp ? platform_get_regs(t->pt, &regs) : -ENOMEM;
		if (!err)
			err = platform_get_fpstate(t->pt, fp, fpsize);
		if (err) {
			free(fp);
			return enc_fail(e, "cannot read the registers of task %d: %s", t->tid,
					strerror(-err));
		}
		if (t == saving_task && !t->blocked)
			regs.rax = saving_result;
		enc_raw(e, &regs, sizeof(regs));
		enc_raw(e, fp, fpsize);
		free(fp);
	}
	return enc_ok(e) ? 0 : -ENOMEM;
}

/* Restore's bookkeeping between task records and the finish. */
static struct {
	struct task **tasks;
	pid_t *leader, *parent;
	size_t n, cap;
} loaded;

static int remember(struct task *t, pid_t leader, pid_t parent)
{
	if (loaded.n == loaded.cap) {
		size_t cap = loaded.cap ? 2 * loaded.cap : 64;
		struct task **tt = realloc(loaded.tasks, cap * sizeof(*tt));
		pid_t *l = tt ? realloc(loaded.leader, cap * sizeof(*l)) : NULL;
		if (tt)
			loaded.tasks = tt;
		if (l)
			loaded.leader = l;
		pid_t *p = l ? realloc(loaded.parent, cap * sizeof(*p)) : NULL;
		if (!p)
			return -ENOMEM;
		loaded.parent = p;
		loaded.cap = cap;
	}
	loaded.tasks[loaded.n] = t;
	loaded.leader[loaded.n] = leader;
	loaded.parent[loaded.n] = parent;
	loaded.n++;
	return 0;
}

/* A host thread for T in its mm's stub: the stub's first thread for the first task of the
 * mm, a new one for the others. */
static int claim_thread(struct task *t)
{
	for (size_t i = 0; i < loaded.n; i++)
		if (loaded.tasks[i]->mm == t->mm && loaded.tasks[i]->pt)
			return platform_thread_new(t->mm->via, &t->pt);
	t->pt = t->mm->via;
	return 0;
}

static bool valid_pid(int64_t pid)
{
	return pid > 0 && pid < (1 << 22);
}

void *task_load(struct dec *d)
{
	pid_t tid = (pid_t)dec_u32(d);
	struct task *t = valid_pid(tid) ? task_new(tid) : NULL;

	if (!t) {
		dec_fail(d, valid_pid(tid) ? "out of memory" : "bad task id");
		return NULL;
	}
	t->tgid = (pid_t)dec_u32(d);
	t->pgid = (pid_t)dec_u32(d);
	t->sid = (pid_t)dec_u32(d);
	pid_t leader = (pid_t)dec_u32(d), parent = (pid_t)dec_u32(d);
	t->exit_signal = (int)dec_u32(d);
	t->zombie = dec_bool(d);
	t->exit_status = (int)dec_u32(d);
	t->cpu_time = dec_ts(d);
	t->cpu_base = dec_ts(d);
	t->uid = dec_u32(d);
	t->euid = dec_u32(d);
	t->suid = dec_u32(d);
	t->gid = dec_u32(d);
	t->egid = dec_u32(d);
	t->sgid = dec_u32(d);
	t->ngroups = (int)dec_u32(d);
	if (t->ngroups < 0 || t->ngroups > 65536) {
		t->ngroups = 0;
		dec_fail(d, "bad group count");
	}
	if (t->ngroups && dec_ok(d)) {
		t->groups = calloc(t->ngroups, sizeof(gid_t));
		if (!t->groups)
			t->ngroups = 0, dec_fail(d, "out of memory");
	}
	for (int i = 0; i < t->ngroups; i++)
		t->groups[i] = dec_u32(d);
	struct mm *mm = dec_ref(d, CK_MM);
	struct fdtable *files = dec_ref(d, CK_FDTABLE);
	struct vfs_fs_ctx *fs = dec_ref(d, CK_FSCTX);
	struct sighand *sh = dec_ref(d, CK_SIGHAND);
	if (mm)
		(t->mm = mm)->refs++;
	if (files)
		(t->files = files)->refs++;
	if (fs)
		t->fs = fs_get(fs);
	if (sh)
		(t->sighand = sh)->refs++;
	t->sigmask = dec_u64(d) & ~UNBLOCKABLE;
	pending_load(d, &t->pending);
	pending_load(d, &t->shared_pending);
	t->has_saved_sigmask = dec_bool(d);
	t->saved_sigmask = dec_u64(d);
	t->altstack.ss_sp = (void *)(uintptr_t)dec_u64(d);
	t->altstack.ss_flags = (int)dec_u32(d);
	t->altstack.ss_size = dec_u64(d);
	t->intr_ret = (int)dec_i64(d);
	t->fault_addr = dec_u64(d);
	t->fault_trapno = dec_u64(d);
	t->fault_err = dec_u64(d);
	t->cchild_time = dec_ts(d);
	t->maxrss = dec_i64(d);
	t->cchild_maxrss = dec_i64(d);
	t->rss_peak = dec_u64(d);
	for (int r = 0; r < RLIM_NLIMITS; r++) {
		t->rlim[r].rlim_cur = dec_u64(d);
		t->rlim[r].rlim_max = dec_u64(d);
	}
	for (int i = 0; i < 8; i++)
		t->affinity[i] = dec_u64(d);
	t->did_exec = dec_bool(d);
	t->clear_child_tid = dec_u64(d);
	t->robust_list = dec_u64(d);
	t->no_new_privs = dec_bool(d);
	t->oom_score_adj = (int)dec_u32(d);
	if (t->oom_score_adj < -1000 || t->oom_score_adj > 1000)
		dec_fail(d, "bad oom_score_adj");
	dec_raw(d, t->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = 0;
	t->start_time = dec_ts(d);
	struct vfs_dentry *exe = dec_ref(d, CK_DENTRY);
	if (exe)
		t->exe = vfs_dentry_get(exe);
	t->rchar = dec_u64(d);
	t->wchar = dec_u64(d);
	t->syscr = dec_u64(d);
	t->syscw = dec_u64(d);
	t->nsyscalls = dec_u64(d);
	t->resumes = dec_u64(d);
	syscall_load(d, &t->sc);
	t->blocked = dec_bool(d);
	t->retry = dec_bool(d);
	t->interrupt_pending = dec_bool(d);
	t->sigwait_zero = dec_bool(d);
	t->sigwait_set = dec_u64(d);
	t->child_subreaper = dec_bool(d);
	t->pdeath_signal = (int)dec_u32(d);
	/* Timers live on a process's leader: itself, until the finish links the others. */
	t->group_leader = leader == tid ? t : NULL;
	if (t->group_leader)
		timers_load(d, t);
	else if (dec_bool(d))
		dec_fail(d, "timers on a thread that does not lead its process");
	t->thread_gone = dec_bool(d);
	t->had_threads = dec_bool(d);
	t->stopped = dec_bool(d);
	t->stop_sig = (int)dec_u32(d);
	t->stop_report = dec_bool(d);
	t->cont_report = dec_bool(d);
	t->parked = dec_bool(d);
	t->sys_deadline = dec_ts(d);
	t->io_done = dec_u64(d);
	struct vfs_file *pending_open = dec_ref(d, CK_FILE);
	if (pending_open)
		t->pending_open = vfs_file_get(pending_open);
	t->futex_woken = dec_bool(d);
	t->futex_timed = dec_bool(d);
	t->futex_requeued = dec_bool(d);
	t->futex_key = dec_u64(d);
	bool has_thread = dec_bool(d);
	if (dec_ok(d) &&
	    (!valid_pid(t->tgid) || !valid_pid(t->pgid) || !valid_pid(t->sid) ||
	     !valid_pid(leader) || (parent && !valid_pid(parent)) || t->exit_signal < 0 ||
	     t->exit_signal > NSIG_GUEST || t->pdeath_signal < 0 || t->pdeath_signal > NSIG_GUEST ||
	     task_by_tid(tid) || (has_thread && (!t->mm || !t->files || !t->fs || !t->sighand))))
		dec_fail(d, "bad task %d", tid);
	if (has_thread && dec_ok(d)) {
		struct user_regs_struct regs;
		size_t fpsize = platform_fpstate_size();
		const void *fp;
		int err;
		dec_raw(d, &regs, sizeof(regs));
		fp = dec_view(d, fpsize);
		if (dec_ok(d)) {
			if ((err = claim_thread(t)) || (err = platform_set_regs(t->pt, &regs)) ||
			    (err = platform_set_fpstate(t->pt, fp, fpsize)))
				dec_fail(d, "cannot restore the thread of task %d: %s", tid,
					 strerror(-err));
		}
	}
	if (dec_ok(d) && remember(t, leader, parent))
		dec_fail(d, "out of memory");
	if (!dec_ok(d)) {
		timers_release(t);
		task_free(t);
		return NULL;
	}
	task_link(t);
	return t;
}

/* Links what the task records name by pid, then lets every task go on from where it was:
 * blocked ones retry their syscall (re-registering what they wait on), stopped ones get their
 * pending signals and run, parked ones stay stopped with their group. */
int kernel_restore_finish(char **err)
{
	int ret = 0;

	for (size_t i = 0; i < loaded.n && !ret; i++) {
		struct task *t = loaded.tasks[i];
		t->group_leader = task_by_tid(loaded.leader[i]);
		t->parent = loaded.parent[i] ? task_by_tid(loaded.parent[i]) : NULL;
		if (!t->group_leader || t->group_leader->tgid != t->tgid ||
		    (loaded.parent[i] && !t->parent))
			ret = -EINVAL;
	}
	free(loaded.tasks);
	free(loaded.leader);
	free(loaded.parent);
	loaded.tasks = NULL;
	loaded.leader = loaded.parent = NULL;
	size_t n = loaded.n;
	loaded.n = loaded.cap = 0;
	if (ret || n == 0 || !task_by_tid(1)) {
		*err = strdup("the image's tasks are inconsistent");
		return -EINVAL;
	}
	for (struct task *t = kernel.tasks; t; t = t->next) {
		if (t->mm && t->pt)
			t->mm->via = t->pt;
		if (t->timers)
			t->timers->leader = t->group_leader;
	}
	for (struct task *t = kernel.tasks; t; t = t->next) {
		if (!t->pt)
			continue;
		if (t->blocked) {
			task_wake(t);
		} else if (t->parked) {
			continue;
		} else if (signal_deliver(t, 0, false)) {
			kernel_resume(t);
		}
	}
	return 0;
}
