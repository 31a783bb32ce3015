/* /proc/sys: the sysctls a guest commonly reads, as one table of rows per directory. Every
 * directory is lazy (nothing exists until it is looked at) and reports one link, as Linux's
 * sysctl directories do. Writable entries keep what is written in one sandbox-wide list, not
 * in their nodes — sysctls are the kernel's, whichever procfs mount shows them — so evicting
 * and re-creating a node, or a second mount of proc, never loses a value, and a checkpoint
 * saves them (procfs_state_save). Read-only ones refuse to be opened for writing with EACCES,
 * as Linux's sysctl_perm does. */
#include "fs-proc/internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fs-proc/procfs.h"
#include "vfs/inotify.h"
#include "state/codec.h"

struct procfs_sysctl_val {
	const struct kernfs_entry *entry;
	char *value;
	struct procfs_sysctl_val *next;
};

static struct procfs_sysctl_val *sysctl_vals;

static struct procfs_sysctl_val *find_val(struct procfs *p, const struct kernfs_entry *e)
{
	(void)p;
	for (struct procfs_sysctl_val *v = sysctl_vals; v; v = v->next)
		if (v->entry == e)
			return v;
	return NULL;
}

static int sysctl_show(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procfs_sysctl_val *v = find_val(procfs_of(n), kernfs_entry_of(n));

	kernfs_buf_puts(b, v ? v->value : (const char *)kernfs_entry_of(n)->data);
	kernfs_buf_putc(b, '\n');
	return 0;
}

/* True if S is whitespace-separated integers (what proc_dointvec and friends accept). */
static bool all_ints(const char *s)
{
	bool any = false;

	while (*s) {
		char *end;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		strtoll(s, &end, 10);
		if (end == s)
			return false;
		any = true;
		s = end;
	}
	return any;
}

static int sysctl_set(struct procfs *p, const struct kernfs_entry *e, const char *data, size_t len);

/* A write replaces the value: numbers must parse as numbers (EINVAL otherwise); strings keep
 * their first line. Tabs separate the parts of a vector, as Linux prints them. */
static int sysctl_store(struct kernfs_node *n, const char *data, size_t len)
{
	struct procfs *p = procfs_of(n);
	const struct kernfs_entry *e = kernfs_entry_of(n);

	return sysctl_set(p, e, data, len);
}

/* Sysctls the kernel acts on (a row's ARG): the value goes to its subsystem before it is
 * kept, and a value the subsystem refuses is refused. A restore sets them the same way. */
#define SYSCTL_PORT_RANGE 1
#define SYSCTL_NR_OPEN 2
#define SYSCTL_RANDOMIZE 3
#define SYSCTL_PTRACE_SCOPE 4
#define SYSCTL_HOSTNAME 5   /* kept by the kernel (uname), not here */
#define SYSCTL_DOMAINNAME 6 /* likewise */
#define SYSCTL_INOTIFY 7    /* 7, 8, 9: the limits vfs_inotify_set_limit numbers 0, 1, 2 */
#define SYSCTL_DMESG_RESTRICT 10
#define SYSCTL_IPC 11 /* System V IPC's limits: the kernel's (procinfo set_ipc_limit) */

long procfs_nr_open = PROCFS_NR_OPEN_MAX;
int procfs_randomize_va_space = 2;
int procfs_dmesg_restrict;

