/* The kernel's side of procfs (fs-proc/procinfo.h): snapshots of tasks, mappings, descriptors
 * and system figures, taken when a /proc file is opened. Only this file looks at kernel
 * structures on procfs's behalf. */
#include "fs-proc/procinfo.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "common/units.h"
#include "mem/memfile.h"
#include "sentry/fdtable.h"
#include "sentry/ipc.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/task.h"
#include "sentry/tty.h"
#include "vfs/vfs.h"

static uint64_t ns(struct timespec ts)
{
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static struct task *leader_of(pid_t pid)
{
	struct task *t = task_by_tid(pid);

	return t && t->group_leader == t ? t : NULL;
}

/* A live thread of the process led by L that has an mm (the leader's own may be gone). */
static struct task *mm_holder(struct task *l)
{
	if (l->mm)
		return l;
	for_each_thread_of(l, t)
		if (t->mm)
			return t;
	return NULL;
}

static int pi_pids(pid_t *out, int max)
{
	return task_process_ids(out, max);
}

static int pi_tids(pid_t pid, pid_t *out, int max)
{
	struct task *l = leader_of(pid);
	int n = 0;

	if (!l)
		return -ESRCH;
	if (!l->had_threads) { /* the common case: one thread, no list walk */
		if (max > 0)
			out[0] = pid;
		return 1;
	}
	for_each_thread_of(l, t)
		if (!t->thread_gone && !(t->zombie && t->tid != pid)) {
			if (n < max)
				out[n] = t->tid;
			n++;
		}
	return n;
}

/* Linux's ptrace_may_access(PTRACE_MODE_READ_FSCREDS): the reader's own process; a process
 * whose real, effective and saved ids all equal the reader's effective ones; or a reader with
 * CAP_SYS_PTRACE (root's, in the sandbox). */
static bool pi_may_read(pid_t pid)
{
	struct task *r = kernel.current, *t = task_by_tid(pid);

	if (!r || !t || r->tgid == t->tgid || r->euid == 0)
		return true;
	return r->euid == t->uid && r->euid == t->euid && r->euid == t->suid && r->egid == t->gid &&
	       r->egid == t->egid && r->egid == t->sgid;
}

static pid_t pi_self_pid(void)
{
	return kernel.current ? kernel.current->tgid : 1;
}

static pid_t pi_self_tid(void)
{
	return kernel.current ? kernel.current->tid : 1;
}

static char state_of(struct task *t)
{
	if (t->zombie)
		return 'Z';
	if (t->group_leader->stopped)
		return 'T';
	if (t->running)
		return 'R';
	return t == kernel.current ? 'R' : 'S';
}

/* Address-space figures from the VMAs, in bytes. The code and data bounds are those of the
 * program's own executable and writable mappings (Linux keeps the ELF segments' exact ends;
 * these are page-rounded). The walk's results are kept on the leader L until the VMA set
 * changes: a /proc/all read of thousands of processes would otherwise walk every one of their
 * VMA arrays once per file. */
static void fill_vm(struct task *l, struct mm *mm, struct procinfo_task *o)
{
	struct vfs_dentry *exe = l->exe;
	struct task_vm_snap *c = &l->vm_snap;

	if (c->mm != mm || c->gen != mm->vmas.gen || c->exe != exe) {
		memset(c, 0, sizeof(*c));
		c->mm = mm;
		c->gen = mm->vmas.gen;
		c->exe = exe;
		for (size_t i = 0; i < mm->vmas.n; i++) {
			const struct vma *v = &mm->vmas.v[i];
			uint64_t len = v->end - v->start;
			if (v->flags & VMA_RESERVED)
				continue;
			if (exe && v->dentry == exe && (v->prot & PROT_EXEC) && !c->start_code) {
				c->start_code = v->start;
				c->end_code = v->end;
			} else if (exe && v->dentry == exe && (v->prot & PROT_WRITE) &&
				   !c->start_data) {
				c->start_data = v->start;
				c->end_data = v->end;
			}
			c->vsize += len;
			if (v->flags & MAP_LOCKED)
				c->locked += len;
			if (v->name[0] == '[' && !strcmp(v->name, "[stack]"))
				c->stack += len;
			else if (v->dentry && (v->prot & PROT_EXEC))
				c->code += len;
			else if ((v->prot & PROT_WRITE) && !(v->flags & MAP_SHARED))
				c->data += len;
		}
	}
	o->start_code = c->start_code;
	o->end_code = c->end_code;
	o->start_data = c->start_data;
	o->end_data = c->end_data;
	o->vsize = c->vsize;
	o->vm_lck = c->locked;
	o->vm_stack = c->stack;
	o->vm_exe = c->code;
	o->vm_data = c->data;
	o->vm_peak = o->vsize;
	o->start_stack = mm->stack_top;
	o->start_brk = mm->brk_start;
	o->arg_start = mm->arg_start;
	o->arg_end = mm->arg_end;
	o->env_start = mm->env_start;
	o->env_end = mm->env_end;
}

/* Resident pages of MM: the memory-file pages behind its mappings that hold data (the file
 * is sparse, so SEEK_DATA finds them in a few calls per mapping). */
static uint64_t rss_pages(struct mm *mm)
{
	uint64_t bytes = 0;

	for (size_t i = 0; mm && i < mm->vmas.n; i++) {
		const struct vma *v = &mm->vmas.v[i];
		if (!(v->flags & VMA_RESERVED))
			bytes += memfile_data_bytes(v->mf_off, v->end - v->start);
	}
	return bytes / PAGE_SIZE;
}

static int pi_task(pid_t pid, pid_t tid, struct procinfo_task *o)
{
	struct task *l = leader_of(pid), *t = tid == pid ? l : task_by_tid(tid);

	if (!l || !t || t->tgid != pid)
		return -ESRCH;
	struct task *h = mm_holder(l);
	memset(o, 0, sizeof(*o));
	o->pid = pid;
	o->tid = tid;
	o->ppid = l->parent ? l->parent->tgid : 0;
	o->pgid = l->pgid;
	o->sid = l->sid;
	tty_proc_info(l->sid, &o->tty_nr, &o->tty_pgrp); /* its controlling terminal */
	memcpy(o->comm, t->comm, sizeof(o->comm));
	o->state = state_of(t);
	o->uid = t->uid, o->euid = t->euid, o->suid = t->suid;
	o->gid = t->gid, o->egid = t->egid, o->sgid = t->sgid;
	o->ngroups = t->ngroups < 32 ? t->ngroups : 32;
	o->oom_score_adj = t->group_leader->oom_score_adj;
	if (o->ngroups) /* a task with no supplementary groups has no array */
		memcpy(o->groups, t->groups, o->ngroups * sizeof(gid_t));
	for_each_thread_of(l, x)
		o->nthreads += !x->thread_gone && !x->zombie;
	if (o->nthreads == 0)
		o->nthreads = 1;
	o->start_time_ns = ns(ts_sub(l->start_time, kernel.boot_mono));
	/* CPU time and resident size change only while the process runs: a process that has
	 * not been let run since the last look gets the figures of that look, at no cost. */
	uint64_t key = 1;
	bool running = false;
	for_each_thread_of(l, x) {
		key += x->resumes;
		running |= x->running;
	}
	if (running || l->snap.key != key) {
		l->snap.key = running ? 0 : key; /* a running process is measured every time */
		l->snap.cpu = process_cpu_time(l);
		l->snap.rss_pages = h && h->mm ? rss_pages(h->mm) : 0;
	}
	struct timespec cpu = tid == pid ? l->snap.cpu : thread_cpu_time(t);
	o->utime_ns = ns(cpu);
	o->cutime_ns = ns(l->cchild_time);
	if (h && h->mm) {
		fill_vm(l, h->mm, o);
		o->rss_pages = l->snap.rss_pages;
	}
	/* The peak is what procfs has seen (or the stub's, at exit): no host file to read. */
	if (o->rss_pages * PAGE_SIZE > l->rss_peak)
		l->rss_peak = o->rss_pages * PAGE_SIZE;
	o->vm_hwm = l->rss_peak;
	o->sig_pending = t->pending.set;
	o->sig_shared_pending = l->shared_pending.set;
	o->sig_blocked = t->sigmask;
	if (t->sighand) {
		o->sig_ignored = t->sighand->ignored;
		o->sig_caught = t->sighand->caught;
	}
	for_each_thread_of(l, x)
		if (x == t || tid == pid) { /* the process: all its threads */
			o->rchar += x->rchar, o->wchar += x->wchar;
			o->syscr += x->syscr, o->syscw += x->syscw;
			o->voluntary_ctxt += x->nsyscalls;
		}
	o->run_ns = o->utime_ns;
	o->timeslices = o->voluntary_ctxt;
	o->nice = t->nice;
	/* Linux's task_prio(): -1 - the real-time priority for FIFO and RR. */
	o->priority = t->sched_priority ? -1 - t->sched_priority : 20 + t->nice;
	o->exit_signal = l->exit_signal;
	memcpy(o->cpus_allowed, t->affinity, sizeof(o->cpus_allowed));
	o->umask = t->fs ? (int)t->fs->umask : 022;
	o->no_new_privs = t->no_new_privs;
	o->seccomp_mode = t->seccomp.mode;
	o->seccomp_filters = t->seccomp.nfilters;
	o->cap_inh = t->cap_inh, o->cap_prm = t->cap_prm, o->cap_eff = t->cap_eff;
	o->cap_bnd = t->cap_bnd, o->cap_amb = t->cap_amb;
	for (int r = 0; r < 16 && r < RLIM_NLIMITS; r++) {
		o->rlim[r].cur =
		    t->rlim[r].rlim_cur == RLIM_INFINITY ? UINT64_MAX : t->rlim[r].rlim_cur;
		o->rlim[r].max =
		    t->rlim[r].rlim_max == RLIM_INFINITY ? UINT64_MAX : t->rlim[r].rlim_max;
	}
	return 0;
}

static int pi_owner(pid_t pid, uid_t *uid, gid_t *gid)
{
	struct task *l = leader_of(pid);

	if (!l)
		return -ESRCH;
	*uid = l->euid;
	*gid = l->egid;
	return 0;
}

static int pi_set_oom_score_adj(pid_t pid, int adj)
{
	struct task *l = leader_of(pid);

	if (!l)
		return -ESRCH;
	l->oom_score_adj = adj;
	return 0;
}

static ssize_t copy_range(pid_t pid, bool env, char *buf, size_t size)
{
	struct task *l = leader_of(pid);
	struct task *h = l ? mm_holder(l) : NULL;

	if (!l)
		return -ESRCH;
	if (!h)
		return 0; /* a zombie shows nothing */
	uintptr_t start = env ? h->mm->env_start : h->mm->arg_start;
	uintptr_t end = env ? h->mm->env_end : h->mm->arg_end;
	size_t len = end > start ? end - start : 0;
	if (len > size)
		len = size;
	return copy_in(h->mm, buf, start, len) ? 0 : (ssize_t)len;
}

static ssize_t pi_cmdline(pid_t pid, char *buf, size_t size)
{
	return copy_range(pid, false, buf, size);
}

static ssize_t pi_environ(pid_t pid, char *buf, size_t size)
{
	return copy_range(pid, true, buf, size);
}

static int pi_vmas(pid_t pid, struct procinfo_vma *out, int max)
{
	struct task *l = leader_of(pid), *h;
	int n = 0;

	if (!l)
		return -ESRCH;
	if (!(h = mm_holder(l)))
		return 0;
	struct vfs_dentry *root =
	    kernel.current && kernel.current->fs ? kernel.current->fs->root : kernel.root;
	for (size_t i = 0; i < h->mm->vmas.n; i++) {
		const struct vma *v = &h->mm->vmas.v[i];
		if (v->flags & VMA_RESERVED)
			continue;
		if (n < max) {
			struct procinfo_vma *o = &out[n];
			memset(o, 0, sizeof(*o));
			o->start = v->start;
			o->end = v->end;
			o->prot = v->prot;
			o->shared = v->flags & MAP_SHARED;
			o->offset = v->dentry ? v->file_off : 0;
			o->ino = v->ino;
			o->dev_major = major(v->dev);
			o->dev_minor = minor(v->dev);
			o->rss = memfile_data_bytes(v->mf_off, v->end - v->start);
			o->file = v->dentry;
			o->was_writable = v->flags & VMA_WAS_WRITABLE;
			o->may_write = !(v->flags & VMA_NO_WRITE);
			if (v->dentry) {
				if (vfs_path(root, v->dentry, o->name, sizeof(o->name)) < 0)
					o->name[0] = 0;
			} else {
				snprintf(o->name, sizeof(o->name), "%s", v->name);
			}
		}
		n++;
	}
	return n;
}

/* A thread of the process led by L (if any) that has a descriptor table (the leader's own may
 * be gone). */
static struct task *files_holder(struct task *l)
{
	if (l)
		for_each_thread_of(l, h)
			if (h->files)
				return h;
	return NULL;
}

static int pi_fds(pid_t pid, int *out, int max)
{
	struct task *l = leader_of(pid), *h = files_holder(l);
	int n = 0;

	if (!l)
		return -ESRCH;
	for (int fd = 0; h && fd < h->files->n; fd++)
		if (h->files->fds[fd].file) {
			if (n < max)
				out[n] = fd;
			n++;
		}
	return n;
}

static int pi_fd_file(pid_t pid, int fd, struct vfs_file **out, bool *cloexec)
{
	struct task *h = files_holder(leader_of(pid));
	struct fd_entry *e = h ? fdtable_entry(h->files, fd) : NULL;
	if (!e)
		return -ENOENT;
	*out = vfs_file_get(e->file);
	*cloexec = e->cloexec;
	return 0;
}

static struct task *fs_holder(pid_t pid)
{
	struct task *l = leader_of(pid);

	if (l && l->fs)
		return l;
	if (l)
		for_each_thread_of(l, h)
			if (h->fs)
				return h;
	return NULL;
}

static int pi_cwd(pid_t pid, struct vfs_dentry **out)
{
	struct task *h = fs_holder(pid);

	if (!h)
		return leader_of(pid) ? -ENOENT : -ESRCH;
	*out = vfs_dentry_get(h->fs->cwd);
	return 0;
}

static int pi_root(pid_t pid, struct vfs_dentry **out)
{
	struct task *h = fs_holder(pid);

	if (!h)
		return leader_of(pid) ? -ENOENT : -ESRCH;
	*out = vfs_dentry_get(h->fs->root);
	return 0;
}

static int pi_exe(pid_t pid, struct vfs_dentry **out)
{
	struct task *l = leader_of(pid);

	if (!l)
		return -ESRCH;
	for_each_thread_of(l, h)
		if (h->exe) {
			*out = vfs_dentry_get(h->exe);
			return 0;
		}
	return -ENOENT;
}

static struct vfs_dentry *pi_reader_root(void)
{
	return kernel.current && kernel.current->fs ? kernel.current->fs->root : kernel.root;
}

static uint64_t pi_boot_time_s(void)
{
	return kernel.boot_real.tv_sec;
}

static uint64_t pi_uptime_ns(void)
{
	return ns(ts_sub(mono_now(), kernel.boot_mono));
}

/* Idle time: the CPUs' time since boot less what the guest's processes used. */
static uint64_t pi_idle_ns(void)
{
	uint64_t all = pi_uptime_ns() * (uint64_t)kernel.cfg.cpus, busy = 0;

	for_each_process(l)
		busy += ns(process_cpu_time(l)) + ns(l->cchild_time);
	return busy < all ? all - busy : 0;
}

static int pi_cpus(void)
{
	return kernel.cfg.cpus;
}

/* The sandbox's RAM is its --memory bound where it has one (as gVisor shows its total), never
 * more than the host's. */
static uint64_t pi_mem_total(void)
{
	struct sysinfo si;
	uint64_t host = sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit : 0;
	uint64_t limit = memfile_limit();

	return limit && limit < host ? limit : host;
}

/* Guest memory in use: the memory file's resident size. */
static uint64_t pi_mem_used(void)
{
	struct stat st;

	return fstat(memfile_fd(), &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

static unsigned long pi_nr_running(void)
{
	unsigned long n = 0;

	for_each_task(t)
		n += t->running || t == kernel.current;
	return n;
}

static unsigned long pi_nr_threads(void)
{
	unsigned long n = 0;

	for_each_task(t)
		n += !t->zombie && !t->thread_gone;
	return n;
}

static pid_t pi_last_pid(void)
{
	return kernel.next_pid - 1;
}

static uint64_t pi_forks(void)
{
	return kernel.forks;
}

static const char *pi_hostname(void)
{
	return kernel.hostname;
}

static const char *pi_domainname(void)
{
	return kernel.domainname;
}

void kernel_set_uts_name(bool domain, const char *name, size_t len)
{
	char *to = domain ? kernel.domainname : kernel.hostname;

	memcpy(to, name, len);
	to[len] = '\0';
}

const struct procinfo_ops kernel_procinfo = {
    .pids = pi_pids,
    .tids = pi_tids,
    .self_pid = pi_self_pid,
    .self_tid = pi_self_tid,
    .task = pi_task,
    .owner = pi_owner,
    .cmdline = pi_cmdline,
    .environ = pi_environ,
    .vmas = pi_vmas,
    .fds = pi_fds,
    .fd_file = pi_fd_file,
    .cwd = pi_cwd,
    .root = pi_root,
    .exe = pi_exe,
    .reader_root = pi_reader_root,
    .may_read = pi_may_read,
    .boot_time_s = pi_boot_time_s,
    .uptime_ns = pi_uptime_ns,
    .idle_ns = pi_idle_ns,
    .cpus = pi_cpus,
    .mem_total = pi_mem_total,
    .mem_used = pi_mem_used,
    .nr_running = pi_nr_running,
    .nr_threads = pi_nr_threads,
    .last_pid = pi_last_pid,
    .forks = pi_forks,
    .hostname = pi_hostname,
    .domainname = pi_domainname,
    .set_uts_name = kernel_set_uts_name,
    .set_oom_score_adj = pi_set_oom_score_adj,
    .sysvipc = ipc_proc_text,
    .set_ipc_limit = ipc_set_limit,
};
