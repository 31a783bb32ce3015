/* procfs (fs-proc/procfs.h): the root of /proc — its fixed files, formatted as Linux's
 * fs/proc files print them, the pid directories as its dynamic part, /proc/self and
 * /proc/thread-self computed on every read, and the mount tables. /proc/cpuinfo is generated
 * on read from a model taken once from the host's first CPU. */
#include "fs-proc/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/sysmacros.h>

#include "common/units.h"

static const struct procinfo_ops *ops_of(struct kernfs_node *n)
{
	return procfs_of(n)->ops;
}

/* Mount tables */

/* Mountpoints with the escapes Linux's mangle() applies: space, tab, newline, backslash. */
static void put_escaped(struct kernfs_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			kernfs_buf_printf(b, "\\%03o", (unsigned char)*s);
		else
			kernfs_buf_putc(b, *s);
	}
}

static void put_opts(struct kernfs_buf *b, unsigned long flags)
{
	kernfs_buf_puts(b, flags & MS_RDONLY ? "ro" : "rw");
	if (flags & MS_NOSUID)
		kernfs_buf_puts(b, ",nosuid");
	if (flags & MS_NODEV)
		kernfs_buf_puts(b, ",nodev");
	if (flags & MS_NOEXEC)
		kernfs_buf_puts(b, ",noexec");
	kernfs_buf_puts(b, ",relatime");
}

/* The three views of the mount table: /proc/PID/mounts, mountinfo and mountstats. */
enum mounts_view { MOUNTS, MOUNTINFO, MOUNTSTATS };

struct mounts_ctx {
	struct kernfs_buf *b;
	struct vfs_dentry *reader_root;
	enum mounts_view view;
};

static void mount_line(struct mounts_ctx *c, int id, int parent, struct vfs_dentry *root,
		       const char *mountpoint, const char *type, const char *source,
		       unsigned long flags)
{
	struct stat st = {0};

	if (c->view == MOUNTSTATS) {
		kernfs_buf_puts(c->b, "device ");
		put_escaped(c->b, source);
		kernfs_buf_puts(c->b, " mounted on ");
		put_escaped(c->b, mountpoint);
		kernfs_buf_printf(c->b, " with fstype %s\n", type);
		return;
	}
	vfs_stat(root, &st);
	if (c->view == MOUNTINFO) {
		kernfs_buf_printf(c->b, "%d %d %u:%u / ", id, parent, major(st.st_dev),
				  minor(st.st_dev));
		put_escaped(c->b, mountpoint);
		kernfs_buf_putc(c->b, ' ');
		put_opts(c->b, flags);
		kernfs_buf_printf(c->b, " - %s ", type);
		put_escaped(c->b, source);
		kernfs_buf_puts(c->b, flags & MS_RDONLY ? " ro\n" : " rw\n");
	} else {
		put_escaped(c->b, source);
		kernfs_buf_putc(c->b, ' ');
		put_escaped(c->b, mountpoint);
		kernfs_buf_printf(c->b, " %s ", type);
		put_opts(c->b, flags);
		kernfs_buf_puts(c->b, " 0 0\n");
	}
}

static int mount_one(struct vfs_mount *m, void *arg)
{
	struct mounts_ctx *c = arg;
	char path[4096];

	if (vfs_path(c->reader_root, m->mountpoint, path, sizeof(path)) < 0)
		return 0;
	mount_line(c, vfs_mount_id(m->root), vfs_mount_id(m->mountpoint), m->root, path, m->fs_type,
		   m->source, m->flags);
	return 0;
}