static int sysctl_apply(struct procfs *p, const struct kernfs_entry *e, const char *value)
{
	int lo, hi;
	long n;

	switch (e->arg) {
	case SYSCTL_INOTIFY:
	case SYSCTL_INOTIFY + 1:
	case SYSCTL_INOTIFY + 2:
		/* proc_dointvec_minmax with a minimum of 0. */
		if (sscanf(value, "%ld", &n) != 1)
			return -EINVAL;
		return vfs_inotify_set_limit(e->arg - SYSCTL_INOTIFY, n);
	case SYSCTL_HOSTNAME:
	case SYSCTL_DOMAINNAME:
		if (!p->ops->set_uts_name)
			return -EIO;
		/* proc_do_uts_string: a longer name is cut at 64 bytes. */
		p->ops->set_uts_name(e->arg == SYSCTL_DOMAINNAME, value,
				     strlen(value) < 64 ? strlen(value) : 64);
		return 0;
	case SYSCTL_PORT_RANGE:
		if (sscanf(value, "%d %d", &lo, &hi) != 2)
			return -EINVAL;
		return vfs_inet_set_port_range(lo, hi);
	case SYSCTL_RANDOMIZE:
		/* Linux takes any int here (proc_dointvec). */
		if (sscanf(value, "%ld", &n) != 1 || n < INT_MIN || n > INT_MAX)
			return -EINVAL;
		procfs_randomize_va_space = (int)n;
		return 0;
	case SYSCTL_PTRACE_SCOPE:
		/* Yama keeps 3 once it is set: only 3 may be written again. */
		if (sscanf(value, "%ld", &n) != 1 || n != 3)
			return -EINVAL;
		return 0;
	case SYSCTL_DMESG_RESTRICT:
		/* proc_dointvec_minmax_sysadmin: 0 or 1. */
		if (sscanf(value, "%ld", &n) != 1 || n < 0 || n > 1)
			return -EINVAL;
		procfs_dmesg_restrict = (int)n;
		return 0;
	case SYSCTL_IPC:
		/* A restore (P NULL) keeps the value: the limits come back with the IPC state. */
		return p && p->ops->set_ipc_limit ? p->ops->set_ipc_limit(e->name, value) : 0;
	case SYSCTL_NR_OPEN:
		/* Linux takes up to about 2^31; a descriptor table here holds no more than
		 * PROCFS_NR_OPEN_MAX, so larger values are refused rather than pretended. */
		if (sscanf(value, "%ld", &n) != 1 || n < 64 || n > PROCFS_NR_OPEN_MAX)
			return -EINVAL;
		procfs_nr_open = n;
		return 0;
	}
	return 0;
}

static int sysctl_set(struct procfs *p, const struct kernfs_entry *e, const char *data, size_t len)
{
	struct procfs_sysctl_val *v;
	const char *def = e->data;
	char *value = strndup(data, len), *nl;
	int err;

	if (!value)
		return -ENOMEM;
	nl = strchr(value, '\n');
	if (nl)
		*nl = '\0';
	if (all_ints(def)) {
		/* Normalised: "1 2  3" is kept as "1\t2\t3". */
		char *norm = malloc(strlen(value) * 2 + 2), *out = norm;

		if (!norm || !all_ints(value)) {
			free(norm);
			free(value);
			return norm ? -EINVAL : -ENOMEM;
		}
		for (char *s = value; *s;) {
			char *end;
			long long x;

			while (*s == ' ' || *s == '\t')
				s++;
			if (!*s)
				break;
			x = strtoll(s, &end, 10);
			out += sprintf(out, "%s%lld", out == norm ? "" : "\t", x);
			s = end;
		}
		*out = '\0';
		free(value);
		value = norm;
	}
	if ((err = sysctl_apply(p, e, value)) || e->arg == SYSCTL_HOSTNAME ||
	    e->arg == SYSCTL_DOMAINNAME) {
		free(value);
		return err;
	}
	v = find_val(p, e);
	if (!v) {
		v = calloc(1, sizeof(*v));
		if (!v) {
			free(value);
			return -ENOMEM;
		}
		v->entry = e;
		v->next = sysctl_vals;
		sysctl_vals = v;
	}
	free(v->value);
	v->value = value;
	return 0;
}

static void sysctl_free_all(void)
{
	procfs_nr_open = PROCFS_NR_OPEN_MAX;
	procfs_randomize_va_space = 2;
	procfs_dmesg_restrict = 0;
	while (sysctl_vals) {
		struct procfs_sysctl_val *v = sysctl_vals;

		sysctl_vals = v->next;
		free(v->value);
		free(v);
	}
}

