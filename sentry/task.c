/* Task objects: creation with Linux's defaults, lookup by guest or host thread id, filesystem
 * contexts, and how a task is saved in an image and started again from one (its registers,
 * signal state, and where it stands in a syscall). */
#include "common/limits.h"
#include "sentry/task.h"
#include "sentry/caps.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "fs-proc/procfs.h"
#include "sentry/fdtable.h"
#include "sentry/locks.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/mqueue.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/timer.h"
#include "state/codec.h"

struct fs_shared {
	struct vfs_fs_ctx ctx; /* first: a ctx pointer is a fs_shared pointer */
	int refs;
};

struct vfs_fs_ctx *fs_new(struct vfs_dentry *root, struct vfs_dentry *cwd, mode_t umask)
{
	struct fs_shared *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->refs = 1;
	s->ctx.root = vfs_dentry_get(root);
	s->ctx.cwd = vfs_dentry_get(cwd);
	s->ctx.umask = umask;
	return &s->ctx;
}

struct vfs_fs_ctx *fs_get(struct vfs_fs_ctx *fs)
{
	((struct fs_shared *)fs)->refs++;
	return fs;
}

void fs_put(struct vfs_fs_ctx *fs)
{
	struct fs_shared *s = (struct fs_shared *)fs;

	if (!s || --s->refs > 0)
		return;
	vfs_dentry_put(s->ctx.root);
	vfs_dentry_put(s->ctx.cwd);
	free(s);
}

/* A checkpoint saves a context once however many tasks share it (CK_FSCTX). */
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

struct sighand *sighand_new(void)
{
	struct sighand *sh = calloc(1, sizeof(*sh));

	if (!sh || !(sh->sa = calloc(1, sizeof(*sh->sa)))) {
		free(sh);
		return NULL;
	}
	sh->refs = sh->sa->refs = 1;
	return sh;
}

struct sighand *sighand_get(struct sighand *sh)
{
	sh->refs++;
	return sh;
}

void sighand_put(struct sighand *sh)
{
	if (!sh || --sh->refs > 0)
		return;
	if (--sh->sa->refs == 0)
		free(sh->sa);
	free(sh);
}

struct sighand *sighand_fork(struct sighand *sh)
{
	struct sighand *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *sh;
	c->refs = 1;
	c->sa->refs++;
	return c;
}

int sighand_own(struct sighand *sh)
{
	if (sh->sa->refs == 1)
		return 0;
	struct sigactions *sa = malloc(sizeof(*sa));
	if (!sa)
		return -ENOMEM;
	*sa = *sh->sa;
	sa->refs = 1;
	sh->sa->refs--;
	sh->sa = sa;
	return 0;
}

struct task *task_new(pid_t tid)
{
	/* On a cache line of its own start, so that its first 64 bytes are one (task.h). */
	struct task *t = aligned_alloc(64, (sizeof(*t) + 63) / 64 * 64);

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->tid = t->tgid = t->pgid = t->sid = tid;
	t->start_time = mono_now();
	for (int r = 0; r < RLIM_NLIMITS; r++)
		getrlimit(r, &t->rlim[r]);
	/* Linux's defaults for a fresh init, not whatever the Sentry was started with. */
	t->rlim[RLIMIT_NOFILE] = (struct rlimit){1024, 1048576};
	t->rlim[RLIMIT_STACK] = (struct rlimit){8 << 20, RLIM_INFINITY};
	t->rlim[RLIMIT_CORE] = (struct rlimit){0, RLIM_INFINITY};
	return t;
}

void task_release(struct task *t)
{
	task_cancel_wait(t);
	if (t->blk.pending_open) {
		vfs_file_put(t->blk.pending_open);
		t->blk.pending_open = NULL;
	}
	if (t->pt) {
		/* The last user of its memory: the stub goes with this thread, after its writes
		 * are read (mm_collect_writes). */
		if (t->mm && t->mm->refs == 1 && !t->running)
			mm_collect_writes(t->mm);
		platform_thread_release(t->pt);
		task_set_pt(t, NULL);
	}
	mm_put(t->mm);
	t->mm = NULL;
	if (t->files && t->files->refs == 1)
		for (int fd = 0; fd < t->files->n; fd++)
			if (t->files->fds[fd].file)
				task_file_closing(t, t->files->fds[fd].file);
	fdtable_put(t->files);
	t->files = NULL;
	fs_put(t->fs);
	t->fs = NULL;
	if (t->exe) {
		vfs_dentry_put(t->exe);
		t->exe = NULL;
	}
	sighand_put(t->sighand);
	t->sighand = NULL;
	gseccomp_release(t);
}

