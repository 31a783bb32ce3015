/* The per-process files of procfs, formatted exactly as Linux's fs/proc/array.c, base.c and
 * task_mmu.c print them (field order, spacing, units), from one snapshot each. /proc/[pid]
 * and /proc/all both print through these, so a /proc/all record is by construction what the
 * per-pid file shows. */
#include "fs-proc/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/units.h"

#define PAGE_SHIFT 12
/* Mems_allowed: Linux's "%*pb" of a MAX_NUMNODES (1024) bit nodemask holding node 0 alone,
 * the same for every process: 31 empty 32-bit groups, then 1. */
#define ZEROS4 "00000000,00000000,00000000,00000000,"
#define MEMS_ALLOWED                                                                               \
	ZEROS4 ZEROS4 ZEROS4 ZEROS4 ZEROS4 ZEROS4 ZEROS4 "00000000,00000000,00000000,00000001"

static uint64_t ticks(uint64_t ns)
{
	return ns / (NSEC_PER_SEC / PROCFS_USER_HZ);
}

void procfs_fmt_stat(struct kernfs_buf *b, const struct procinfo_task *t, bool permitted)
{
	bool zombie = t->state == 'Z';
	/* What Linux shows a reader without ptrace access: 1 for the code bounds (0 without an
	 * mm), 0 for the stack, the data and argument bounds and the exit code. */
	bool mm = !zombie && t->vsize;
	bool show = permitted && mm;
	/* Fields 4 to 24, the rss limit (25, unsigned: infinity is 2^64-1), and 26 to 52. */
	const int64_t v[] = {
	    t->ppid,
	    t->pgid,
	    t->sid,
	    t->tty_nr,
	    t->tty_pgrp,
	    4194304,
	    (int64_t)t->minflt,
	    0,
	    (int64_t)t->majflt,
	    0,
	    (int64_t)ticks(t->utime_ns),
	    (int64_t)ticks(t->stime_ns),
	    (int64_t)ticks(t->cutime_ns),
	    (int64_t)ticks(t->cstime_ns),
	    t->priority,
	    t->nice,
	    t->nthreads,
	    0,
	    (int64_t)ticks(t->start_time_ns),
	    (int64_t)(zombie ? 0 : t->vsize),
	    (int64_t)(zombie ? 0 : t->rss_pages),
	};
	const int64_t w[] = {
	    (int64_t)(show ? t->start_code
		      : mm ? 1
			   : 0),
	    (int64_t)(show ? t->end_code
		      : mm ? 1
			   : 0),
	    (int64_t)(show ? t->start_stack : 0),
	    0,
	    0,
	    (int64_t)(t->sig_pending & 0x7fffffffULL),
	    (int64_t)(t->sig_blocked & 0x7fffffffULL),
	    (int64_t)(t->sig_ignored & 0x7fffffffULL),
	    (int64_t)(t->sig_caught & 0x7fffffffULL),
	    0,
	    0,
	    0,
	    t->exit_signal,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    (int64_t)(show ? t->start_data : 0),
	    (int64_t)(show ? t->end_data : 0),
	    (int64_t)(show ? t->start_brk : 0),
	    (int64_t)(show ? t->arg_start : 0),
	    (int64_t)(show ? t->arg_end : 0),
	    (int64_t)(show ? t->env_start : 0),
	    (int64_t)(show ? t->env_end : 0),
	    0,
	};

	kernfs_buf_i64(b, t->tid);
	kernfs_buf_puts(b, " (");
	kernfs_buf_write(b, t->comm, strnlen(t->comm, 16));
	kernfs_buf_puts(b, ") ");
	kernfs_buf_putc(b, t->state);
	kernfs_buf_nums(b, v, sizeof(v) / sizeof(v[0]));
	kernfs_buf_putc(b, ' ');
	kernfs_buf_u64(b, t->rlim[5].cur);
	kernfs_buf_nums(b, w, sizeof(w) / sizeof(w[0]));
	kernfs_buf_putc(b, '\n');
}

