/* The ELF loader: parses the executable and its interpreter before touching anything, so a
 * failed exec leaves the task as it was; then builds a new stub and mm, maps the segments
 * (copies of the file pages in the memory file), and writes the initial stack. */
#include "sentry/exec.h"
#include "sentry/caps.h"
#include "sentry/ipc.h"

#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/random.h>
#include <unistd.h>

#include "fs-proc/procfs.h"
#include "platform/platform.h"
#include "sentry/elf.h"
#include "sentry/fdtable.h"
#include "sentry/filecache.h"
#include "sentry/futex.h"
#include "sentry/kernel.h"
#include "sentry/mm.h"
#include "sentry/marks.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"
#include "sentry/timer.h"
#include "sentry/vdso.h"
#include "vfs/vfs.h"

#define PIE_BASE 0x555555554000UL /* where Linux puts a PIE without randomisation */
/* The stack is mapped whole at exec, RLIMIT_STACK bytes of it (Linux grows it on demand up to
 * there): at least STACK_MIN, as Linux's first stack holds 128 KiB beyond the arguments;
 * at most STACK_MAX; STACK_SIZE when the limit is infinite. */
#define STACK_SIZE (8UL << 20)
#define STACK_MIN (128UL << 10)
#define STACK_MAX (1UL << 30)
#define MAX_ARG_BYTES (2UL << 20)

/* Address-space layout randomisation, drawn per exec as Linux draws it on x86-64: the stack's
 * top within 16 GiB (22 bits of pages), the mmap base and a PIE's load address within 1 TiB
 * (28 bits), brk within 1 GiB above the program's end (a static PIE's brk starts above
 * Linux's PIE base instead), and the first stack frame within 8 KiB below the strings. Off
 * under personality(ADDR_NO_RANDOMIZE) or kernel.randomize_va_space 0; 1 leaves brk alone. */
#define STACK_RND_PAGES (1UL << 22)
#define MMAP_RND_PAGES (1UL << 28)
#define BRK_RND_PAGES ((1UL << 30) / PAGE_SIZE)
#define SP_RND 8192
#define PIE_BASE_LINUX 0x555555554aaaUL /* ELF_ET_DYN_BASE: 2/3 of the 47-bit space */

struct aslr {
	bool on, brk;
	uint64_t stack, mmap, pie, brk_off, sp;
};

static uint64_t rnd_below(uint64_t n)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = 0;
	return r % n;
}

static void aslr_draw(const struct task *t, struct aslr *a)
{
	int va = procfs_randomize_va_space;

	memset(a, 0, sizeof(*a));
	if ((t->personality & ADDR_NO_RANDOMIZE) || va == 0)
		return;
	a->on = true;
	a->brk = va > 1;
	a->stack = rnd_below(STACK_RND_PAGES) * PAGE_SIZE;
	a->mmap = rnd_below(MMAP_RND_PAGES) * PAGE_SIZE;
	a->pie = rnd_below(MMAP_RND_PAGES) * PAGE_SIZE;
	a->brk_off = a->brk ? rnd_below(BRK_RND_PAGES) * PAGE_SIZE : 0;
	a->sp = rnd_below(SP_RND);
}

struct image {
	struct vfs_file *file;
	struct elf_info info;
	uintptr_t bias; /* load address minus the ELF's own addresses */
};

static ssize_t file_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct vfs_file *f = ctx;

	return f->ops->pread_kernel(f, buf, len, off);
}

static int open_image(struct task *t, const char *path, struct image *img)
{
	struct vfs_file *f;
	struct stat st;
	int err;

	if ((err = vfs_open(t->fs, NULL, path, O_RDONLY, 0, &f)))
		return err;
	if (!f->ops->getattr || (err = f->ops->getattr(f, &st)))
		goto out_put;
	err = -EACCES;
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111) || !f->ops->pread_kernel)
		goto out_put;
	if ((err = elf_parse(file_read, f, st.st_size, &img->info)))
		goto out_put;
	img->file = f;
	return 0;