void task_free(struct task *t)
{
	if (!t)
		return;
	task_release(t);
	timers_release(t); /* a process still alive when the sandbox ends (teardown) */
	signal_free_pending(&t->pending);
	signal_free_pending(&t->shared_pending);
	free(t->groups);
	free(t);
}

/* The task list (for_each_task), oldest first, doubly linked: forks and exits of 10,000
 * processes must not walk it. */
static struct task *task_list, *task_tail;
static size_t task_n;

/* Tasks by tid: what kill, wait and procfs look up constantly. */
#define TID_BUCKETS 16384
static struct task *tid_hash[TID_BUCKETS];

static void hash_remove(struct task *t)
{
	for (struct task **pp = &tid_hash[(unsigned)t->tid % TID_BUCKETS]; *pp;
	     pp = &(*pp)->hash_next)
		if (*pp == t) {
			*pp = t->hash_next;
			return;
		}
}

void task_set_pt(struct task *t, struct platform_thread *pt)
{
	t->pt = pt;
	if (pt)
		pt->owner = t;
}

struct task *task_list_first(void)
{
	return task_list;
}

size_t task_count(void)
{
	return task_n;
}

/* Which pids are those of a process's leader in the task list: a bit per pid, so that
 * procfs's list of processes, asked at every open of /proc/all's files and every readdir of
 * /proc, costs a scan of these words rather than a visit to every task (at 10,000 processes,
 * a cache and TLB miss each). Pids are never reused, and the bits grow with the highest. */
static uint64_t *proc_bits;
static size_t proc_words;

static bool is_process(const struct task *t)
{
	return t->tid == t->tgid;
}

/* False only when the bitmap cannot grow: task_process_ids walks the list from then on. */
static bool proc_bits_ok = true;

static void proc_mark(pid_t pid, bool on)
{
	size_t w = (size_t)pid / 64;

	if (w >= proc_words) {
		if (!on)
			return;
		size_t n = proc_words ? proc_words : 256;
		while (n <= w)
			n *= 2;
		uint64_t *b = realloc(proc_bits, n * sizeof(*b));
		if (!b) {
			proc_bits_ok = false;
			return;
		}
		memset(b + proc_words, 0, (n - proc_words) * sizeof(*b));
		proc_bits = b;
		proc_words = n;
	}
	if (on)
		proc_bits[w] |= 1ULL << (pid % 64);
	else
		proc_bits[w] &= ~(1ULL << (pid % 64));
}

int task_process_ids(pid_t *out, int max)
{
	int n = 0;

	if (!proc_bits_ok) {
		for_each_process(l) {
			if (n < max)
				out[n] = l->tgid;
			n++;
		}
		return n;
	}
	for (size_t w = 0; w < proc_words; w++)
		for (uint64_t bits = proc_bits[w]; bits; bits &= bits - 1) {
			if (n < max)
				out[n] = (pid_t)(w * 64 + (size_t)__builtin_ctzll(bits));
			n++;
		}
	return n;
}

static void list_remove(struct task *t)
{
	if (is_process(t))
		proc_mark(t->tid, false);
	*(t->prev ? &t->prev->next : &task_list) = t->next;
	*(t->next ? &t->next->prev : &task_tail) = t->prev;
	t->prev = NULL;
	task_n--;
}

void task_link(struct task *t)
{
	if (t->pt)
		t->pt->owner = t;
	t->next = NULL;
	t->prev = task_tail;
	*(task_tail ? &task_tail->next : &task_list) = t;
	task_tail = t;
	task_n++;
	if (is_process(t))
		proc_mark(t->tid, true);
	t->hash_next = tid_hash[(unsigned)t->tid % TID_BUCKETS];
	tid_hash[(unsigned)t->tid % TID_BUCKETS] = t;
}

void task_unlink_free(struct task *t)
{
	list_remove(t);
	hash_remove(t);
	/* Handlers and --strace may still look at T until the event is handled. */
	t->exited = true;
	t->next = kernel.dead;
	kernel.dead = t;
}

struct task *task_list_pop(void)
{
	struct task *t = task_list;

	if (t) {
		list_remove(t);
		hash_remove(t);
	}
	return t;
}

/* Every guest stop asks this, so it must not walk the task list: the platform finds the host
 * thread by tid, and the thread remembers its task. A platform thread is released (gone from
 * the platform's table) before its task is freed, so a remembered owner is alive; it is checked
 * to hold the thread still (exec gives a task a new one). */