static int show_mount_table(struct kernfs_node *n, struct kernfs_buf *b, enum mounts_view view)
{
	struct mounts_ctx c = {.b = b, .reader_root = ops_of(n)->reader_root(), .view = view};
	struct vfs_dentry *root;
	int err = ops_of(n)->root((pid_t)kernfs_key(n, PROCFS_KEY_PID), &root);

	if (err)
		return err == -ESRCH ? -ENOENT : err;
	mount_line(&c, VFS_ROOT_MOUNT_ID, VFS_ROOT_MOUNT_ID, root, "/", "overlay", "overlay", 0);
	vfs_dentry_put(root);
	return vfs_mounts_foreach(mount_one, &c);
}

int procfs_show_mounts(struct kernfs_node *n, struct kernfs_buf *b)
{
	return show_mount_table(n, b, MOUNTS);
}

int procfs_show_mountinfo(struct kernfs_node *n, struct kernfs_buf *b)
{
	return show_mount_table(n, b, MOUNTINFO);
}

int procfs_show_mountstats(struct kernfs_node *n, struct kernfs_buf *b)
{
	return show_mount_table(n, b, MOUNTSTATS);
}

/* System files */

static void split_ns(uint64_t ns, unsigned long long *s, unsigned long long *cs)
{
	*s = ns / NSEC_PER_SEC;
	*cs = ns % NSEC_PER_SEC / (NSEC_PER_SEC / 100); /* hundredths */
}

static int show_uptime(struct kernfs_node *n, struct kernfs_buf *b)
{
	unsigned long long us, ucs, is, ics;

	split_ns(ops_of(n)->uptime_ns(), &us, &ucs);
	split_ns(ops_of(n)->idle_ns(), &is, &ics);
	kernfs_buf_printf(b, "%llu.%02llu %llu.%02llu\n", us, ucs, is, ics);
	return 0;
}

static int show_loadavg(struct kernfs_node *n, struct kernfs_buf *b)
{
	const struct procinfo_ops *o = ops_of(n);

	kernfs_buf_printf(b, "0.00 0.00 0.00 %lu/%lu %d\n", o->nr_running(), o->nr_threads(),
			  o->last_pid());
	return 0;
}

static uint64_t ticks(uint64_t ns)
{
	return ns / (NSEC_PER_SEC / PROCFS_USER_HZ);
}

static void cpu_line(struct kernfs_buf *b, const char *name, uint64_t user, uint64_t idle)
{
	kernfs_buf_printf(b, "%s %llu 0 0 %llu 0 0 0 0 0 0\n", name,
			  (unsigned long long)ticks(user), (unsigned long long)ticks(idle));
}

/* CPU time: the guest's busy time is all "user", the rest "idle", spread evenly over the
 * visible CPUs. */
static int show_stat(struct kernfs_node *n, struct kernfs_buf *b)
{
	const struct procinfo_ops *o = ops_of(n);
	int cpus = o->cpus();
	uint64_t all = o->uptime_ns() * (uint64_t)cpus, idle = o->idle_ns();
	uint64_t busy = all > idle ? all - idle : 0;
	char name[16];

	cpu_line(b, "cpu ", busy, idle);
	for (int i = 0; i < cpus; i++) {
		snprintf(name, sizeof(name), "cpu%d", i);
		cpu_line(b, name, busy / (uint64_t)cpus, idle / (uint64_t)cpus);
	}
	kernfs_buf_printf(b, "intr 0\nctxt 0\nbtime %llu\nprocesses %llu\nprocs_running %lu\n",
			  (unsigned long long)o->boot_time_s(), (unsigned long long)o->forks(),
			  o->nr_running());
	kernfs_buf_puts(b, "procs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n");
	return 0;
}

static void mem_line(struct kernfs_buf *b, const char *label, uint64_t bytes)
{
	kernfs_buf_printf(b, "%-16s%8llu kB\n", label, (unsigned long long)(bytes >> 10));
}