bool procfs_may_read(struct procfs *p, pid_t pid)
{
	return !p->ops->may_read || p->ops->may_read(pid);
}

void procfs_fmt_statm(struct kernfs_buf *b, const struct procinfo_task *t)
{
	const int64_t v[] = {(int64_t)t->rss_pages,
			     (int64_t)t->rss_file_pages,
			     (int64_t)(t->vm_exe >> PAGE_SHIFT),
			     0,
			     (int64_t)((t->vm_data + t->vm_stack) >> PAGE_SHIFT),
			     0};

	kernfs_buf_u64(b, t->vsize >> PAGE_SHIFT);
	kernfs_buf_nums(b, v, sizeof(v) / sizeof(v[0]));
	kernfs_buf_putc(b, '\n');
}

static const char *state_name(char s)
{
	switch (s) {
	case 'R':
		return "R (running)";
	case 'D':
		return "D (disk sleep)";
	case 'T':
		return "T (stopped)";
	case 't':
		return "t (tracing stop)";
	case 'X':
		return "X (dead)";
	case 'Z':
		return "Z (zombie)";
	case 'I':
		return "I (idle)";
	default:
		return "S (sleeping)";
	}
}

/* "LABEL:\t%8llu kB\n", without printf (status has sixteen of them per process). */
static void kb_line(struct kernfs_buf *b, const char *label, uint64_t bytes)
{
	uint64_t kb = bytes >> 10;
	int digits = 1;

	for (uint64_t x = kb; x >= 10; x /= 10)
		digits++;
	kernfs_buf_puts(b, label);
	kernfs_buf_puts(b, ":\t");
	if (digits < 8)
		kernfs_buf_write(b, "        ", (size_t)(8 - digits));
	kernfs_buf_u64(b, kb);
	kernfs_buf_puts(b, " kB\n");
}

/* Linux escapes the name in status (proc_task_name with escape): backslash and newline. */
static void put_escaped_comm(struct kernfs_buf *b, const char *comm)
{
	for (size_t i = 0; i < 16 && comm[i]; i++) {
		if (comm[i] == '\\')
			kernfs_buf_puts(b, "\\\\");
		else if (comm[i] == '\n')
			kernfs_buf_puts(b, "\\n");
		else
			kernfs_buf_putc(b, comm[i]);
	}
}

/* status's lines without printf ("LABEL:\tN\n", "LABEL:\t%016llx\n", "LABEL:\tA\tB\tC\tD\n"):
 * a 10,000-process /proc/all/status is 40 of them per process. */
static void num_line(struct kernfs_buf *b, const char *label, int64_t v)
{
	kernfs_buf_puts(b, label);
	kernfs_buf_puts(b, ":\t");
	kernfs_buf_i64(b, v);
	kernfs_buf_putc(b, '\n');
}

static void hex_line(struct kernfs_buf *b, const char *label, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char hex[17];

	for (int i = 15; i >= 0; i--, v >>= 4)
		hex[i] = digits[v & 15];
	hex[16] = '\n';
	kernfs_buf_puts(b, label);
	kernfs_buf_puts(b, ":\t");
	kernfs_buf_write(b, hex, sizeof(hex));
}

static void ids_line(struct kernfs_buf *b, const char *label, unsigned int r, unsigned int e,
		     unsigned int s, unsigned int fs)
{
	const unsigned int v[4] = {r, e, s, fs};

	kernfs_buf_puts(b, label);
	for (int i = 0; i < 4; i++) {
		kernfs_buf_putc(b, '\t');
		kernfs_buf_u64(b, v[i]);
	}
	kernfs_buf_putc(b, '\n');
}