out_put:
	vfs_file_put(f);
	return err;
}

static int map_image(struct mm *mm, struct image *img)
{
	for (int i = 0; i < img->info.nseg; i++) {
		const struct elf_segment *s = &img->info.seg[i];
		uintptr_t start = PAGE_DOWN(img->bias + s->vaddr);
		uintptr_t end = PAGE_UP(img->bias + s->vaddr + s->memsz);
		/* A segment without bss shows whole file pages, as Linux maps it (the bytes after
		 * it in its last page are the file's); one with bss is zero past its file part. */
		size_t file_bytes = s->memsz == s->filesz
					? end - start
					: (img->bias + s->vaddr - start) + s->filesz;
		long r = mm_map(mm, start, end - start, s->prot, MAP_PRIVATE | MAP_FIXED, img->file,
				PAGE_DOWN(s->offset), file_bytes, NULL);
		if (r < 0)
			return (int)r;
	}
	return 0;
}

/* The segments map_image will take from the file cache: those without bss, whose pages are
 * all the file's (a mapping of whole file pages). */
static void prefetch_images(const struct image *exe, const struct image *interp)
{
	struct filecache_range r[FILECACHE_PREFETCH_MAX];
	const struct image *imgs[2] = {exe, interp};
	int n = 0;

	for (int k = 0; k < 2; k++)
		for (int i = 0; imgs[k]->file && i < imgs[k]->info.nseg; i++) {
			const struct elf_segment *s = &imgs[k]->info.seg[i];
			uint64_t in_page = s->vaddr & (PAGE_SIZE - 1);
			if (s->memsz != s->filesz || n == FILECACHE_PREFETCH_MAX)
				continue;
			r[n++] =
			    (struct filecache_range){imgs[k]->file, (off_t)PAGE_DOWN(s->offset),
						     PAGE_UP(in_page + s->memsz)};
		}
	filecache_prefetch(r, n);
}

/* Chooses where a position-independent image goes: anywhere in the mmap area. */
static int place_dyn(struct mm *mm, struct image *img, uintptr_t preferred)
{
	size_t span = img->info.hi - img->info.lo;

	if (preferred && vma_range_free(&mm->vmas, preferred, preferred + span)) {
		img->bias = preferred - img->info.lo;
		return 0;
	}
	uintptr_t at = vma_find_gap(&mm->vmas, span, 0x10000, mm->mmap_base);
	if (!at)
		return -ENOMEM;
	img->bias = at - img->info.lo;
	return 0;
}

struct stack_builder {
	struct mm *mm;
	uintptr_t p;
	int err;
};

static uintptr_t push_bytes(struct stack_builder *sb, const void *data, size_t len)
{
	sb->p -= len;
	if (!sb->err && copy_out(sb->mm, sb->p, data, len))
		sb->err = -EFAULT;
	return sb->p;
}

static int count_strings(char *const v[], size_t *bytes)
{
	int n = 0;

	for (; v && v[n]; n++)
		*bytes += strlen(v[n]) + 1;
	return n;
}

