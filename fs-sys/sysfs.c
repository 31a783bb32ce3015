/* sysfs (fs-sys/sysfs.h) as one table of kernfs rows. The CPUs' directories are generated
 * rows (the count comes from --cpus), so /sys/devices/system/cpu costs one inode until it is
 * listed, and each cpuN one more until its topology is read. The topology is a made-up one:
 * one package, one core per CPU, one thread per core. */
#include "fs-sys/sysfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfs/kernfs.h"

#define SYSFS_MAGIC 0x62656572 /* SYSFS_MAGIC from linux/magic.h */
#define SYSFS_NR_CPUS 8192     /* what kernel_max reports, less one: a distribution's NR_CPUS */
/* Row files: what Linux's kernfs reports for an attribute (size 4096, writes to read-only
 * ones refused at open with EACCES). */
#define SYSFS_FILE(NAME, SHOW)                                                                     \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0444, .flags = KERNFS_WRITE_EACCES,              \
		.show = (SHOW), .size = 4096                                                       \
	}
#define SYSFS_DIR(NAME, KIDS, FLAGS)                                                               \
	{                                                                                          \
		.name = (NAME), .mode = S_IFDIR | 0755, .flags = (FLAGS), .children = (KIDS),      \
		.nchildren = sizeof(KIDS) / sizeof((KIDS)[0])                                      \
	}
#define SYSFS_EMPTY_DIR(NAME)                                                                      \
	{                                                                                          \
		.name = (NAME), .mode = S_IFDIR | 0755                                             \
	}

struct sysfs {
	int cpus;
};

static int ncpus(struct kernfs_node *n)
{
	return ((struct sysfs *)kernfs_priv(n))->cpus;
}

/* The CPU a topology file belongs to: the cpuN row sets key 0. */
static int cpu_of(struct kernfs_node *n)
{
	return (int)kernfs_key(n, 0);
}

static void mask_all(uint64_t *bits, int n)
{
	memset(bits, 0, CPU_MASK_WORDS * sizeof(*bits));
	for (int i = 0; i < n; i++)
		bits[i / 64] |= 1ULL << (i % 64);
}

static int show_all_list(struct kernfs_node *n, struct kernfs_buf *b)
{
	uint64_t bits[CPU_MASK_WORDS];

	mask_all(bits, ncpus(n));
	kernfs_buf_bitmap_list(b, bits, ncpus(n));
	kernfs_buf_putc(b, '\n');
	return 0;
}

static int show_all_mask(struct kernfs_node *n, struct kernfs_buf *b)
{
	uint64_t bits[CPU_MASK_WORDS];

	mask_all(bits, ncpus(n));
	kernfs_buf_bitmap(b, bits, ncpus(n));
	kernfs_buf_putc(b, '\n');
	return 0;
}

static int show_self_mask(struct kernfs_node *n, struct kernfs_buf *b)
{
	uint64_t bits[CPU_MASK_WORDS] = {0};
	int cpu = cpu_of(n);

	bits[cpu / 64] = 1ULL << (cpu % 64);
	kernfs_buf_bitmap(b, bits, ncpus(n));
	kernfs_buf_putc(b, '\n');
	return 0;
}

static int show_self_list(struct kernfs_node *n, struct kernfs_buf *b)
{
	kernfs_buf_printf(b, "%d\n", cpu_of(n));
	return 0;
}

static int show_zero(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_puts(b, "0\n");
	return 0;
}

static int show_empty(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_putc(b, '\n');
	return 0;
}

static int show_kernel_max(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_printf(b, "%d\n", SYSFS_NR_CPUS - 1);
	return 0;
}

static const struct kernfs_entry topology_rows[] = {
    SYSFS_FILE("core_id", show_self_list),
    SYSFS_FILE("core_siblings", show_all_mask),
    SYSFS_FILE("core_siblings_list", show_all_list),
    SYSFS_FILE("physical_package_id", show_zero),
    SYSFS_FILE("thread_siblings", show_self_mask),
    SYSFS_FILE("thread_siblings_list", show_self_list),
};

static const struct kernfs_entry cpun_rows[] = {
    SYSFS_DIR("topology", topology_rows, KERNFS_LAZY),
};

static const struct kernfs_entry cpun_entry = SYSFS_DIR("cpuN", cpun_rows, KERNFS_LAZY);

static const struct kernfs_entry cpu_files[] = {
    SYSFS_FILE("kernel_max", show_kernel_max), SYSFS_FILE("offline", show_empty),
    SYSFS_FILE("online", show_all_list),       SYSFS_FILE("possible", show_all_list),
    SYSFS_FILE("present", show_all_list),
};
#define N_CPU_FILES (sizeof(cpu_files) / sizeof(cpu_files[0]))

/* /sys/devices/system/cpu: cpu0..cpuN-1, then the files. */
static size_t cpu_count(struct kernfs_node *dir, size_t *nsubdirs)
{
	*nsubdirs = (size_t)ncpus(dir);
	return (size_t)ncpus(dir) + N_CPU_FILES;
}

static int cpu_row(struct kernfs_node *dir, size_t i, struct kernfs_child_desc *out)
{
	if (i < (size_t)ncpus(dir)) {
		out->entry = &cpun_entry;
		out->key[0] = (long)i;
		snprintf(out->name, sizeof(out->name), "cpu%zu", i);
		return 0;
	}
	i -= (size_t)ncpus(dir);
	if (i >= N_CPU_FILES)
		return -ENOENT;
	out->entry = &cpu_files[i];
	snprintf(out->name, sizeof(out->name), "%s", cpu_files[i].name);
	return 0;
}

static const struct kernfs_gen_ops cpu_gen = {.count = cpu_count, .row = cpu_row};

static const struct kernfs_entry system_rows[] = {
    {.name = "cpu", .mode = S_IFDIR | 0755, .gen = &cpu_gen},
};

static const struct kernfs_entry devices_rows[] = {
    SYSFS_DIR("system", system_rows, 0),
};

static const struct kernfs_entry fs_rows[] = {
    SYSFS_EMPTY_DIR("cgroup"),
};

static const struct kernfs_entry kernel_mm_rows[] = {
    SYSFS_EMPTY_DIR("transparent_hugepage"),
};

static const struct kernfs_entry kernel_rows[] = {
    SYSFS_DIR("mm", kernel_mm_rows, 0),
};

static const struct kernfs_entry root_rows[] = {
    SYSFS_EMPTY_DIR("block"),
    SYSFS_EMPTY_DIR("bus"),
    SYSFS_EMPTY_DIR("class"),
    SYSFS_EMPTY_DIR("dev"),
    SYSFS_DIR("devices", devices_rows, 0),
    SYSFS_EMPTY_DIR("firmware"),
    SYSFS_DIR("fs", fs_rows, 0),
    SYSFS_DIR("kernel", kernel_rows, 0),
    SYSFS_EMPTY_DIR("module"),
    SYSFS_EMPTY_DIR("power"),
};

static const struct kernfs_entry sysfs_root = {
    .name = "/",
    .mode = S_IFDIR | 0555,
    .children = root_rows,
    .nchildren = sizeof(root_rows) / sizeof(root_rows[0]),
};

int sysfs_new(int cpus, bool eager, struct vfs_dentry **root)
{
	struct sysfs *s;

	if (cpus < 1 || cpus > MAX_CPUS)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cpus = cpus;
	return kernfs_new("sysfs", SYSFS_MAGIC, &sysfs_root, s, free, eager, root);
}