void procfs_fmt_status(struct kernfs_buf *b, const struct procinfo_task *t, int cpus)
{
	uint64_t rss = t->rss_pages << PAGE_SHIFT, rss_file = t->rss_file_pages << PAGE_SHIFT;
	char umask[5] = {'0', (char)('0' + (t->umask >> 6 & 7)), (char)('0' + (t->umask >> 3 & 7)),
			 (char)('0' + (t->umask & 7)), 0};

	kernfs_buf_puts(b, "Name:\t");
	put_escaped_comm(b, t->comm);
	kernfs_buf_puts(b, "\nUmask:\t");
	kernfs_buf_puts(b, umask);
	kernfs_buf_puts(b, "\nState:\t");
	kernfs_buf_puts(b, state_name(t->state));
	kernfs_buf_putc(b, '\n');
	num_line(b, "Tgid", t->pid);
	kernfs_buf_puts(b, "Ngid:\t0\n");
	num_line(b, "Pid", t->tid);
	num_line(b, "PPid", t->ppid);
	kernfs_buf_puts(b, "TracerPid:\t0\n");
	ids_line(b, "Uid:", t->uid, t->euid, t->suid, t->euid);
	ids_line(b, "Gid:", t->gid, t->egid, t->sgid, t->egid);
	kernfs_buf_puts(b, "FDSize:\t64\nGroups:\t");
	for (int g = 0; g < t->ngroups && g < 32; g++) {
		if (g)
			kernfs_buf_putc(b, ' ');
		kernfs_buf_u64(b, t->groups[g]);
	}
	kernfs_buf_puts(b, " \n");
	num_line(b, "NStgid", t->pid);
	num_line(b, "NSpid", t->tid);
	num_line(b, "NSpgid", t->pgid);
	num_line(b, "NSsid", t->sid);
	kernfs_buf_puts(b, "Kthread:\t0\n");
	if (t->state != 'Z') {
		kb_line(b, "VmPeak", t->vm_peak > t->vsize ? t->vm_peak : t->vsize);
		kb_line(b, "VmSize", t->vsize);
		kb_line(b, "VmLck", t->vm_lck);
		kb_line(b, "VmPin", 0);
		kb_line(b, "VmHWM", t->vm_hwm > rss ? t->vm_hwm : rss);
		kb_line(b, "VmRSS", rss);
		kb_line(b, "RssAnon", rss > rss_file ? rss - rss_file : 0);
		kb_line(b, "RssFile", rss_file);
		kb_line(b, "RssShmem", 0);
		kb_line(b, "VmData", t->vm_data);
		kb_line(b, "VmStk", t->vm_stack);
		kb_line(b, "VmExe", t->vm_exe);
		kb_line(b, "VmLib", t->vm_lib);
		kb_line(b, "VmPTE", t->vsize >> 9);
		kb_line(b, "VmSwap", 0);
		kb_line(b, "HugetlbPages", 0);
		kernfs_buf_puts(
		    b, "CoreDumping:\t0\nTHP_enabled:\t1\nuntag_mask:\t0xffffffffffffffff\n");
	}
	num_line(b, "Threads", t->nthreads);
	kernfs_buf_puts(b, "SigQ:\t0/");
	kernfs_buf_u64(b, t->rlim[11].cur);
	kernfs_buf_putc(b, '\n');
	hex_line(b, "SigPnd", t->sig_pending);
	hex_line(b, "ShdPnd", t->sig_shared_pending);
	hex_line(b, "SigBlk", t->sig_blocked);
	hex_line(b, "SigIgn", t->sig_ignored);
	hex_line(b, "SigCgt", t->sig_caught);
	hex_line(b, "CapInh", t->cap_inh);
	hex_line(b, "CapPrm", t->cap_prm);
	hex_line(b, "CapEff", t->cap_eff);
	hex_line(b, "CapBnd", t->cap_bnd);
	hex_line(b, "CapAmb", t->cap_amb);
	num_line(b, "NoNewPrivs", t->no_new_privs ? 1 : 0);
	num_line(b, "Seccomp", t->seccomp_mode);
	num_line(b, "Seccomp_filters", t->seccomp_filters);
	kernfs_buf_puts(b, "Speculation_Store_Bypass:\tthread vulnerable\n"
			   "SpeculationIndirectBranch:\tconditional enabled\n");
	kernfs_buf_puts(b, "Cpus_allowed:\t");
	kernfs_buf_bitmap(b, t->cpus_allowed, cpus);
	kernfs_buf_puts(b, "\nCpus_allowed_list:\t");
	kernfs_buf_bitmap_list(b, t->cpus_allowed, cpus);
	kernfs_buf_puts(b, "\nMems_allowed:\t" MEMS_ALLOWED "\nMems_allowed_list:\t0\n");
	num_line(b, "voluntary_ctxt_switches", (int64_t)t->voluntary_ctxt);
	num_line(b, "nonvoluntary_ctxt_switches", (int64_t)t->nonvoluntary_ctxt);
}

