/* syslog(2), the kernel log's calls (what dmesg uses). The sandbox's kernel writes no log
 * messages for its guests, so its log is empty: reading all of it gives nothing, its size is
 * the buffer's, and a read for the next message waits for one that never comes (until a
 * signal). The permission rule is Linux's: CAP_SYSLOG (or CAP_SYS_ADMIN), except that a
 * read of the whole log and its size are open to all while kernel.dmesg_restrict is 0. */
#include <errno.h>
#include <linux/capability.h>

#include "fs-proc/procfs.h"
#include "sentry/caps.h"
#include "sentry/sched.h"
#include "sentry/signal.h"
#include "sentry/syscalls.h"
#include "sentry/sysarg.h"
#include "sentry/task.h"

enum {
	SYSLOG_CLOSE,
	SYSLOG_OPEN,
	SYSLOG_READ,
	SYSLOG_READ_ALL,
	SYSLOG_READ_CLEAR,
	SYSLOG_CLEAR,
	SYSLOG_CONSOLE_OFF,
	SYSLOG_CONSOLE_ON,
	SYSLOG_CONSOLE_LEVEL,
	SYSLOG_SIZE_UNREAD,
	SYSLOG_SIZE_BUFFER,
};

#define LOG_BUF_LEN (128 * 1024) /* Linux's default CONFIG_LOG_BUF_SHIFT 17 */

long sys_syslog(struct task *t, const unsigned long *a)
{
	int type = arg_int(a, 0), len = arg_int(a, 2);
	bool open_to_all =
	    (type == SYSLOG_READ_ALL || type == SYSLOG_SIZE_BUFFER) && !procfs_dmesg_restrict;

	if (type != SYSLOG_CLOSE && type != SYSLOG_OPEN && !open_to_all &&
	    !caps_has(t, CAP_SYSLOG) && !caps_has(t, CAP_SYS_ADMIN))
		return -EPERM;
	switch (type) {
	case SYSLOG_CLOSE:
	case SYSLOG_OPEN:
	case SYSLOG_CLEAR:
	case SYSLOG_CONSOLE_OFF:
	case SYSLOG_CONSOLE_ON:
	case SYSLOG_SIZE_UNREAD:
		return 0;
	case SYSLOG_CONSOLE_LEVEL:
		return len < 1 || len > 8 ? -EINVAL : 0;
	case SYSLOG_SIZE_BUFFER:
		return LOG_BUF_LEN;
	case SYSLOG_READ_ALL:
	case SYSLOG_READ_CLEAR:
		return !a[1] || len < 0 ? -EINVAL : 0;
	case SYSLOG_READ:
		if (!a[1] || len < 0)
			return -EINVAL;
		if (!len)
			return 0;
		/* Nothing will be logged: only a signal ends the wait. */
		t->blk.intr_ret = -ERESTARTSYS;
		return task_block(t);
	default:
		return -EINVAL;
	}
}
