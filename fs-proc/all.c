/* /proc/all (docs/proc-all.md): one file per per-process format, each holding one record per
 * process visible to the reader, in pid order. A file is built when it is opened (and when a
 * read starts over at 0) from one pids() call and one snapshot per process, so a process that
 * exits meanwhile is simply absent, one created meanwhile waits for the next open, and no
 * record repeats. Each record is what /proc/PID/FILE shows, through the same formatter. */
#include "fs-proc/internal.h"

#include <errno.h>
#include <stdlib.h>

enum all_kind {
	ALL_STAT,
	ALL_STATM,
	ALL_STATUS,
	ALL_IO,
	ALL_STATX,
	ALL_SCHEDSTAT,
	ALL_CPUSET,
	ALL_CMDLINE
};

static int get_pids(const struct procinfo_ops *ops, pid_t **out)
{
	int max = 256, n;
	pid_t *pids;

	for (;;) {
		pids = malloc((size_t)max * sizeof(*pids));
		if (!pids)
			return -ENOMEM;
		n = ops->pids(pids, max);
		if (n <= max)
			break;
		free(pids);
		max = n + 64;
	}
	if (n < 0)
		free(pids);
	else
		*out = pids;
	return n;
}

/* One record for PID; -ESRCH (it is gone) leaves nothing behind. */
static int all_record(struct procfs *p, enum all_kind kind, pid_t pid, struct kernfs_buf *b)
{
	struct procinfo_task t;
	size_t mark = b->len;
	int err = 0;

	/* The RFC's rule: a record is what /proc/PID/FILE would show this reader, and a file
	 * it may not read at all has no record. */
	bool permitted = procfs_may_read(p, pid);
	if (kind == ALL_IO && !permitted)
		return 0;
	if (kind != ALL_CPUSET && kind != ALL_CMDLINE) {
		err = p->ops->task(pid, pid, &t);
		if (err)
			return err;
	}
	if (kind != ALL_STAT && kind != ALL_STATUS && kind != ALL_STATX) {
		kernfs_buf_i64(b, pid);
		kernfs_buf_putc(b, ' ');
	}
	switch (kind) {
	case ALL_STAT:
		procfs_fmt_stat(b, &t, permitted);
		break;
	case ALL_STATM:
		procfs_fmt_statm(b, &t);
		break;
	case ALL_STATUS:
		procfs_fmt_status(b, &t, p->ops->cpus());
		break;
	case ALL_IO:
		procfs_fmt_io_counters(b, &t);
		break;
	case ALL_STATX:
		/* The RFC's three in one: the stat line, "m " and statm, "io " and the counters;
		 * the io line only where /proc/PID/io would answer this reader. */
		procfs_fmt_stat(b, &t, permitted);
		kernfs_buf_puts(b, "m ");
		procfs_fmt_statm(b, &t);
		if (permitted) {
			kernfs_buf_puts(b, "io ");
			procfs_fmt_io_counters(b, &t);
		}
		break;
	case ALL_SCHEDSTAT:
		procfs_fmt_schedstat(b, &t);
		break;
	case ALL_CPUSET:
		procfs_fmt_cpuset(b);
		break;
	case ALL_CMDLINE:
		err = procfs_fmt_cmdline(b, p->ops, pid, false);
		if (!err)
			kernfs_buf_putc(b, '\n');
		break;
	}
	if (err && b->len > mark)
		b->len = mark;
	return err;
}

static int show_all(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procfs *p = procfs_of(n);
	pid_t *pids;
	int np = get_pids(p->ops, &pids);

	if (np < 0)
		return np;
	for (int i = 0; i < np; i++) {
		int err = all_record(p, (enum all_kind)kernfs_arg(n), pids[i], b);

		if (err && err != -ESRCH && err != -ENOENT) {
			free(pids);
			return err;
		}
	}
	free(pids);
	return 0;
}

#define ALL_ROW(NAME, KIND)                                                                        \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0444, .show = show_all, .arg = (KIND)            \
	}

const struct kernfs_entry procfs_all_rows[] = {
    ALL_ROW("stat", ALL_STAT),
    ALL_ROW("statm", ALL_STATM),
    ALL_ROW("status", ALL_STATUS),
    ALL_ROW("io", ALL_IO),
    ALL_ROW("statx", ALL_STATX),
    ALL_ROW("schedstat", ALL_SCHEDSTAT),
    ALL_ROW("cpuset", ALL_CPUSET),
    ALL_ROW("cmdline", ALL_CMDLINE),
    KERNFS_END_ROW,
};