static int build_stack(struct task *t, struct image *exe, struct image *interp, const char *path,
		       char *const argv[], char *const envp[], uintptr_t sp_shift, uintptr_t vdso,
		       uintptr_t *sp_out)
{
	struct mm *mm = t->mm;
	struct stack_builder sb = {mm, mm->stack_top - 8, 0};
	size_t bytes = strlen(path) + 1;
	int argc = count_strings(argv, &bytes), envc = count_strings(envp, &bytes);
	unsigned char rnd[16];
	unsigned int eax, ebx, ecx, edx = 0;

	if (bytes > MAX_ARG_BYTES)
		return -E2BIG;
	uintptr_t argp[argc + 1], envpp[envc + 1];
	uintptr_t execfn = push_bytes(&sb, path, strlen(path) + 1);
	mm->env_end = sb.p + 0;
	for (int i = envc - 1; i >= 0; i--)
		envpp[i] = push_bytes(&sb, envp[i], strlen(envp[i]) + 1);
	mm->env_start = envc ? envpp[0] : sb.p;
	mm->arg_end = sb.p;
	for (int i = argc - 1; i >= 0; i--)
		argp[i] = push_bytes(&sb, argv[i], strlen(argv[i]) + 1);
	mm->arg_start = argc ? argp[0] : sb.p;
	argp[argc] = envpp[envc] = 0;
	sb.p = (sb.p - sp_shift) & ~0xfUL;
	uintptr_t platform = push_bytes(&sb, "x86_64", 7);
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EIO;
	uintptr_t random = push_bytes(&sb, rnd, sizeof(rnd));
	__get_cpuid(1, &eax, &ebx, &ecx, &edx);

	/* Linux's order: the architecture's entries (the vDSO) first. Without a vDSO the entry
	 * says 0, which libcs take as none. */
	uint64_t auxv[][2] = {
	    {vdso ? AT_SYSINFO_EHDR : AT_IGNORE, vdso},
	    {AT_HWCAP, edx},
	    {AT_PAGESZ, PAGE_SIZE},
	    {AT_CLKTCK, 100},
	    {AT_PHDR, exe->bias + exe->info.phdr_vaddr},
	    {AT_PHENT, sizeof(Elf64_Phdr)},
	    {AT_PHNUM, exe->info.phnum},
	    {AT_BASE, interp ? interp->bias + interp->info.lo : 0},
	    {AT_FLAGS, 0},
	    {AT_ENTRY, exe->bias + exe->info.entry},
	    {AT_UID, t->uid},
	    {AT_EUID, t->euid},
	    {AT_GID, t->gid},
	    {AT_EGID, t->egid},
	    {AT_SECURE, 0},
	    {AT_RANDOM, random},
	    {AT_HWCAP2, 0},
	    {AT_EXECFN, execfn},
	    {AT_PLATFORM, platform},
	    {AT_MINSIGSTKSZ, platform_fpstate_size() + 1024},
	    {AT_NULL, 0},
	};
	size_t words = 1 + (argc + 1) + (envc + 1) + sizeof(auxv) / sizeof(uint64_t);
	sb.p = (sb.p - words * 8) & ~15UL; /* rsp is 16-byte aligned at argc */
	uintptr_t sp = sb.p;
	uint64_t argc64 = argc;
	sb.p = sp + words * 8;
	push_bytes(&sb, auxv, sizeof(auxv));
	push_bytes(&sb, envpp, (envc + 1) * 8);
	push_bytes(&sb, argp, (argc + 1) * 8);
	push_bytes(&sb, &argc64, 8);
	*sp_out = sp;
	return sb.err;
}

#define BINPRM_BUF 256 /* how much of a #! line Linux reads */
#define MAX_SCRIPT_DEPTH 4

static int exec_elf(struct task *t, const char *path, char *const argv[], char *const envp[]);

/* Reads the first bytes of PATH if it is a regular executable file. */
static int read_head(struct task *t, const char *path, char *buf, size_t len, ssize_t *got)
{
	struct vfs_file *f;
	struct stat st;
	int err;

	if ((err = vfs_open(t->fs, NULL, path, O_RDONLY, 0, &f)))
		return err;
	err = -EACCES;
	if (f->ops->getattr && f->ops->getattr(f, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_mode & 0111) && f->ops->pread_kernel) {
		*got = f->ops->pread_kernel(f, buf, len, 0);
		err = *got < 0 ? (int)*got : 0;
	}
	vfs_file_put(f);
	return err;
}