static int show_meminfo(struct kernfs_node *n, struct kernfs_buf *b)
{
	const struct procinfo_ops *o = ops_of(n);
	uint64_t total = o->mem_total(), used = o->mem_used();
	uint64_t free = total > used ? total - used : 0;

	mem_line(b, "MemTotal:", total);
	mem_line(b, "MemFree:", free);
	mem_line(b, "MemAvailable:", free);
	mem_line(b, "Buffers:", 0);
	mem_line(b, "Cached:", 0);
	mem_line(b, "SwapCached:", 0);
	mem_line(b, "Active:", used);
	mem_line(b, "Inactive:", 0);
	mem_line(b, "Active(anon):", used);
	mem_line(b, "Inactive(anon):", 0);
	mem_line(b, "Active(file):", 0);
	mem_line(b, "Inactive(file):", 0);
	mem_line(b, "Unevictable:", 0);
	mem_line(b, "Mlocked:", 0);
	mem_line(b, "SwapTotal:", 0);
	mem_line(b, "SwapFree:", 0);
	mem_line(b, "Zswap:", 0);
	mem_line(b, "Zswapped:", 0);
	mem_line(b, "Dirty:", 0);
	mem_line(b, "Writeback:", 0);
	mem_line(b, "AnonPages:", used);
	mem_line(b, "Mapped:", 0);
	mem_line(b, "Shmem:", 0);
	mem_line(b, "KReclaimable:", 0);
	mem_line(b, "Slab:", 0);
	mem_line(b, "SReclaimable:", 0);
	mem_line(b, "SUnreclaim:", 0);
	mem_line(b, "KernelStack:", 0);
	mem_line(b, "PageTables:", 0);
	mem_line(b, "SecPageTables:", 0);
	mem_line(b, "NFS_Unstable:", 0);
	mem_line(b, "Bounce:", 0);
	mem_line(b, "WritebackTmp:", 0);
	mem_line(b, "CommitLimit:", total / 2);
	mem_line(b, "Committed_AS:", used);
	mem_line(b, "VmallocTotal:", 34359738367ULL << 10);
	mem_line(b, "VmallocUsed:", 0);
	mem_line(b, "VmallocChunk:", 0);
	mem_line(b, "Percpu:", 0);
	mem_line(b, "HardwareCorrupted:", 0);
	mem_line(b, "AnonHugePages:", 0);
	mem_line(b, "ShmemHugePages:", 0);
	mem_line(b, "ShmemPmdMapped:", 0);
	mem_line(b, "FileHugePages:", 0);
	mem_line(b, "FilePmdMapped:", 0);
	kernfs_buf_puts(b, "HugePages_Total:       0\nHugePages_Free:        0\n"
			   "HugePages_Rsvd:        0\nHugePages_Surp:        0\n");
	mem_line(b, "Hugepagesize:", 2048 << 10);
	mem_line(b, "Hugetlb:", 0);
	mem_line(b, "DirectMap4k:", 0);
	mem_line(b, "DirectMap2M:", total);
	mem_line(b, "DirectMap1G:", 0);
	return 0;
}

static int show_version(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "Linux version 6.1.0 (root@minisentry) (gcc (GCC) 12.2.0, GNU ld "
			   "(GNU Binutils) 2.40) #1 SMP minisentry\n");
	return 0;
}

static int show_filesystems(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "nodev\tsysfs\nnodev\ttmpfs\nnodev\tbdev\nnodev\tproc\nnodev\tcgroup2\n"
			   "nodev\tdevtmpfs\nnodev\tdevpts\nnodev\tpipefs\nnodev\tsockfs\n"
			   "nodev\toverlay\nnodev\tmqueue\n");
	return 0;
}

static int show_cmdline(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "BOOT_IMAGE=/vmlinuz-6.1.0-minisentry quiet\n");
	return 0;
}

/* /proc/sysvipc: the System V IPC objects, as the Sentry lists them. */
static int show_sysvipc(struct kernfs_node *n, struct kernfs_buf *b)
{
	const struct procinfo_ops *o = ops_of(n);
	char *text = o->sysvipc ? o->sysvipc((int)kernfs_entry_of(n)->arg) : NULL;

	if (text)
		kernfs_buf_puts(b, text);
	free(text);
	return 0;
}