void procfs_fmt_io(struct kernfs_buf *b, const struct procinfo_task *t)
{
	kernfs_buf_printf(b,
			  "rchar: %llu\nwchar: %llu\nsyscr: %llu\nsyscw: %llu\nread_bytes: %llu\n"
			  "write_bytes: %llu\ncancelled_write_bytes: 0\n",
			  (unsigned long long)t->rchar, (unsigned long long)t->wchar,
			  (unsigned long long)t->syscr, (unsigned long long)t->syscw,
			  (unsigned long long)t->read_bytes, (unsigned long long)t->write_bytes);
}

/* /proc/all/io's and /proc/all/statx's form of the same counters (the RFC's): one line, in
 * /proc/PID/io's order. */
void procfs_fmt_io_counters(struct kernfs_buf *b, const struct procinfo_task *t)
{
	const int64_t v[] = {(int64_t)t->wchar,	     (int64_t)t->syscr,	      (int64_t)t->syscw,
			     (int64_t)t->read_bytes, (int64_t)t->write_bytes, 0};

	kernfs_buf_u64(b, t->rchar);
	kernfs_buf_nums(b, v, sizeof(v) / sizeof(v[0]));
	kernfs_buf_putc(b, '\n');
}

void procfs_fmt_schedstat(struct kernfs_buf *b, const struct procinfo_task *t)
{
	const int64_t v[] = {(int64_t)t->wait_ns, (int64_t)t->timeslices};

	kernfs_buf_u64(b, t->run_ns);
	kernfs_buf_nums(b, v, 2);
	kernfs_buf_putc(b, '\n');
}

void procfs_fmt_cpuset(struct kernfs_buf *b)
{
	kernfs_buf_puts(b, "/\n");
}

static const struct {
	const char *name, *unit;
} limit_names[16] = {
    {"Max cpu time", "seconds"},     {"Max file size", "bytes"},
    {"Max data size", "bytes"},	     {"Max stack size", "bytes"},
    {"Max core file size", "bytes"}, {"Max resident set", "bytes"},
    {"Max processes", "processes"},  {"Max open files", "files"},
    {"Max locked memory", "bytes"},  {"Max address space", "bytes"},
    {"Max file locks", "locks"},     {"Max pending signals", "signals"},
    {"Max msgqueue size", "bytes"},  {"Max nice priority", NULL},
    {"Max realtime priority", NULL}, {"Max realtime timeout", "us"},
};

void procfs_fmt_limits(struct kernfs_buf *b, const struct procinfo_task *t)
{
	kernfs_buf_printf(b, "%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit", "Hard Limit",
			  "Units");
	for (int i = 0; i < 16; i++) {
		kernfs_buf_printf(b, "%-25s ", limit_names[i].name);
		if (t->rlim[i].cur == UINT64_MAX)
			kernfs_buf_printf(b, "%-20s ", "unlimited");
		else
			kernfs_buf_printf(b, "%-20llu ", (unsigned long long)t->rlim[i].cur);
		if (t->rlim[i].max == UINT64_MAX)
			kernfs_buf_printf(b, "%-20s ", "unlimited");
		else
			kernfs_buf_printf(b, "%-20llu ", (unsigned long long)t->rlim[i].max);
		if (limit_names[i].unit)
			kernfs_buf_printf(b, "%-10s\n", limit_names[i].unit);
		else
			kernfs_buf_putc(b, '\n');
	}
}