struct task *task_by_host_tid(pid_t host_tid)
{
	struct platform_thread *pt = platform_thread_by_tid(host_tid);
	struct task *o;

	if (!pt)
		return NULL;
	if ((o = pt->owner) && o->pt == pt)
		return o;
	/* Not remembered yet (an exec's new thread): the newest tasks first, where it nearly
	 * always is. */
	for (struct task *t = task_tail; t; t = t->prev)
		if (t->pt == pt) {
			pt->owner = t;
			return t;
		}
	return NULL;
}

struct task *task_by_tid(pid_t tid)
{
	for (struct task *t = tid_hash[(unsigned)tid % TID_BUCKETS]; t; t = t->hash_next)
		if (t->tid == tid)
			return t;
	return NULL;
}

struct vfs_cred task_fs_cred(const struct task *t)
{
	return (struct vfs_cred){t->euid, t->egid, t->groups, t->ngroups};
}

struct vfs_cred task_real_cred(const struct task *t)
{
	return (struct vfs_cred){t->uid, t->gid, t->groups, t->ngroups};
}

int task_nofile_limit(struct task *t)
{
	rlim_t l = t->rlim[RLIMIT_NOFILE].rlim_cur;

	return l > PROCFS_NR_OPEN_MAX ? PROCFS_NR_OPEN_MAX : (int)l;
}

int task_fsize_check(struct task *t, uint64_t size, uint64_t end)
{
	rlim_t lim = t->rlim[RLIMIT_FSIZE].rlim_cur;

	if (lim == RLIM_INFINITY || end <= size || end <= lim)
		return 0;
	siginfo_t si = {.si_signo = SIGXFSZ, .si_code = SI_KERNEL};
	signal_send_thread(t, SIGXFSZ, &si);
	return -EFBIG;
}

int task_install_file(struct task *t, struct vfs_file *f, bool cloexec)
{
	int fd = fdtable_install(t->files, f, cloexec, 0, task_nofile_limit(t));

	if (fd < 0)
		vfs_file_put(f);
	return fd;
}

void task_file_closing(struct task *t, struct vfs_file *f)
{
	locks_on_close(t, f);
	mqueue_on_close(t, f);
}

/* --- checkpoint and restore (CK_TASK) ------------------------------------------------------ */

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

void task_save_set_caller(struct task *t, long result)
{
	saving_task = t;
	saving_result = result;
}