static const struct kernfs_entry sysvipc_rows[] = {
    {.name = "msg", .mode = S_IFREG | 0444, .show = show_sysvipc, .arg = 2},
    {.name = "sem", .mode = S_IFREG | 0444, .show = show_sysvipc, .arg = 1},
    {.name = "shm", .mode = S_IFREG | 0444, .show = show_sysvipc, .arg = 0},
};

static int show_swaps(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
	return 0;
}

/* cpuinfo */

static void copy_field(char *dst, size_t size, const char *value)
{
	snprintf(dst, size, "%s", value);
	dst[strcspn(dst, "\n")] = '\0';
}

/* The model of the host's first CPU, read once; plausible defaults where it says nothing. */
static void load_cpu_model(struct procfs_cpu_model *m)
{
	static const struct {
		const char *key;
		size_t off, size;
	} fields[] = {
#define F(KEY, FIELD)                                                                              \
	{KEY, offsetof(struct procfs_cpu_model, FIELD),                                            \
	 sizeof(((struct procfs_cpu_model *)0)->FIELD)}
	    F("vendor_id", vendor),
	    F("cpu family", family),
	    F("model", model),
	    F("model name", model_name),
	    F("stepping", stepping),
	    F("microcode", microcode),
	    F("cpu MHz", mhz),
	    F("cache size", cache),
	    F("cpuid level", cpuid_level),
	    F("flags", flags),
	    F("bugs", bugs),
	    F("bogomips", bogomips),
	    F("clflush size", clflush),
	    F("cache_alignment", cache_align),
	    F("address sizes", address_sizes),
#undef F
	};
	char line[8192];
	FILE *f;

	if (m->loaded)
		return;
	m->loaded = true;
	copy_field(m->vendor, sizeof(m->vendor), "GenuineIntel");
	copy_field(m->family, sizeof(m->family), "6");
	copy_field(m->model, sizeof(m->model), "85");
	copy_field(m->model_name, sizeof(m->model_name), "Intel(R) Xeon(R) CPU @ 2.00GHz");
	copy_field(m->stepping, sizeof(m->stepping), "7");
	copy_field(m->microcode, sizeof(m->microcode), "0x1");
	copy_field(m->mhz, sizeof(m->mhz), "2000.000");
	copy_field(m->cache, sizeof(m->cache), "39424 KB");
	copy_field(m->cpuid_level, sizeof(m->cpuid_level), "13");
	copy_field(m->flags, sizeof(m->flags),
		   "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 "
		   "clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc "
		   "rep_good nopl xtopology nonstop_tsc cpuid pni pclmulqdq ssse3 fma cx16 pcid "
		   "sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor "
		   "lahf_lm abm 3dnowprefetch fsgsbase bmi1 avx2 smep bmi2 erms invpcid rdseed adx "
		   "smap clflushopt xsaveopt xsavec xgetbv1 xsaves arat");
	copy_field(m->bugs, sizeof(m->bugs), "spectre_v1 spectre_v2 spec_store_bypass");
	copy_field(m->bogomips, sizeof(m->bogomips), "4000.00");
	copy_field(m->clflush, sizeof(m->clflush), "64");
	copy_field(m->cache_align, sizeof(m->cache_align), "64");
	copy_field(m->address_sizes, sizeof(m->address_sizes), "46 bits physical, 48 bits virtual");
	f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && line[0] != '\n') {
		char *colon = strchr(line, ':');
		size_t klen;

		if (!colon)
			continue;
		klen = (size_t)(colon - line);
		while (klen && (line[klen - 1] == '\t' || line[klen - 1] == ' '))
			klen--;
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (strlen(fields[i].key) == klen && !strncmp(line, fields[i].key, klen)) {
				const char *v = colon + 1;

				while (*v == ' ')
					v++;
				copy_field((char *)m + fields[i].off, fields[i].size, v);
			}
	}
	fclose(f);
}

