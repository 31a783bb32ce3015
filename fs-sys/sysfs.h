/* fs-sys — sysfs: what a guest finds under /sys (DESIGN.md §6): the CPU topology of the
 * --cpus CPUs it is shown, /sys/kernel and an empty /sys/fs/cgroup. The cpu directory and
 * each cpuN are lazy: nothing under them exists until a guest looks. */
#ifndef FS_SYS_SYSFS_H
#define FS_SYS_SYSFS_H

#include <stdbool.h>

#include "common/limits.h"
#include "vfs/vfs.h"

/* A new sysfs for CPUS CPUs (1..MAX_CPUS, else -EINVAL); EAGER builds every lazy
 * directory now (--eager-kernfs). *ROOT gets the root dentry, the caller's reference, to be
 * mounted on /sys; its counters are kernfs_stats(*ROOT) (vfs/kernfs.h). */
int sysfs_new(int cpus, bool eager, struct vfs_dentry **root);

#endif