static int show_uts_name(struct kernfs_node *n, struct kernfs_buf *b)
{
	const struct procinfo_ops *ops = procfs_of(n)->ops;

	if (kernfs_entry_of(n)->arg == SYSCTL_HOSTNAME)
		kernfs_buf_puts(b, ops->hostname());
	else
		kernfs_buf_puts(b, ops->domainname ? ops->domainname() : "(none)");
	kernfs_buf_putc(b, '\n');
	return 0;
}

static void put_uuid(struct kernfs_buf *b, const unsigned char *r)
{
	kernfs_buf_printf(b,
			  "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
			  r[0], r[1], r[2], r[3], r[4], r[5], (r[6] & 0x0f) | 0x40, r[7],
			  (r[8] & 0x3f) | 0x80, r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
}

static int show_uuid(struct kernfs_node *n, struct kernfs_buf *b)
{
	unsigned char r[16] = {0};

	(void)n;
	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return -EIO;
	put_uuid(b, r);
	return 0;
}

static int show_boot_id(struct kernfs_node *n, struct kernfs_buf *b)
{
	(void)n;
	kernfs_buf_printf(b, "%s\n", procfs_boot_id());
	return 0;
}

static int show_threads_max(struct kernfs_node *n, struct kernfs_buf *b)
{
	struct procfs_sysctl_val *v = find_val(procfs_of(n), kernfs_entry_of(n));
	uint64_t mem = procfs_of(n)->ops->mem_total();

	/* Linux's set_max_threads: an eighth of RAM in 16 KiB thread stacks. */
	if (v)
		kernfs_buf_printf(b, "%s\n", v->value);
	else
		kernfs_buf_printf(b, "%llu\n", (unsigned long long)(mem / (8 * 16384)));
	return 0;
}

#define RW(NAME, VALUE)                                                                            \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0644, .flags = KERNFS_WRITE_EACCES,              \
		.show = sysctl_show, .store = sysctl_store, .data = (VALUE)                        \
	}
#define IPC(NAME, VALUE)                                                                           \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0644, .flags = KERNFS_WRITE_EACCES,              \
		.show = sysctl_show, .store = sysctl_store, .data = (VALUE), .arg = SYSCTL_IPC     \
	}
#define RO(NAME, VALUE)                                                                            \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0444, .flags = KERNFS_WRITE_EACCES,              \
		.show = sysctl_show, .data = (VALUE)                                               \
	}
#define WO(NAME, VALUE)                                                                            \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0200, .flags = KERNFS_WRITE_EACCES,              \
		.show = sysctl_show, .store = sysctl_store, .data = (VALUE)                        \
	}
#define GEN(NAME, PERM, SHOW)                                                                      \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | (PERM), .flags = KERNFS_WRITE_EACCES,            \
		.show = (SHOW), .store = (PERM)&0200 ? sysctl_store : NULL, .data = ""             \
	}
#define UTS(NAME, ARG)                                                                             \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0644, .flags = KERNFS_WRITE_EACCES,              \
		.show = show_uts_name, .store = sysctl_store, .data = "", .arg = (ARG)             \
	}
#define DIR(NAME, KIDS)                                                                            \
	{                                                                                          \
		.name = (NAME), .mode = S_IFDIR | 0555, .flags = KERNFS_LAZY | KERNFS_NLINK1,      \
		.children = (KIDS), .nchildren = sizeof(KIDS) / sizeof((KIDS)[0])                  \
	}

static const struct kernfs_entry kernel_random[] = {
    GEN("boot_id", 0444, show_boot_id),
    RO("entropy_avail", "256"),
    RO("poolsize", "256"),
    RW("urandom_min_reseed_secs", "60"),
    GEN("uuid", 0444, show_uuid),
    RW("write_wakeup_threshold", "896"),
};

/* No guest process can trace another (sentry/sys_ptrace.c): scope 3, which Linux locks once
 * set. */
static const struct kernfs_entry kernel_yama[] = {
    {.name = "ptrace_scope",
     .mode = S_IFREG | 0644,
     .flags = KERNFS_WRITE_EACCES,
     .show = sysctl_show,
     .store = sysctl_store,
     .data = "3",
     .arg = SYSCTL_PTRACE_SCOPE},
};