static int show_cpuinfo(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procfs_cpu_model *m = &procfs_of(n)->cpu;
	int cpus = ops_of(n)->cpus();

	load_cpu_model(m);
	for (int i = 0; i < cpus; i++) {
		kernfs_buf_printf(b,
				  "processor\t: %d\nvendor_id\t: %s\ncpu family\t: %s\n"
				  "model\t\t: %s\nmodel name\t: %s\nstepping\t: %s\n"
				  "microcode\t: %s\ncpu MHz\t\t: %s\ncache size\t: %s\n",
				  i, m->vendor, m->family, m->model, m->model_name, m->stepping,
				  m->microcode, m->mhz, m->cache);
		kernfs_buf_printf(b,
				  "physical id\t: 0\nsiblings\t: %d\ncore id\t\t: %d\n"
				  "cpu cores\t: %d\napicid\t\t: %d\ninitial apicid\t: %d\n"
				  "fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: %s\n"
				  "wp\t\t: yes\n",
				  cpus, i, cpus, i, i, m->cpuid_level);
		kernfs_buf_printf(b,
				  "flags\t\t: %s\nbugs\t\t: %s\nbogomips\t: %s\n"
				  "clflush size\t: %s\ncache_alignment\t: %s\n"
				  "address sizes\t: %s\npower management:\n\n",
				  m->flags, m->bugs, m->bogomips, m->clflush, m->cache_align,
				  m->address_sizes);
	}
	return 0;
}

/* self and thread-self */

static int readlink_self(struct kernfs_node *n, struct kernfs_buf *b)
{
	kernfs_buf_printf(b, "%d", ops_of(n)->self_pid());
	return 0;
}

static int readlink_thread_self(struct kernfs_node *n, struct kernfs_buf *b)
{
	kernfs_buf_printf(b, "%d/task/%d", ops_of(n)->self_pid(), ops_of(n)->self_tid());
	return 0;
}

/* The pids */

static int get_pid_count(const struct procinfo_ops *o)
{
	pid_t one;

	return o->pids(&one, 0);
}

static int pids_iterate(struct kernfs_node *dir, kernfs_emit_fn emit, void *ctx)
{
	const struct procinfo_ops *o = ops_of(dir);
	int max = 256, np;
	pid_t *pids;
	char name[16];

	for (;;) {
		pids = malloc((size_t)max * sizeof(*pids));
		if (!pids)
			return -ENOMEM;
		np = o->pids(pids, max);
		if (np <= max)
			break;
		free(pids);
		max = np + 64;
	}
	for (int i = 0; i < np; i++) {
		snprintf(name, sizeof(name), "%d", pids[i]);
		if (emit(ctx, name, S_IFDIR, pids[i]))
			break;
	}
	free(pids);
	return np < 0 ? np : 0;
}

static bool restoring;

void procfs_set_restoring(bool on)
{
	restoring = on;
}

bool procfs_restoring(void)
{
	return restoring;
}

static int pids_lookup(struct kernfs_node *dir, const char *name, struct kernfs_child_desc *out)
{
	char *end;
	long pid;
	pid_t one;

	if (name[0] < '1' || name[0] > '9')
		return -ENOENT;
	pid = strtol(name, &end, 10);
	if (*end || pid <= 0 || pid > 0x7fffffff)
		return -ENOENT;
	if (!restoring && ops_of(dir)->tids((pid_t)pid, &one, 0) < 0)
		return -ENOENT;
	out->entry = &procfs_pid_entry;
	out->key[PROCFS_KEY_PID] = pid;
	out->key[PROCFS_KEY_TID] = pid;
	out->arg = pid;
	return 0;
}