static int exec_depth(struct task *t, const char *path, char *const argv[], char *const envp[],
		      int depth)
{
	char head[BINPRM_BUF + 1];
	ssize_t got = 0;
	int err;

	if ((err = read_head(t, path, head, BINPRM_BUF, &got)))
		return err;
	if (got < 2 || head[0] != '#' || head[1] != '!')
		return exec_elf(t, path, argv, envp);
	if (depth >= MAX_SCRIPT_DEPTH)
		return -ELOOP;
	/* "#!interp [one-arg]": the rest of the line after the interpreter is one argument. */
	head[got] = 0;
	char *nl = strchr(head, '\n');
	if (!nl && got == BINPRM_BUF)
		return -ENOEXEC;
	if (nl)
		*nl = 0;
	char *p = head + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return -ENOEXEC;
	char *interp = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	char *arg = NULL;
	if (*p) {
		*p++ = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		char *end = p + strlen(p);
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = 0;
		if (*p)
			arg = p;
	}
	int argc = 0;
	while (argv[argc])
		argc++;
	char **nargv = calloc(argc + 3, sizeof(char *));
	if (!nargv)
		return -ENOMEM;
	int n = 0;
	nargv[n++] = interp;
	if (arg)
		nargv[n++] = arg;
	nargv[n++] = (char *)path;
	for (int i = 1; i < argc; i++)
		nargv[n++] = argv[i];
	err = exec_depth(t, interp, nargv, envp, depth + 1);
	free(nargv);
	return err;
}

int exec_load(struct task *t, const char *path, char *const argv[], char *const envp[])
{
	return exec_depth(t, path, argv, envp, 0);
}

static int exec_elf(struct task *t, const char *path, char *const argv[], char *const envp[])
{
	struct image exe = {0}, interp = {0};
	struct platform_thread *pt = NULL;
	struct mm *mm = NULL, *old_mm = t->mm;
	struct aslr rnd;
	uintptr_t sp;
	int err;

	if ((err = open_image(t, path, &exe)))
		return err;
	if (exe.info.has_interp) {
		if ((err = open_image(t, exe.info.interp, &interp)))
			goto out_put;
		if (interp.info.has_interp) {
			err = -ELIBBAD;
			goto out_put;
		}
	}
	/* Their pages are read in on another CPU while the stub is made (a 2 MiB busybox: 0.7 ms,
	 * most of an exec). */
	prefetch_images(&exe, &interp);
	mark("exec: parsed, prefetch started");
	if ((err = platform_stub_new(&pt)))
		goto out_put;
	mark("exec: stub");
	err = -ENOMEM;
	if (!(mm = mm_new(pt)))
		goto out_kill;
	t->mm = mm; /* build_stack writes through t->mm */
	rlim_t slim = t->rlim[RLIMIT_STACK].rlim_cur;
	size_t stack_size = slim == RLIM_INFINITY ? STACK_SIZE
			    : slim > STACK_MAX	  ? STACK_MAX
			    : slim < STACK_MIN	  ? STACK_MIN
						  : PAGE_DOWN(slim);
	aslr_draw(t, &rnd);
	mm_set_layout(mm, stack_size, rnd.stack, rnd.on ? (STACK_RND_PAGES - 1) * PAGE_SIZE : 0,
		      rnd.mmap);
	if (exe.info.type == ET_DYN)
		err = place_dyn(mm, &exe, exe.info.has_interp ? PIE_BASE + rnd.pie : 0);
	else
		err = 0;
	if (err || (err = map_image(mm, &exe)))
		goto out_mm;
	mark("exec: mapped");
	if (interp.file && ((err = place_dyn(mm, &interp, 0)) || (err = map_image(mm, &interp))))
		goto out_mm;
	/* Below the interpreter (or the program), as Linux maps it after them. */
	long vdso = vdso_map(mm);
	if (vdso < 0) {
		err = (int)vdso;
		goto out_mm;
	}
	mm->brk_start = mm->brk = PAGE_UP(exe.bias + exe.info.hi);
	if (rnd.brk) {
		if (exe.info.type == ET_DYN && !exe.info.has_interp)
			mm->brk_start = PAGE_UP(PIE_BASE_LINUX);
		mm->brk_start = mm->brk = mm->brk_start + rnd.brk_off;
	}
	long r =
	    mm_map(mm, mm->stack_top - stack_size, stack_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_GROWSDOWN, NULL, 0, 0, "[stack]");
	if (r < 0) {
		err = (int)r;
		goto out_mm;
	}
	if ((err = build_stack(t, &exe, interp.file ? &interp : NULL, path, argv, envp, rnd.sp,
			       (uintptr_t)vdso, &sp)))
		goto out_mm;

	struct user_regs_struct regs;
	if ((err = platform_get_regs(pt, &regs)))
		goto out_mm;
	struct user_regs_struct fresh = {0};
	fresh.cs = regs.cs;
	fresh.ss = regs.ss;
	fresh.ds = regs.ds;
	fresh.es = regs.es;
	fresh.fs = regs.fs;
	fresh.gs = regs.gs;
	fresh.eflags = 0x202;
	fresh.orig_rax = -1;
	fresh.rsp = sp;
	fresh.rip = interp.file ? interp.bias + interp.info.entry : exe.bias + exe.info.entry;
	if ((err = platform_set_regs(pt, &fresh)))
		goto out_mm;

	/* The handlers' reset (after_exec) may need the table copied; it cannot fail later. */
	if ((err = sighand_exec_prepare(t->sighand)))
		goto out_mm;

	/* Point of no return: the old address space and its stub go. */
	if (t->pt) {
		/* The process keeps the CPU time it used, unless the stub was its vfork parent's.
		 */
		if (!t->vfork_parent)
			t->group_leader->cpu_base = process_cpu_time(t);
		if (old_mm && old_mm->refs == 1)
			mm_collect_writes(old_mm); /* before its stub goes */
		platform_thread_release(t->pt);	   /* a vfork parent may live on in the old stub */
	}
	futex_robust_release(old_mm, t->robust_list, t->tid);
	mm_put(old_mm);
	ipc_on_mm_release(); /* segments the old address space was the last to map */
	task_set_pt(t, pt);
	const char *base = strrchr(path, '/');
	snprintf(t->comm, sizeof(t->comm), "%s", base ? base + 1 : path);
	if (t->exe)
		vfs_dentry_put(t->exe);
	t->exe = exe.file->dentry ? vfs_dentry_get(exe.file->dentry) : NULL;
	err = 0;
	goto out_put;
out_mm:
	t->mm = old_mm;
	mm_put(mm);
out_kill:
	platform_thread_release(pt);
out_put:
	if (interp.file)
		vfs_file_put(interp.file);
	if (exe.file)
		vfs_file_put(exe.file);
	return err;
}