static const struct kernfs_entry kernel_keys[] = {
    RW("gc_delay", "300"),	     RW("maxbytes", "20000"),	    RW("maxkeys", "200"),
    RW("root_maxbytes", "25000000"), RW("root_maxkeys", "1000000"),
};

static const struct kernfs_entry kernel_pty[] = {
    RW("max", "4096"),
    RO("nr", "0"),
    RW("reserve", "1024"),
};

static const struct kernfs_entry kernel_seccomp[] = {
    RO("actions_avail", "kill_process kill_thread trap errno user_notif trace log allow"),
    RW("actions_logged", "kill_process kill_thread trap errno user_notif trace log"),
};

static const struct kernfs_entry kernel_rows[] = {
    RW("acct", "4\t2\t30"),
    RO("cap_last_cap", "40"),
    RW("core_pattern", "core"),
    RW("core_pipe_limit", "0"),
    RW("core_uses_pid", "0"),
    RW("ctrl-alt-del", "0"),
    {.name = "dmesg_restrict",
     .mode = S_IFREG | 0644,
     .flags = KERNFS_WRITE_EACCES,
     .show = sysctl_show,
     .store = sysctl_store,
     .data = "0",
     .arg = SYSCTL_DMESG_RESTRICT},
    UTS("domainname", SYSCTL_DOMAINNAME),
    UTS("hostname", SYSCTL_HOSTNAME),
    DIR("keys", kernel_keys),
    RW("kptr_restrict", "0"),
    RW("modprobe", "/sbin/modprobe"),
    IPC("msgmax", "8192"),
    IPC("msgmnb", "16384"),
    IPC("msgmni", "32000"),
    RO("ngroups_max", "65536"),
    RW("nmi_watchdog", "0"),
    RO("osrelease", "6.1.0"),
    RO("ostype", "Linux"),
    RW("overflowgid", "65534"),
    RW("overflowuid", "65534"),
    RW("panic", "0"),
    RW("panic_on_oops", "0"),
    RW("perf_event_paranoid", "2"),
    RW("pid_max", "4194304"),
    RW("poweroff_cmd", "/sbin/poweroff"),
    RW("print-fatal-signals", "0"),
    RW("printk", "4\t4\t1\t7"),
    RW("printk_ratelimit", "5"),
    RW("printk_ratelimit_burst", "10"),
    DIR("pty", kernel_pty),
    DIR("random", kernel_random),
    {.name = "randomize_va_space",
     .mode = S_IFREG | 0644,
     .flags = KERNFS_WRITE_EACCES,
     .show = sysctl_show,
     .store = sysctl_store,
     .data = "2",
     .arg = SYSCTL_RANDOMIZE},
    RW("sched_autogroup_enabled", "1"),
    RW("sched_child_runs_first", "0"),
    RW("sched_rr_timeslice_ms", "100"),
    RW("sched_rt_period_us", "1000000"),
    RW("sched_rt_runtime_us", "950000"),
    DIR("seccomp", kernel_seccomp),
    IPC("sem", "32000\t1024000000\t500\t32000"),
    RW("shm_rmid_forced", "0"),
    IPC("shmall", "18446744073692774399"),
    IPC("shmmax", "18446744073692774399"),
    IPC("shmmni", "4096"),
    RW("sysrq", "176"),
    RW("tainted", "0"),
    GEN("threads-max", 0644, show_threads_max),
    RW("unprivileged_bpf_disabled", "2"),
    RO("version", "#1 SMP minisentry"),
    DIR("yama", kernel_yama),
};