pid_t procfs_process_of(struct vfs_dentry *d)
{
	struct kernfs_node *n = d ? kernfs_node_of(d->inode) : NULL;

	if (!n || kernfs_entry_of(n) != &procfs_pid_entry)
		return 0;
	return (pid_t)kernfs_key(n, PROCFS_KEY_PID);
}

/* /proc counts a link per process, as Linux's proc_root_getattr. */
static void root_getattr(struct kernfs_node *n, struct stat *st)
{
	int np = get_pid_count(ops_of(n));

	if (np > 0)
		st->st_nlink += (nlink_t)np;
}

static const struct kernfs_dyn_ops pids_dyn = {.iterate = pids_iterate, .lookup = pids_lookup};

#define PROC_FILE(NAME, SHOW)                                                                      \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0444, .show = (SHOW)                             \
	}

static const struct kernfs_entry root_rows[] = {
    {.name = "all", .mode = S_IFDIR | 0555, .flags = KERNFS_LAZY, .children = procfs_all_rows},
    PROC_FILE("cmdline", show_cmdline),
    PROC_FILE("cpuinfo", show_cpuinfo),
    PROC_FILE("filesystems", show_filesystems),
    PROC_FILE("loadavg", show_loadavg),
    PROC_FILE("meminfo", show_meminfo),
    {.name = "mounts", .mode = S_IFLNK | 0777, .target = "self/mounts"},
    {.name = "net", .mode = S_IFLNK | 0777, .target = "self/net"},
    {.name = "self", .mode = S_IFLNK | 0777, .readlink = readlink_self},
    PROC_FILE("stat", show_stat),
    PROC_FILE("swaps", show_swaps),
    {.name = "sys",
     .mode = S_IFDIR | 0555,
     .flags = KERNFS_LAZY | KERNFS_NLINK1,
     .children = procfs_sys_rows},
    {.name = "sysvipc",
     .mode = S_IFDIR | 0555,
     .flags = KERNFS_LAZY,
     .children = sysvipc_rows,
     .nchildren = sizeof(sysvipc_rows) / sizeof(sysvipc_rows[0])},
    {.name = "thread-self", .mode = S_IFLNK | 0777, .readlink = readlink_thread_self},
    PROC_FILE("uptime", show_uptime),
    PROC_FILE("version", show_version),
};

static const struct kernfs_entry procfs_root = {
    .name = "/",
    .mode = S_IFDIR | 0555,
    .children = root_rows,
    .nchildren = sizeof(root_rows) / sizeof(root_rows[0]),
    .dyn = &pids_dyn,
    .getattr = root_getattr,
};

static void procfs_free(void *priv)
{
	struct procfs *p = priv;

	procfs_nsfs_free(p);
	free(p);
}

/* One boot id per sandbox, as Linux has one per boot: every procfs mount shows it, and a
 * restore brings the checkpointed one back. */
static char boot_id[37];

const char *procfs_boot_id(void)
{
	unsigned char r[16] = {0};

	if (boot_id[0])
		return boot_id;
	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		memset(r, 0x5a, sizeof(r));
	snprintf(boot_id, sizeof(boot_id),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0], r[1],
		 r[2], r[3], r[4], r[5], (r[6] & 0x0f) | 0x40, r[7], (r[8] & 0x3f) | 0x80, r[9],
		 r[10], r[11], r[12], r[13], r[14], r[15]);
	return boot_id;
}

bool procfs_set_boot_id(const char *id)
{
	if (strlen(id) != 36)
		return false;
	memcpy(boot_id, id, 37);
	return true;
}

int procfs_new(const struct procinfo_ops *ops, bool eager, struct vfs_dentry **root)
{
	struct procfs *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->ops = ops;
	load_cpu_model(&p->cpu); /* now: a locked Sentry has no host /proc/cpuinfo to read */
	return kernfs_new("proc", PROC_SUPER_MAGIC, &procfs_root, p, procfs_free, eager, root);
}
