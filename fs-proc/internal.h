/* fs-proc/internal.h — what the files of fs-proc share: the procfs instance every node's
 * callbacks reach through kernfs_priv, and the per-process formats that /proc/[pid] and
 * /proc/all both print (pure functions of a snapshot, so the unit tests can check them). */
#ifndef FS_PROC_INTERNAL_H
#define FS_PROC_INTERNAL_H

#include "fs-proc/procfs.h"
#include "vfs/kernfs.h"

#define PROC_SUPER_MAGIC 0x9fa0
#define PROCFS_USER_HZ 100

/* Keys of /proc nodes (kernfs_key): the process, the thread (the process's own pid for
 * /proc/PID itself) and the descriptor. */
#define PROCFS_KEY_PID 0
#define PROCFS_KEY_TID 1
#define PROCFS_KEY_FD 2

struct procfs_sysctl_val;

struct procfs_cpu_model {
	bool loaded;
	char vendor[64], family[16], model[16], model_name[128], stepping[16], microcode[32];
	char mhz[32], cache[32], cpuid_level[16], flags[4096], bugs[512], bogomips[32];
	char clflush[16], cache_align[16], address_sizes[64];
};

struct procfs {
	const struct procinfo_ops *ops;
	struct procfs_cpu_model cpu;
	struct vfs_dentry *nsfs; /* the root of the namespace files (ns.c), once needed */
};

static inline struct procfs *procfs_of(struct kernfs_node *n)
{
	return kernfs_priv(n);
}

/* Snapshots: the process or thread a node names. */
int procfs_task(struct procfs *p, struct kernfs_node *n, struct procinfo_task *t);

/* Per-process formats (format.c). T is a snapshot from procinfo_ops.task; CPUS the number of
 * visible CPUs (for masks). */
/* PERMITTED: the reader may see T's addresses and exit code (procfs_may_read). */
void procfs_fmt_stat(struct kernfs_buf *b, const struct procinfo_task *t, bool permitted);
bool procfs_may_read(struct procfs *p, pid_t pid);
/* Set while a restore loads (procfs_set_restoring): dynamic lookups do not check. */
bool procfs_restoring(void);
void procfs_fmt_statm(struct kernfs_buf *b, const struct procinfo_task *t);
void procfs_fmt_status(struct kernfs_buf *b, const struct procinfo_task *t, int cpus);
void procfs_fmt_io(struct kernfs_buf *b, const struct procinfo_task *t);
void procfs_fmt_io_counters(struct kernfs_buf *b, const struct procinfo_task *t);
void procfs_fmt_schedstat(struct kernfs_buf *b, const struct procinfo_task *t);
void procfs_fmt_limits(struct kernfs_buf *b, const struct procinfo_task *t);
void procfs_fmt_maps(struct kernfs_buf *b, const struct procinfo_vma *v, int n);
void procfs_fmt_smaps(struct kernfs_buf *b, const struct procinfo_vma *v, int n);
void procfs_fmt_smaps_rollup(struct kernfs_buf *b, const struct procinfo_vma *v, int n,
			     const struct procinfo_task *t);
/* cpuset and cgroup: the one cgroup every process is in. */
void procfs_fmt_cpuset(struct kernfs_buf *b);
/* argv or environ bytes of PID, as read from its memory; -ESRCH if it is gone. */
int procfs_fmt_cmdline(struct kernfs_buf *b, const struct procinfo_ops *ops, pid_t pid, bool env);
/* The mappings of PID, in a malloc'd array (*OUT) of *N. */
int procfs_get_vmas(const struct procinfo_ops *ops, pid_t pid, struct procinfo_vma **out, int *n);

/* The trees (pid.c, sysctl.c, all.c, net.c, procfs.c). The row tables other files' directories
 * list end with KERNFS_END_ROW, which counts them. */
extern const struct kernfs_entry procfs_pid_entry;
extern const struct kernfs_entry procfs_sys_rows[];
extern const struct kernfs_entry procfs_ns_rows[];
void procfs_nsfs_free(struct procfs *p);
/* The owner of a /proc/PID file: the process's (e)uid and gid. */
void procfs_pid_owner(struct kernfs_node *n, struct stat *st);
extern const struct kernfs_entry procfs_net_rows[];
extern const struct kernfs_entry procfs_all_rows[];
/* /proc/PID/mounts and mountinfo for the process PID. */
int procfs_show_mounts(struct kernfs_node *n, struct kernfs_buf *b);
int procfs_show_mountinfo(struct kernfs_node *n, struct kernfs_buf *b);
int procfs_show_mountstats(struct kernfs_node *n, struct kernfs_buf *b);
/* The sandbox's boot id (a random UUID made once, or the restored one). */
const char *procfs_boot_id(void);
bool procfs_set_boot_id(const char *id);

#endif
