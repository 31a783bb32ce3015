/* fs-proc — procfs: /proc/[pid], /proc/self, /proc/sys, the system files and /proc/all
 * (DESIGN.md §6), formatted as Linux formats them from the plain snapshots the kernel gives
 * through struct procinfo_ops. */
#ifndef FS_PROC_PROCFS_H
#define FS_PROC_PROCFS_H

#include <stdbool.h>

#include "fs-proc/procinfo.h"
#include "vfs/vfs.h"

/* A new procfs reading the kernel through OPS (kept, not copied). EAGER builds /proc/sys and
 * the other lazy directories now (--eager-kernfs); /proc/[pid] trees are always made on
 * lookup and live while something holds them. *ROOT gets the root dentry, the caller's
 * reference, to be mounted on /proc; its counters are kernfs_stats(*ROOT) (vfs/kernfs.h). */
int procfs_new(const struct procinfo_ops *ops, bool eager, struct vfs_dentry **root);

/* /proc/sys/fs/nr_open as the guest last wrote it: the highest RLIMIT_NOFILE (64 to
 * PROCFS_NR_OPEN_MAX, the most descriptors a table holds). */
#define PROCFS_NR_OPEN_MAX 1048576
extern long procfs_nr_open;
/* kernel.randomize_va_space as the guest set it: 0 no randomisation, 1 all but brk, 2 all
 * (any other value acts as 2, as in Linux). */
extern int procfs_randomize_va_space;
/* kernel.dmesg_restrict: 1 when reading the kernel log needs CAP_SYSLOG (syslog(2)). */
extern int procfs_dmesg_restrict;

/* Checkpoint: what procfs keeps for the whole sandbox rather than in its nodes (the boot id
 * and the sysctl values written), which the nodes, rebuilt on demand, read back. */
struct enc;
struct dec;
int procfs_state_save(struct enc *e);
int procfs_state_load(struct dec *d);

/* While a restore loads dentries and files, the processes they name are not restored yet:
 * with RESTORING set, /proc/PID, task/TID and fd/N look up whatever number they are given (a
 * name that turns out to be no process afterwards behaves as that of a process that died). */
void procfs_set_restoring(bool restoring);

/* The pid D is the /proc/PID directory of (not task/TID), else 0: Linux takes an open
 * /proc/PID directory for a pidfd (pidfd_send_signal). */
struct vfs_dentry;
pid_t procfs_process_of(struct vfs_dentry *d);

#endif