/* show_vma_header_prefix, then the name padded to column 73 as seq_pad does. */
static void map_line(struct kernfs_buf *b, uint64_t start, uint64_t end, const char *perms,
		     uint64_t off, unsigned int maj, unsigned int min, uint64_t ino,
		     const char *name)
{
	kernfs_buf_printf(b, "%08llx-%08llx %s %08llx %02x:%02x %llu ", (unsigned long long)start,
			  (unsigned long long)end, perms, (unsigned long long)off, maj, min,
			  (unsigned long long)ino);
	if (name && name[0]) {
		kernfs_buf_pad(b, 25 + 8 * 6 - 1);
		kernfs_buf_putc(b, ' ');
		kernfs_buf_puts(b, name);
	}
	kernfs_buf_putc(b, '\n');
}

void procfs_fmt_maps(struct kernfs_buf *b, const struct procinfo_vma *v, int n)
{
	for (int i = 0; i < n; i++) {
		char perms[5] = {v[i].prot & PROT_READ ? 'r' : '-',
				 v[i].prot & PROT_WRITE ? 'w' : '-',
				 v[i].prot & PROT_EXEC ? 'x' : '-', v[i].shared ? 's' : 'p', 0};

		map_line(b, v[i].start, v[i].end, perms, v[i].offset, v[i].dev_major,
			 v[i].dev_minor, v[i].ino, v[i].name);
	}
}

static void smaps_line(struct kernfs_buf *b, const char *label, uint64_t bytes)
{
	size_t len = strlen(label);

	if (len >= 16)
		kernfs_buf_printf(b, "%s %7llu kB\n", label, (unsigned long long)(bytes >> 10));
	else
		kernfs_buf_printf(b, "%-16s%8llu kB\n", label, (unsigned long long)(bytes >> 10));
}

/* What smaps says of a mapping's resident pages. The Sentry knows which pages of guest memory
 * hold data, not which are shared with another process or were written since, so: every
 * resident page counts once (Pss = Rss) and as private; the pages of a mapping that was never
 * writable are clean, the others dirty; anonymous are the pages of anonymous mappings and of
 * private file mappings once writable (copies), as Linux counts copied-on-write pages. */
struct smaps_counts {
	uint64_t rss, anon, file, shmem, clean, dirty;
};

static struct smaps_counts smaps_of(const struct procinfo_vma *v)
{
	struct smaps_counts c = {.rss = v->rss};
	bool dirty = v->was_writable || !v->file;

	if (v->shared && !v->file)
		c.shmem = v->rss;
	else if (!v->file || (!v->shared && v->was_writable))
		c.anon = v->rss;
	else
		c.file = v->rss;
	if (dirty)
		c.dirty = v->rss;
	else
		c.clean = v->rss;
	return c;
}

static void smaps_body(struct kernfs_buf *b, const struct smaps_counts *c, bool rollup)
{
	smaps_line(b, "Rss:", c->rss);
	smaps_line(b, "Pss:", c->rss);
	smaps_line(b, "Pss_Dirty:", c->dirty);
	if (rollup) {
		smaps_line(b, "Pss_Anon:", c->anon);
		smaps_line(b, "Pss_File:", c->file);
		smaps_line(b, "Pss_Shmem:", c->shmem);
	}
	smaps_line(b, "Shared_Clean:", 0);
	smaps_line(b, "Shared_Dirty:", 0);
	smaps_line(b, "Private_Clean:", c->clean);
	smaps_line(b, "Private_Dirty:", c->dirty);
	smaps_line(b, "Referenced:", c->rss);
	smaps_line(b, "Anonymous:", c->anon);
	smaps_line(b, "KSM:", 0);
	smaps_line(b, "LazyFree:", 0);
	smaps_line(b, "AnonHugePages:", 0);
	smaps_line(b, "ShmemPmdMapped:", 0);
	smaps_line(b, "FilePmdMapped:", 0);
	smaps_line(b, "Shared_Hugetlb:", 0);
	smaps_line(b, "Private_Hugetlb:", 0);
	smaps_line(b, "Swap:", 0);
	smaps_line(b, "SwapPss:", 0);
	smaps_line(b, "Locked:", 0);
}