int exec_find_in_path(struct task *t, const char *cmd, const char *path_env, char *out, size_t size)
{
	const char *p =
	    path_env ? path_env : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

	while (*p) {
		const char *end = strchrnul(p, ':');
		struct vfs_dentry *d;
		if ((size_t)snprintf(out, size, "%.*s/%s", (int)(end - p), p, cmd) < size &&
		    vfs_lookup(t->fs, NULL, out, VFS_LOOKUP_FOLLOW, &d) == 0) {
			bool dir = vfs_is_dir(d);
			vfs_dentry_put(d);
			if (!dir)
				return 0;
		}
		p = *end ? end + 1 : end;
	}
	return -ENOENT;
}

/* Copies a NULL-terminated array of guest strings into one heap block; *OUT is an array of
 * pointers into it. */
static int copy_strings(struct task *t, uintptr_t arr, char ***out, size_t *budget)
{
	size_t n = 0, cap = 16;
	char **v = calloc(cap, sizeof(char *));

	if (!v)
		return -ENOMEM;
	for (; arr; n++) {
		uint64_t p;
		if (copy_in(t->mm, &p, arr + n * 8, 8))
			goto fault;
		if (!p)
			break;
		if (n + 2 > cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof(char *));
			if (!nv)
				goto nomem;
			v = nv;
		}
		char buf[PAGE_SIZE * 32];
		long len = copy_string_in(t->mm, buf, p, sizeof(buf));
		if (len == -ENAMETOOLONG || (len >= 0 && (size_t)len + 1 > *budget)) {
			v[n] = NULL;
			for (size_t i = 0; i < n; i++)
				free(v[i]);
			free(v);
			return -E2BIG;
		}
		if (len < 0)
			goto fault;
		*budget -= len + 1;
		if (!(v[n] = strdup(buf)))
			goto nomem;
	}
	v[n] = NULL;
	*out = v;
	return 0;