_Static_assert(CPU_MASK_WORDS == 8, "the CPU limit is part of the image format");

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
	enc_timespec(e, t->cpu_time);
	/* The stubs a restore makes start from zero: the process's time so far is its base. */
	enc_timespec(e, t->group_leader == t && t->pt ? process_cpu_time((struct task *)t)
						      : t->cpu_base);
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
	sigpending_save(e, &t->pending);
	sigpending_save(e, &t->shared_pending);
	enc_bool(e, t->has_saved_sigmask);
	enc_u64(e, t->saved_sigmask);
	enc_u64(e, (uintptr_t)t->altstack.ss_sp);
	enc_u32(e, t->altstack.ss_flags);
	enc_u64(e, t->altstack.ss_size);
	enc_i64(e, t->blk.intr_ret);
	enc_u64(e, t->fault_addr);
	enc_u64(e, t->fault_trapno);
	enc_u64(e, t->fault_err);
	enc_timespec(e, t->cchild_time);
	enc_i64(e, t->maxrss);
	enc_i64(e, t->cchild_maxrss);
	enc_u64(e, t->rss_peak);
	for (int r = 0; r < RLIM_NLIMITS; r++) {
		enc_u64(e, t->rlim[r].rlim_cur);
		enc_u64(e, t->rlim[r].rlim_max);
	}
	for (int i = 0; i < CPU_MASK_WORDS; i++)
		enc_u64(e, t->affinity[i]);
	enc_bool(e, t->did_exec);
	enc_u64(e, t->clear_child_tid);
	enc_u64(e, t->robust_list);
	enc_bool(e, t->no_new_privs);
	enc_u32(e, (uint32_t)t->oom_score_adj);
	enc_u32(e, (uint32_t)t->nice);
	enc_u32(e, (uint32_t)t->sched_policy);
	enc_u32(e, (uint32_t)t->sched_priority);
	enc_bool(e, t->sched_reset_on_fork);
	enc_u64(e, t->cap_eff);
	enc_u64(e, t->cap_prm);
	enc_u64(e, t->cap_inh);
	enc_u64(e, t->cap_bnd);
	enc_u64(e, t->cap_amb);
	enc_u32(e, t->securebits);
	enc_u32(e, t->personality);
	enc_raw(e, t->comm, sizeof(t->comm));
	enc_timespec(e, t->start_time);
	enc_ref(e, CK_DENTRY, t->exe);
	enc_u64(e, t->rchar);
	enc_u64(e, t->wchar);
	enc_u64(e, t->syscr);
	enc_u64(e, t->syscw);
	enc_u64(e, t->nsyscalls);
	enc_u64(e, t->resumes);
	/* Where it stands in a syscall: blocked ones are retried after a restore. */
	syscall_save(e, &t->sc);
	enc_bool(e, t->blk.blocked);
	enc_bool(e, t->blk.retry);
	enc_bool(e, t->blk.interrupt_pending);
	enc_bool(e, t->blk.sigwait_zero);
	enc_u64(e, t->blk.sigwait_set);
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
	enc_timespec(e, t->blk.deadline);
	enc_u64(e, t->blk.io_done);
	enc_ref(e, CK_FILE, t->blk.pending_open);
	enc_bool(e, t->blk.futex_woken);
	enc_bool(e, t->blk.futex_timed);
	enc_bool(e, t->blk.futex_requeued);
	enc_u64(e, t->blk.futex_key);
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
		if (t == saving_task && !t->blk.blocked)
			regs.rax = saving_result;
		enc_raw(e, &regs, sizeof(regs));
		enc_raw(e, fp, fpsize);
		free(fp);
	}
	gseccomp_save_task(e, t); /* last, and only when there is any (seccomp.h) */
	if (t->ioprio) { /* after the seccomp fields, which are then written even for none */
		if (!t->seccomp.mode) {
			enc_u32(e, 0);
			enc_ref(e, CK_SECCOMP, NULL);
		}
		enc_u32(e, t->ioprio);
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
	t->cpu_time = dec_timespec(d);
	t->cpu_base = dec_timespec(d);
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
		t->mm = mm_get(mm);
	if (files)
		t->files = fdtable_get(files);
	if (fs)
		t->fs = fs_get(fs);
	if (sh)
		t->sighand = sighand_get(sh);
	t->sigmask = dec_u64(d) & ~UNBLOCKABLE;
	sigpending_load(d, &t->pending);
	sigpending_load(d, &t->shared_pending);
	t->has_saved_sigmask = dec_bool(d);
	t->saved_sigmask = dec_u64(d);
	t->altstack.ss_sp = (void *)(uintptr_t)dec_u64(d);
	t->altstack.ss_flags = (int)dec_u32(d);
	t->altstack.ss_size = dec_u64(d);
	t->blk.intr_ret = (int)dec_i64(d);
	t->fault_addr = dec_u64(d);
	t->fault_trapno = dec_u64(d);
	t->fault_err = dec_u64(d);
	t->cchild_time = dec_timespec(d);
	t->maxrss = dec_i64(d);
	t->cchild_maxrss = dec_i64(d);
	t->rss_peak = dec_u64(d);
	for (int r = 0; r < RLIM_NLIMITS; r++) {
		t->rlim[r].rlim_cur = dec_u64(d);
		t->rlim[r].rlim_max = dec_u64(d);
	}
	for (int i = 0; i < CPU_MASK_WORDS; i++)
		t->affinity[i] = dec_u64(d);
	t->did_exec = dec_bool(d);
	t->clear_child_tid = dec_u64(d);
	t->robust_list = dec_u64(d);
	t->no_new_privs = dec_bool(d);
	t->oom_score_adj = (int)dec_u32(d);
	if (t->oom_score_adj < -1000 || t->oom_score_adj > 1000)
		dec_fail(d, "bad oom_score_adj");
	t->nice = (int)dec_u32(d);
	if (t->nice < -20 || t->nice > 19)
		dec_fail(d, "bad nice value");
	t->sched_policy = (int)dec_u32(d);
	t->sched_priority = (int)dec_u32(d);
	t->sched_reset_on_fork = dec_bool(d);
	if ((t->sched_policy != SCHED_OTHER && t->sched_policy != SCHED_FIFO &&
	     t->sched_policy != SCHED_RR && t->sched_policy != SCHED_BATCH &&
	     t->sched_policy != SCHED_IDLE) ||
	    t->sched_priority < 0 || t->sched_priority > 99)
		dec_fail(d, "bad scheduling policy");
	t->cap_eff = dec_u64(d);
	t->cap_prm = dec_u64(d);
	t->cap_inh = dec_u64(d);
	t->cap_bnd = dec_u64(d);
	t->cap_amb = dec_u64(d);
	t->securebits = dec_u32(d);
	if ((t->cap_eff | t->cap_prm | t->cap_inh | t->cap_bnd | t->cap_amb) & ~CAPS_ALL ||
	    (t->cap_eff & ~t->cap_prm) || (t->cap_amb & ~(t->cap_prm & t->cap_inh)) ||
	    t->securebits >= 1u << 12)
		dec_fail(d, "bad capability sets");
	t->personality = dec_u32(d);
	dec_raw(d, t->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = 0;
	t->start_time = dec_timespec(d);
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
	t->blk.blocked = dec_bool(d);
	t->blk.retry = dec_bool(d);
	t->blk.interrupt_pending = dec_bool(d);
	t->blk.sigwait_zero = dec_bool(d);
	t->blk.sigwait_set = dec_u64(d);
	t->child_subreaper = dec_bool(d);
	t->pdeath_signal = (int)dec_u32(d);
	/* Timers live on a process's leader: itself, until the finish links the others. */
	t->group_leader = leader == tid ? t : NULL;
	if (t->group_leader) {
		timers_load(d, t);
		timers_cpu_limit_changed(t);
	} else if (dec_bool(d))
		dec_fail(d, "timers on a thread that does not lead its process");
	t->thread_gone = dec_bool(d);
	t->had_threads = dec_bool(d);
	t->stopped = dec_bool(d);
	t->stop_sig = (int)dec_u32(d);
	t->stop_report = dec_bool(d);
	t->cont_report = dec_bool(d);
	t->parked = dec_bool(d);
	t->blk.deadline = dec_timespec(d);
	t->blk.io_done = dec_u64(d);
	struct vfs_file *pending_open = dec_ref(d, CK_FILE);
	if (pending_open)
		t->blk.pending_open = vfs_file_get(pending_open);
	t->blk.futex_woken = dec_bool(d);
	t->blk.futex_timed = dec_bool(d);
	t->blk.futex_requeued = dec_bool(d);
	t->blk.futex_key = dec_u64(d);
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
	gseccomp_load_task(d, t);
	if (dec_ok(d) && !dec_at_end(d)) {
		uint32_t io = dec_u32(d);
		if (dec_ok(d) && (io > UINT16_MAX || (io >> 13) > 3))
			dec_fail(d, "bad I/O priority");
		t->ioprio = (uint16_t)io;
	}
	if (dec_ok(d) && remember(t, leader, parent))
		dec_fail(d, "out of memory");
	if (!dec_ok(d)) {
		if (t->mm && t->pt == t->mm->via)
			t->mm->via = NULL; /* released with T below: mm_drop must not */
		timers_release(t);
		task_free(t);
		return NULL;
	}
	task_link(t);
	return t;
}

/* True if some task runs on MM's stub's first thread. */
static bool via_claimed(const struct mm *mm)
{
	for_each_task(t)
		if (t->pt && t->pt == mm->via)
			return true;
	return false;
}

/* Links what the task records name by pid. */
int task_load_finish(char **err)
{
	int ret = 0;

	/* An address space whose tasks all come without a thread (a forged image: zombies keep
	 * none) leaves its stub's first thread to no one: it goes now, or the stub would stay. */
	for_each_task(t)
		if (t->mm && t->mm->via && !t->pt && !via_claimed(t->mm)) {
			platform_thread_release(t->mm->via);
			t->mm->via = NULL;
		}

	for (size_t i = 0; i < loaded.n && !ret; i++) {
		struct task *t = loaded.tasks[i];
		t->group_leader = task_by_tid(loaded.leader[i]);
		t->parent = loaded.parent[i] ? task_by_tid(loaded.parent[i]) : NULL;
		if (t->parent)
			t->parent->had_children = true;
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
	for_each_task(t) {
		if (t->mm && t->pt)
			t->mm->via = t->pt;
		if (t->timers)
			t->timers->leader = t->group_leader;
	}
	return 0;
}

/* Lets every task go on from where it was: blocked ones retry their syscall (re-registering
 * what they wait on), stopped ones get their pending signals and run, parked ones stay stopped
 * with their group. */
void task_load_resume(void)
{
	for_each_task(t) {
		if (!t->pt)
			continue;
		if (t->blk.blocked) {
			task_wake(t);
		} else if (t->parked) {
			continue;
		} else if (signal_deliver(t, 0, false)) {
			kernel_resume(t);
		}
	}
}