void procfs_fmt_smaps(struct kernfs_buf *b, const struct procinfo_vma *v, int n)
{
	for (int i = 0; i < n; i++) {
		struct smaps_counts c = smaps_of(&v[i]);

		procfs_fmt_maps(b, &v[i], 1);
		smaps_line(b, "Size:", v[i].end - v[i].start);
		smaps_line(b, "KernelPageSize:", 1ULL << PAGE_SHIFT);
		smaps_line(b, "MMUPageSize:", 1ULL << PAGE_SHIFT);
		smaps_body(b, &c, false);
		kernfs_buf_printf(b, "THPeligible:    %8d\n", 0);
		/* VM_READ.. as show_smap_vma_flags names them; every mapping may be given any
		 * access (mr mw me) but a shared one of a file not open for writing; private
		 * writable and anonymous ones are accounted (ac); the stack grows down (gd). */
		kernfs_buf_printf(
		    b, "VmFlags: %s%s%s%s%s%s%s%s%s%s\n", v[i].prot & PROT_READ ? "rd " : "",
		    v[i].prot & PROT_WRITE ? "wr " : "", v[i].prot & PROT_EXEC ? "ex " : "",
		    v[i].shared ? "sh " : "", "mr ", v[i].shared && !v[i].may_write ? "" : "mw ",
		    "me ", v[i].shared ? "ms " : "", !strcmp(v[i].name, "[stack]") ? "gd " : "",
		    !v[i].shared && (v[i].was_writable || !v[i].file) ? "ac " : "");
	}
}

/* The sum of smaps over every mapping, as Linux's smaps_rollup. */
void procfs_fmt_smaps_rollup(struct kernfs_buf *b, const struct procinfo_vma *v, int n,
			     const struct procinfo_task *t)
{
	struct smaps_counts sum = {0};

	(void)t;
	if (n == 0)
		return;
	for (int i = 0; i < n; i++) {
		struct smaps_counts c = smaps_of(&v[i]);
		sum.rss += c.rss;
		sum.anon += c.anon;
		sum.file += c.file;
		sum.shmem += c.shmem;
		sum.clean += c.clean;
		sum.dirty += c.dirty;
	}
	map_line(b, v[0].start, v[n - 1].end, "---p", 0, 0, 0, 0, "[rollup]");
	smaps_body(b, &sum, true);
}

int procfs_fmt_cmdline(struct kernfs_buf *b, const struct procinfo_ops *ops, pid_t pid, bool env)
{
	size_t size = 4096;
	ssize_t n;
	char *buf;

	for (;;) {
		buf = malloc(size);
		if (!buf)
			return -ENOMEM;
		n = env ? ops->environ(pid, buf, size) : ops->cmdline(pid, buf, size);
		if (n < 0 || (size_t)n < size || size >= (1u << 24))
			break;
		free(buf);
		size *= 2;
	}
	if (n > 0)
		kernfs_buf_write(b, buf, (size_t)n);
	free(buf);
	return n < 0 ? (int)n : 0;
}

int procfs_get_vmas(const struct procinfo_ops *ops, pid_t pid, struct procinfo_vma **out, int *n)
{
	int max = 64, got;
	struct procinfo_vma *v;

	for (;;) {
		v = malloc((size_t)max * sizeof(*v));
		if (!v)
			return -ENOMEM;
		got = ops->vmas(pid, v, max);
		if (got < 0) {
			free(v);
			return got;
		}
		if (got <= max)
			break;
		free(v);
		max = got + 16;
	}
	*out = v;
	*n = got;
	return 0;
}