fault:
	v[n] = NULL;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return -EFAULT;
nomem:
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return -ENOMEM;
}

static void free_strings(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* What exec resets once the new image is in place (Linux's flush_old_exec & co). */
static void after_exec(struct task *t)
{
	for (int fd = 0; fd < t->files->n; fd++) {
		struct fd_entry *e = fdtable_entry(t->files, fd);
		if (e && e->cloexec) {
			task_file_closing(t, e->file);
			fdtable_close(t->files, fd);
		}
	}
	sighand_exec_reset(t->sighand);
	timers_exec(t->group_leader);
	t->altstack = (stack_t){.ss_flags = SS_DISABLE};
	t->clear_child_tid = 0;
	t->robust_list = 0;
	caps_on_exec(t);
	kernel_vfork_release(t);
	t->did_exec = true;
	t->regs_set = true; /* the new image's registers are already in place */
}

#define SWAP(a, b)                                                                                 \
	do {                                                                                       \
		__typeof__(a) swap_ = (a);                                                         \
		(a) = (b);                                                                         \
		(b) = swap_;                                                                       \
	} while (0)

/* Exec from a thread T that does not lead its process: the process goes on in its leader's
 * task (its pid, parent, children and process-wide state), which takes T's thread with its
 * new image and what belongs to a thread (Linux's de_thread: the thread takes over the
 * leader's pid). T is left with the leader's old thread state, for release. */
static void take_over_leader(struct task *leader, struct task *t)
{
	struct platform_thread *pt = t->pt;

	task_cancel_wait(leader);
	leader->blk = (struct syscall_wait){0};
	if (!leader->thread_gone)
		futex_robust_release(leader->mm, leader->robust_list, leader->tid);
	if (leader->pt)
		platform_thread_release(leader->pt);
	task_set_pt(t, NULL);
	task_set_pt(leader, pt);
	SWAP(leader->mm, t->mm);
	SWAP(leader->files, t->files);
	SWAP(leader->fs, t->fs);
	SWAP(leader->sighand, t->sighand);
	SWAP(leader->pending, t->pending);
	SWAP(leader->exe, t->exe);
	SWAP(leader->groups, t->groups);
	SWAP(leader->ngroups, t->ngroups);
	SWAP(leader->seccomp, t->seccomp);
	leader->sigmask = t->sigmask;
	leader->has_saved_sigmask = false;
	leader->uid = t->uid, leader->euid = t->euid, leader->suid = t->suid;
	leader->gid = t->gid, leader->egid = t->egid, leader->sgid = t->sgid;
	leader->cap_eff = t->cap_eff, leader->cap_prm = t->cap_prm, leader->cap_inh = t->cap_inh;
	leader->cap_bnd = t->cap_bnd, leader->cap_amb = t->cap_amb;
	leader->securebits = t->securebits;
	leader->no_new_privs = t->no_new_privs;
	leader->nice = t->nice;
	leader->sched_policy = t->sched_policy;
	leader->sched_priority = t->sched_priority;
	leader->sched_reset_on_fork = t->sched_reset_on_fork;
	memcpy(leader->affinity, t->affinity, sizeof(leader->affinity));
	memcpy(leader->comm, t->comm, sizeof(leader->comm));
	leader->rchar += t->rchar, leader->wchar += t->wchar;
	leader->syscr += t->syscr, leader->syscw += t->syscw;
	leader->sc = t->sc;
	leader->running = false;
	leader->regs_set = t->regs_set;
	leader->thread_gone = false;
	leader->vfork_parent = t->vfork_parent;
	t->vfork_parent = NULL;
}

/* The exec of T has passed its point of no return: every other thread of the process dies
 * (without a report: they are threads), and the process goes on in one thread, which is
 * returned: T, or its leader when T did not lead. */
static struct task *exec_de_thread(struct task *t)
{
	struct task *leader = t->group_leader;

	for_each_task_safe(o, next) {
		if (!leader->had_threads)
			break;
		if (o->tgid == t->tgid && o != leader && o != t) {
			if (!o->zombie)
				futex_robust_release(o->mm, o->robust_list, o->tid);
			kernel_vfork_release(o);
			task_release(o);
			task_unlink_free(o);
		}
	}
	if (t == leader)
		return t;
	take_over_leader(leader, t);
	/* T's syscall ends here: its handler finds it gone (and the leader's is finished by
	 * the caller). */
	task_release(t);
	task_unlink_free(t);
	return leader;
}

static long do_execve(struct task *t, const char *path, uintptr_t argv_addr, uintptr_t envp_addr)
{
	char **argv = NULL, **envp = NULL;
	size_t budget = MAX_ARG_BYTES;
	long err;

	if ((err = copy_strings(t, argv_addr, &argv, &budget)) ||
	    (err = copy_strings(t, envp_addr, &envp, &budget)))
		goto out;
	if (!argv[0]) {
		/* Linux supplies an empty argv[0] for an empty argv. */
		free(argv);
		argv = calloc(2, sizeof(char *));
		if (!argv || !(argv[0] = strdup(""))) {
			err = -ENOMEM;
			goto out;
		}
	}
	if ((err = exec_load(t, path, argv, envp)))
		goto out;
	struct task *p = exec_de_thread(t);
	after_exec(p);
	if (p != t)
		kernel_finish_syscall(p, 0);
out:
	free_strings(argv);
	free_strings(envp);
	return err;
}

long sys_execve(struct task *t, const unsigned long *a)
{
	char path[PATH_MAX];
	long err = arg_path(t, a[0], path);

	return err ? err : do_execve(t, path, a[1], a[2]);
}

/* execveat names the file relative to a directory descriptor (or, with AT_EMPTY_PATH, the
 * descriptor itself): it becomes a path from the task's root for the loader. */
long sys_execveat(struct task *t, const unsigned long *a)
{
	char rel[PATH_MAX], path[PATH_MAX];
	int dirfd = arg_int(a, 0), flags = arg_int(a, 4);
	long err = arg_path(t, a[1], rel);

	if (err)
		return err;
	if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return -EINVAL;
	if (rel[0] == '/' || (dirfd == AT_FDCWD && rel[0])) {
		snprintf(path, sizeof(path), "%s", rel);
	} else {
		struct vfs_dentry *base = dirfd == AT_FDCWD ? t->fs->cwd : NULL;
		if (!base) {
			struct vfs_file *f = arg_file(t, dirfd);
			if (!f)
				return -EBADF;
			if (!f->dentry)
				return rel[0] ? -ENOTDIR : -EACCES;
			base = f->dentry;
		}
		if (!rel[0] && !(flags & AT_EMPTY_PATH))
			return -ENOENT;
		if (rel[0] && !vfs_is_dir(base))
			return -ENOTDIR;
		int n = vfs_path(t->fs->root, base, path, sizeof(path));
		if (n < 0)
			return n;
		if (rel[0] && snprintf(path + n - 1, sizeof(path) - n + 1, "%s%s", n > 2 ? "/" : "",
				       rel) >= (int)(sizeof(path) - n + 1))
			return -ENAMETOOLONG;
	}
	if (flags & AT_SYMLINK_NOFOLLOW) {
		struct vfs_dentry *d;
		if ((err = vfs_lookup(t->fs, NULL, path, 0, &d)))
			return err;
		bool link = S_ISLNK(d->inode->mode);
		vfs_dentry_put(d);
		if (link)
			return -ELOOP;
	}
	return do_execve(t, path, a[2], a[3]);
}