static const struct kernfs_entry vm_rows[] = {
    RW("admin_reserve_kbytes", "8192"),
    RW("dirty_background_bytes", "0"),
    RW("dirty_background_ratio", "10"),
    RW("dirty_bytes", "0"),
    RW("dirty_expire_centisecs", "3000"),
    RW("dirty_ratio", "20"),
    RW("dirty_writeback_centisecs", "500"),
    WO("drop_caches", "0"),
    RW("laptop_mode", "0"),
    RW("max_map_count", "65530"),
    RW("min_free_kbytes", "67584"),
    RW("mmap_min_addr", "65536"),
    RW("nr_hugepages", "0"),
    RW("oom_kill_allocating_task", "0"),
    RW("overcommit_kbytes", "0"),
    RW("overcommit_memory", "0"),
    RW("overcommit_ratio", "50"),
    RW("page-cluster", "3"),
    RW("panic_on_oom", "0"),
    RW("stat_interval", "1"),
    RW("swappiness", "60"),
    RW("user_reserve_kbytes", "131072"),
    RW("vfs_cache_pressure", "100"),
    RW("zone_reclaim_mode", "0"),
};

/* Kept by vfs/inotify.c (SYSCTL_INOTIFY + the limit's number). */
#define INOTIFY_ROW(NAME, VALUE, WHICH)                                                            \
	{                                                                                          \
		.name = (NAME), .mode = S_IFREG | 0644, .flags = KERNFS_WRITE_EACCES,              \
		.show = sysctl_show, .store = sysctl_store, .data = (VALUE),                       \
		.arg = SYSCTL_INOTIFY + (WHICH)                                                    \
	}
static const struct kernfs_entry fs_inotify[] = {
    INOTIFY_ROW("max_queued_events", "16384", 0),
    INOTIFY_ROW("max_user_instances", "128", 1),
    INOTIFY_ROW("max_user_watches", "8192", 2),
};

static const struct kernfs_entry fs_epoll[] = {
    RW("max_user_watches", "1681342"),
};

static const struct kernfs_entry fs_mqueue[] = {
    RW("msg_default", "10"),   RW("msg_max", "10"),	RW("msgsize_default", "8192"),
    RW("msgsize_max", "8192"), RW("queues_max", "256"),
};

static const struct kernfs_entry fs_rows[] = {
    RW("aio-max-nr", "65536"),
    RO("aio-nr", "0"),
    RO("dentry-state", "0\t0\t45\t0\t0\t0"),
    DIR("epoll", fs_epoll),
    RW("file-max", "9223372036854775807"),
    RO("file-nr", "0\t0\t9223372036854775807"),
    DIR("inotify", fs_inotify),
    RO("inode-nr", "0\t0"),
    RW("lease-break-time", "45"),
    RW("leases-enable", "1"),
    DIR("mqueue", fs_mqueue),
    {.name = "nr_open",
     .mode = S_IFREG | 0644,
     .flags = KERNFS_WRITE_EACCES,
     .show = sysctl_show,
     .store = sysctl_store,
     .data = "1048576",
     .arg = SYSCTL_NR_OPEN},
    RW("overflowgid", "65534"),
    RW("overflowuid", "65534"),
    RW("pipe-max-size", "1048576"),
    RW("pipe-user-pages-hard", "0"),
    RW("pipe-user-pages-soft", "16384"),
    RW("protected_fifos", "1"),
    RW("protected_hardlinks", "1"),
    RW("protected_regular", "2"),
    RW("protected_symlinks", "1"),
    RW("suid_dumpable", "0"),
};

static const struct kernfs_entry net_core[] = {
    RW("message_burst", "10"), RW("message_cost", "5"),	     RW("netdev_max_backlog", "1000"),
    RW("optmem_max", "20480"), RW("rmem_default", "212992"), RW("rmem_max", "212992"),
    RW("somaxconn", "4096"),   RW("wmem_default", "212992"), RW("wmem_max", "212992"),
};

static const struct kernfs_entry net_ipv4[] = {
    RW("ip_default_ttl", "64"),
    RW("ip_forward", "0"),
    {.name = "ip_local_port_range",
     .mode = S_IFREG | 0644,
     .flags = KERNFS_WRITE_EACCES,
     .show = sysctl_show,
     .store = sysctl_store,
     .data = "32768\t60999",
     .arg = SYSCTL_PORT_RANGE},
    RW("ping_group_range", "1\t0"),
    RW("tcp_congestion_control", "cubic"),
    RW("tcp_fin_timeout", "60"),
    RW("tcp_keepalive_intvl", "75"),
    RW("tcp_keepalive_probes", "9"),
    RW("tcp_keepalive_time", "7200"),
    RW("tcp_max_syn_backlog", "512"),
    RW("tcp_rmem", "4096\t131072\t6291456"),
    RW("tcp_sack", "1"),
    RW("tcp_syncookies", "1"),
    RW("tcp_timestamps", "1"),
    RW("tcp_window_scaling", "1"),
    RW("tcp_wmem", "4096\t16384\t4194304"),
};

static const struct kernfs_entry net_unix[] = {
    RW("max_dgram_qlen", "512"),
};

static const struct kernfs_entry net_rows[] = {
    DIR("core", net_core),
    DIR("ipv4", net_ipv4),
    DIR("unix", net_unix),
};

const struct kernfs_entry procfs_sys_rows[] = {
    DIR("fs", fs_rows), DIR("kernel", kernel_rows), DIR("net", net_rows), DIR("vm", vm_rows),
    KERNFS_END_ROW,
};
/* The rows of /proc/sys, less the end row. */
#define SYS_NROWS (sizeof(procfs_sys_rows) / sizeof(procfs_sys_rows[0]) - 1)

/* --- checkpoint ---------------------------------------------------------------------------- */

/* The path under /proc/sys of row E within ROWS (N rows), written into BUF after PREFIX. */
static bool entry_path(const struct kernfs_entry *rows, size_t n, const struct kernfs_entry *e,
		       char *buf, size_t size, size_t at)
{
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(buf + at, size - at, "%s%s", at ? "/" : "", rows[i].name);
		if (len < 0 || (size_t)len >= size - at)
			return false;
		if (&rows[i] == e)
			return true;
		if (rows[i].children && entry_path(rows[i].children, kernfs_nchildren(&rows[i]), e,
						   buf, size, at + len))
			return true;
	}
	buf[at] = 0;
	return false;
}

static const struct kernfs_entry *entry_at(const struct kernfs_entry *rows, size_t n,
					   const char *path)
{
	size_t len = strcspn(path, "/");

	for (size_t i = 0; i < n; i++) {
		if (strlen(rows[i].name) != len || strncmp(rows[i].name, path, len))
			continue;
		if (!path[len])
			return &rows[i];
		return rows[i].children
			   ? entry_at(rows[i].children, kernfs_nchildren(&rows[i]), path + len + 1)
			   : NULL;
	}
	return NULL;
}

int procfs_state_save(struct enc *e)
{
	uint64_t n = 0;
	char path[256];

	enc_str(e, procfs_boot_id());
	for (struct procfs_sysctl_val *v = sysctl_vals; v; v = v->next)
		n++;
	enc_u64(e, n);
	for (struct procfs_sysctl_val *v = sysctl_vals; v; v = v->next) {
		if (!entry_path(procfs_sys_rows, SYS_NROWS, v->entry, path, sizeof(path), 0))
			return enc_fail(e, "a sysctl outside /proc/sys");
		enc_str(e, path);
		enc_str(e, v->value);
	}
	return enc_ok(e) ? 0 : -ENOMEM;
}

int procfs_state_load(struct dec *d)
{
	char boot_id[40], path[256];

	sysctl_free_all();
	if (!dec_str_buf(d, boot_id, sizeof(boot_id)) || !procfs_set_boot_id(boot_id))
		return dec_fail(d, "bad boot id");
	uint64_t n = dec_max(d, 4096, "sysctl count");
	for (uint64_t i = 0; i < n && dec_ok(d); i++) {
		const struct kernfs_entry *e = dec_str_buf(d, path, sizeof(path))
						   ? entry_at(procfs_sys_rows, SYS_NROWS, path)
						   : NULL;
		char *value = dec_str(d);
		if (!e || !e->store || !value)
			dec_fail(d, "bad sysctl %s", path);
		else if (sysctl_set(NULL, e, value, strlen(value)))
			dec_fail(d, "bad value for sysctl %s", path);
		free(value);
	}
	return dec_ok(d) ? 0 : -EINVAL;
}
