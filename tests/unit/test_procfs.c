/* Unit tests for procfs (fs-proc/) on made-up processes: the exact formats of stat, statm,
 * status and maps, /proc/all as the concatenation of the per-pid files, a process exiting
 * between the pid list and its snapshot, /proc/self, /proc/sys reads, writes and errors,
 * and identical lazy and eager /proc/sys trees. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sys/mman.h>

#include "fs-proc/procfs.h"
#include "state/codec.h"
#include "tests/unit/kernfs_walk.h"

static struct vfs_dentry *root;
static struct vfs_fs_ctx fs;

/* The made-up kernel: init (1), a two-threaded sleep (42, thread 43) and cat (100). PID
 * VANISHING is listed by pids() but gone by the time its snapshot is asked for. */
static pid_t pid_list[] = {1, 42, 100};
static int npids = 3;
static pid_t vanishing = 0;

static int fake_pids(pid_t *out, int max)
{
	int n = 0;

	for (int i = 0; i < npids; i++) {
		if (n < max)
			out[n] = pid_list[i];
		n++;
	}
	if (vanishing) {
		if (n < max)
			out[n] = vanishing;
		n++;
	}
	return n;
}

static bool exists(pid_t pid)
{
	for (int i = 0; i < npids; i++)
		if (pid_list[i] == pid)
			return true;
	return false;
}

static int fake_tids(pid_t pid, pid_t *out, int max)
{
	if (!exists(pid))
		return -ESRCH;
	if (max > 0)
		out[0] = pid;
	if (pid != 42)
		return 1;
	if (max > 1)
		out[1] = 43;
	return 2;
}

static pid_t fake_self_pid(void)
{
	return 42;
}

static pid_t fake_self_tid(void)
{
	return 43;
}

static int fake_task(pid_t pid, pid_t tid, struct procinfo_task *t)
{
	if (!exists(pid) || (tid != pid && !(pid == 42 && tid == 43)))
		return -ESRCH;
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->ppid = pid == 1 ? 0 : 1;
	t->pgid = pid;
	t->sid = 1;
	t->tty_pgrp = -1;
	snprintf(t->comm, sizeof(t->comm), "%s", pid == 1 ? "init" : pid == 42 ? "sleep" : "cat");
	t->state = pid == 100 ? 'R' : 'S';
	t->uid = t->euid = t->suid = pid == 100 ? 1000 : 0;
	t->cap_bnd = 0x000001ffffffffffULL; /* every capability up to CAP_LAST_CAP 40 */
	if (t->euid == 0)
		t->cap_eff = t->cap_prm = t->cap_bnd;
	t->gid = t->egid = t->sgid = pid == 100 ? 1000 : 0;
	t->ngroups = pid == 100 ? 2 : 0;
	t->groups[0] = 1000;
	t->groups[1] = 10;
	t->nthreads = pid == 42 ? 2 : 1;
	t->start_time_ns = 1500000000ULL * (uint64_t)pid;
	t->utime_ns = 250000000;
	t->stime_ns = 100000000;
	t->vsize = 8 << 20;
	t->rss_pages = 300;
	t->rss_file_pages = 200;
	t->vm_peak = 9 << 20;
	t->vm_data = 1 << 20;
	t->vm_stack = 132 << 10;
	t->vm_exe = 64 << 10;
	t->vm_lib = 2 << 20;
	t->vm_hwm = 1400 << 10;
	t->sig_blocked = 1ULL << 1;
	t->sig_caught = (1ULL << 16) | (1ULL << 40);
	t->start_code = 0x400000;
	t->end_code = 0x410000;
	t->start_stack = 0x7ffffffde000;
	t->minflt = 5;
	t->majflt = 1;
	t->rchar = 1000 + (uint64_t)pid;
	t->wchar = 2000;
	t->syscr = 30;
	t->syscw = 40;
	t->run_ns = 350000000;
	t->wait_ns = 1234;
	t->timeslices = 7;
	t->voluntary_ctxt = 7;
	t->priority = 20;
	t->exit_signal = 17;
	t->cpus_allowed[0] = 0xf;
	t->umask = 022;
	for (int i = 0; i < 16; i++)
		t->rlim[i].cur = t->rlim[i].max = UINT64_MAX;
	t->rlim[7].cur = 1024;
	t->rlim[7].max = 4096;
	t->rlim[11].cur = t->rlim[11].max = 63429;
	return 0;
}

static ssize_t fake_cmdline(pid_t pid, char *buf, size_t size)
{
	static const char sleep_args[] = "sleep\0"
					 "1000";
	const char *s = pid == 42 ? sleep_args : pid == 1 ? "/sbin/init" : "cat";
	size_t len = pid == 42 ? sizeof(sleep_args) : strlen(s) + 1;

	if (!exists(pid))
		return -ESRCH;
	if (len > size)
		len = size;
	memcpy(buf, s, len);
	return (ssize_t)len;
}

static ssize_t fake_environ(pid_t pid, char *buf, size_t size)
{
	static const char env[] = "HOME=/\0PATH=/bin";

	if (!exists(pid))
		return -ESRCH;
	(void)size;
	memcpy(buf, env, sizeof(env));
	return sizeof(env);
}

static int fake_vmas(pid_t pid, struct procinfo_vma *out, int max)
{
	/* Resident: 64 + 8 + 100 + 4 + 24 = 200 kB. */
	static const struct procinfo_vma v[] = {
	    {0x400000, 0x410000, PROT_READ | PROT_EXEC, false, 0, 1234, 0, 0x21, "/bin/sleep",
	     0x10000, true, false, true},
	    {0x410000, 0x412000, PROT_READ | PROT_WRITE, false, 0x10000, 1234, 0, 0x21,
	     "/bin/sleep", 0x2000, true, true, true},
	    {0x412000, 0x433000, PROT_READ | PROT_WRITE, false, 0, 0, 0, 0, "[heap]", 0x19000,
	     false, true, true},
	    {0x7f0000000000, 0x7f0000001000, PROT_READ, true, 0, 0, 0, 0, "", 0x1000, false, false,
	     true},
	    {0x7ffffffde000, 0x7ffffffff000, PROT_READ | PROT_WRITE, false, 0, 0, 0, 0, "[stack]",
	     0x6000, false, true, true},
	};
	int n = sizeof(v) / sizeof(v[0]);

	if (!exists(pid))
		return -ESRCH;
	for (int i = 0; i < n && i < max; i++)
		out[i] = v[i];
	return n;
}

static int fake_fds(pid_t pid, int *out, int max)
{
	(void)pid, (void)out, (void)max;
	return 0;
}

static int fake_fd_file(pid_t pid, int fd, struct vfs_file **out, bool *cloexec)
{
	(void)pid, (void)fd, (void)out, (void)cloexec;
	return -ENOENT;
}

static int fake_root(pid_t pid, struct vfs_dentry **out)
{
	if (!exists(pid))
		return -ESRCH;
	*out = vfs_dentry_get(root);
	return 0;
}

static int fake_exe(pid_t pid, struct vfs_dentry **out)
{
	(void)pid, (void)out;
	return -ENOENT;
}

static struct vfs_dentry *fake_reader_root(void)
{
	return root;
}

static uint64_t fake_boot_time_s(void)
{
	return 1700000000;
}

static uint64_t fake_uptime_ns(void)
{
	return 12340000000ULL;
}

static uint64_t fake_idle_ns(void)
{
	return 40000000000ULL;
}

static int fake_cpus(void)
{
	return 4;
}

static uint64_t fake_mem_total(void)
{
	return 8ULL << 30;
}

static uint64_t fake_mem_used(void)
{
	return 1ULL << 30;
}

static unsigned long fake_nr_running(void)
{
	return 1;
}

static unsigned long fake_nr_threads(void)
{
	return 4;
}

static pid_t fake_last_pid(void)
{
	return 100;
}

static uint64_t fake_forks(void)
{
	return 120;
}

static char fake_host[65] = "sandbox", fake_domain[65] = "(none)";

static const char *fake_hostname(void)
{
	return fake_host;
}

static const char *fake_domainname(void)
{
	return fake_domain;
}

static void fake_set_uts_name(bool domain, const char *name, size_t len)
{
	char *to = domain ? fake_domain : fake_host;

	memcpy(to, name, len);
	to[len] = '\0';
}

static const struct procinfo_ops fake_ops = {
    .pids = fake_pids,
    .tids = fake_tids,
    .self_pid = fake_self_pid,
    .self_tid = fake_self_tid,
    .task = fake_task,
    .cmdline = fake_cmdline,
    .environ = fake_environ,
    .vmas = fake_vmas,
    .fds = fake_fds,
    .fd_file = fake_fd_file,
    .cwd = fake_root,
    .root = fake_root,
    .exe = fake_exe,
    .reader_root = fake_reader_root,
    .boot_time_s = fake_boot_time_s,
    .uptime_ns = fake_uptime_ns,
    .idle_ns = fake_idle_ns,
    .cpus = fake_cpus,
    .mem_total = fake_mem_total,
    .mem_used = fake_mem_used,
    .nr_running = fake_nr_running,
    .nr_threads = fake_nr_threads,
    .last_pid = fake_last_pid,
    .forks = fake_forks,
    .hostname = fake_hostname,
    .domainname = fake_domainname,
    .set_uts_name = fake_set_uts_name,
};

static void mount_procfs(bool eager)
{
	assert_int_equal(procfs_new(&fake_ops, eager, &root), 0);
	fs.root = root;
	fs.cwd = root;
}

static int setup(void **state)
{
	(void)state;
	npids = 3;
	vanishing = 0;
	mount_procfs(false);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vfs_dentry_put(root);
	root = NULL;
	return 0;
}

static char *read_or_fail(const char *path, size_t *len)
{
	int err = 0;
	char *got = walk_read(&fs, path, len, &err);

	if (!got)
		fail_msg("%s: error %d", path, err);
	return got;
}

static void assert_file(const char *path, const char *want)
{
	char *got = read_or_fail(path, NULL);

	if (strcmp(got, want) != 0)
		print_message("%s:\n%s", path, got);
	assert_string_equal(got, want);
	free(got);
}

static void test_pid_stat_has_linux_field_order_and_units(void **state)
{
	char *got;
	int fields = 0;

	(void)state;
	assert_file("/42/stat",
		    "42 (sleep) S 1 42 1 0 -1 4194304 5 0 1 0 25 10 0 0 20 0 2 0 6300 8388608 300 "
		    "18446744073709551615 4194304 4259840 140737488216064 0 0 0 2 0 65536 0 0 0 17 "
		    "0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
	/* A thread's stat names the thread. */
	got = read_or_fail("/42/task/43/stat", NULL);
	assert_memory_equal(got, "43 (sleep) S", 12);
	for (char *p = strtok(got, " \n"); p; p = strtok(NULL, " \n"))
		fields++;
	assert_int_equal(fields, 52);
	free(got);
}

static void test_pid_statm_is_pages_in_linux_order(void **state)
{
	(void)state;
	assert_file("/42/statm", "2048 300 200 16 0 289 0\n");
}

static void test_pid_status_has_linux_fields_and_spacing(void **state)
{
	(void)state;
	assert_file(
	    "/100/status",
	    "Name:\tcat\n"
	    "Umask:\t0022\n"
	    "State:\tR (running)\n"
	    "Tgid:\t100\n"
	    "Ngid:\t0\n"
	    "Pid:\t100\n"
	    "PPid:\t1\n"
	    "TracerPid:\t0\n"
	    "Uid:\t1000\t1000\t1000\t1000\n"
	    "Gid:\t1000\t1000\t1000\t1000\n"
	    "FDSize:\t64\n"
	    "Groups:\t1000 10 \n"
	    "NStgid:\t100\n"
	    "NSpid:\t100\n"
	    "NSpgid:\t100\n"
	    "NSsid:\t1\n"
	    "Kthread:\t0\n"
	    "VmPeak:\t    9216 kB\n"
	    "VmSize:\t    8192 kB\n"
	    "VmLck:\t       0 kB\n"
	    "VmPin:\t       0 kB\n"
	    "VmHWM:\t    1400 kB\n"
	    "VmRSS:\t    1200 kB\n"
	    "RssAnon:\t     400 kB\n"
	    "RssFile:\t     800 kB\n"
	    "RssShmem:\t       0 kB\n"
	    "VmData:\t    1024 kB\n"
	    "VmStk:\t     132 kB\n"
	    "VmExe:\t      64 kB\n"
	    "VmLib:\t    2048 kB\n"
	    "VmPTE:\t      16 kB\n"
	    "VmSwap:\t       0 kB\n"
	    "HugetlbPages:\t       0 kB\n"
	    "CoreDumping:\t0\n"
	    "THP_enabled:\t1\n"
	    "untag_mask:\t0xffffffffffffffff\n"
	    "Threads:\t1\n"
	    "SigQ:\t0/63429\n"
	    "SigPnd:\t0000000000000000\n"
	    "ShdPnd:\t0000000000000000\n"
	    "SigBlk:\t0000000000000002\n"
	    "SigIgn:\t0000000000000000\n"
	    "SigCgt:\t0000010000010000\n"
	    "CapInh:\t0000000000000000\n"
	    "CapPrm:\t0000000000000000\n"
	    "CapEff:\t0000000000000000\n"
	    "CapBnd:\t000001ffffffffff\n"
	    "CapAmb:\t0000000000000000\n"
	    "NoNewPrivs:\t0\n"
	    "Seccomp:\t0\n"
	    "Seccomp_filters:\t0\n"
	    "Speculation_Store_Bypass:\tthread vulnerable\n"
	    "SpeculationIndirectBranch:\tconditional enabled\n"
	    "Cpus_allowed:\tf\n"
	    "Cpus_allowed_list:\t0-3\n"
	    "Mems_allowed:\t00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
	    "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
	    "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
	    "00000000,00000000,00000000,00000000,00000000,00000000,00000001\n"
	    "Mems_allowed_list:\t0\n"
	    "voluntary_ctxt_switches:\t7\n"
	    "nonvoluntary_ctxt_switches:\t0\n");
}

static void test_pid_maps_pads_names_to_column_73(void **state)
{
	(void)state;
	assert_file("/42/maps",
		    "00400000-00410000 r-xp 00000000 00:21 1234                               "
		    "/bin/sleep\n"
		    "00410000-00412000 rw-p 00010000 00:21 1234                               "
		    "/bin/sleep\n"
		    "00412000-00433000 rw-p 00000000 00:00 0                                  "
		    "[heap]\n"
		    "7f0000000000-7f0000001000 r--s 00000000 00:00 0 \n"
		    "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          "
		    "[stack]\n");
}

static void test_pid_small_files_match_linux(void **state)
{
	char *got;
	size_t len;

	(void)state;
	assert_file("/42/io", "rchar: 1042\nwchar: 2000\nsyscr: 30\nsyscw: 40\nread_bytes: 0\n"
			      "write_bytes: 0\ncancelled_write_bytes: 0\n");
	assert_file("/42/schedstat", "350000000 1234 7\n");
	assert_file("/42/cpuset", "/\n");
	assert_file("/42/cgroup", "0::/\n");
	assert_file("/42/oom_score_adj", "0\n");
	assert_file("/42/comm", "sleep\n");
	got = read_or_fail("/42/cmdline", &len);
	assert_int_equal(len, 11);
	assert_memory_equal(got,
			    "sleep\0"
			    "1000",
			    11);
	free(got);
	got = read_or_fail("/42/limits", NULL);
	assert_non_null(strstr(got, "Limit                     Soft Limit           Hard Limit   "
				    "        Units     \n"));
	assert_non_null(strstr(got, "Max open files            1024                 4096        "
				    "         files     \n"));
	assert_non_null(strstr(got, "Max nice priority         unlimited            unlimited   "
				    "         \n"));
	free(got);
	got = read_or_fail("/42/smaps_rollup", NULL);
	assert_memory_equal(got, "00400000-7ffffffff000 ---p 00000000 00:00 0", 43);
	assert_non_null(strstr(got, "[rollup]\nRss:                 200 kB\n"));
	/* Anonymous: the heap, the stack and the written data segment; file: the text. */
	assert_non_null(strstr(got, "Pss_Anon:            132 kB\nPss_File:             64 kB\n"
				    "Pss_Shmem:             4 kB\n"));
	assert_non_null(strstr(got, "Private_Hugetlb:       0 kB\n"));
	free(got);
	got = read_or_fail("/42/smaps", NULL);
	assert_non_null(strstr(got,
			       "/bin/sleep\nSize:                 64 kB\nKernelPageSize:  "
			       "      4 kB\nMMUPageSize:           4 kB\nRss:                  "
			       "64 kB\n"));
	assert_non_null(strstr(got, "VmFlags: rd ex mr mw me \n"));
	assert_non_null(strstr(got, "VmFlags: rd wr mr mw me gd ac \n"));
	free(got);
	got = read_or_fail("/42/mounts", NULL);
	assert_string_equal(got, "overlay / overlay rw,relatime 0 0\n");
	free(got);
}

static void test_pid_directories_appear_and_vanish_with_processes(void **state)
{
	struct vfs_dentry *d;
	struct stat st;
	char *names;

	(void)state;
	names = walk_list(&fs, "/");
	assert_non_null(strstr(names, "sys\nsysvipc\nthread-self\nuptime\nversion\n1\n42\n100\n"));
	free(names);
	assert_int_equal(vfs_lookup(&fs, NULL, "/100", 0, &d), 0);
	assert_int_equal(vfs_stat(d, &st), 0);
	assert_int_equal(st.st_uid, 1000);
	assert_true(S_ISDIR(st.st_mode));
	vfs_dentry_put(d);
	assert_int_equal(vfs_lookup(&fs, NULL, "/7", 0, &d), -ENOENT);
	assert_int_equal(vfs_lookup(&fs, NULL, "/042", 0, &d), -ENOENT);
	names = walk_list(&fs, "/42/task");
	assert_string_equal(names, "42\n43\n");
	free(names);
	assert_int_equal(vfs_lookup(&fs, NULL, "/42/task", 0, &d), 0);
	assert_int_equal(vfs_stat(d, &st), 0);
	assert_int_equal(st.st_nlink, 4);
	vfs_dentry_put(d);
}

static void test_self_and_thread_self_are_computed_on_read(void **state)
{
	struct vfs_dentry *d;
	char buf[64];
	ssize_t n;

	(void)state;
	assert_int_equal(vfs_lookup(&fs, NULL, "/self", 0, &d), 0);
	n = vfs_readlink(d, buf, sizeof(buf));
	assert_int_equal(n, 2);
	assert_memory_equal(buf, "42", 2);
	vfs_dentry_put(d);
	assert_int_equal(vfs_lookup(&fs, NULL, "/thread-self", 0, &d), 0);
	n = vfs_readlink(d, buf, sizeof(buf));
	assert_int_equal(n, 10);
	assert_memory_equal(buf, "42/task/43", 10);
	vfs_dentry_put(d);
	assert_file("/self/comm", "sleep\n");
	{
		char *want = read_or_fail("/42/task/43/stat", NULL);

		assert_file("/thread-self/stat", want);
		free(want);
	}
}

/* Concatenates /proc/PID/FILE for every pid, with PREFIX ("PID ") and SUFFIX. */
static char *concat_per_pid(const char *file, bool prefix, const char *suffix, size_t *len)
{
	struct walk_out o = {0};

	for (int i = 0; i < npids; i++) {
		char path[64];
		size_t n;
		char *c;

		snprintf(path, sizeof(path), "/%d/%s", pid_list[i], file);
		c = read_or_fail(path, &n);
		if (prefix) {
			snprintf(path, sizeof(path), "%d ", pid_list[i]);
			walk_append(&o, path, strlen(path));
		}
		walk_append(&o, c, n);
		walk_append(&o, suffix, strlen(suffix));
		free(c);
	}
	*len = o.len;
	return o.data;
}

/* /proc/PID/io's seven "name: N" lines as the RFC's one line of numbers. */
static void io_as_line(const char *io, char *out, size_t size)
{
	unsigned long long v[7];

	assert_int_equal(sscanf(io,
				"rchar: %llu wchar: %llu syscr: %llu syscw: %llu read_bytes: %llu "
				"write_bytes: %llu cancelled_write_bytes: %llu",
				&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]),
			 7);
	snprintf(out, size, "%llu %llu %llu %llu %llu %llu %llu\n", v[0], v[1], v[2], v[3], v[4],
		 v[5], v[6]);
}

/* The RFC's /proc/all/io and /proc/all/statx records, made from the per-pid files. */
static char *concat_io_records(bool statx, size_t *len)
{
	struct walk_out o = {0};

	for (int i = 0; i < npids; i++) {
		char path[64], line[256];
		char *io, *stat, *statm;

		snprintf(path, sizeof(path), "/%d/io", pid_list[i]);
		io = read_or_fail(path, NULL);
		io_as_line(io, line, sizeof(line));
		if (statx) {
			snprintf(path, sizeof(path), "/%d/stat", pid_list[i]);
			stat = read_or_fail(path, NULL);
			snprintf(path, sizeof(path), "/%d/statm", pid_list[i]);
			statm = read_or_fail(path, NULL);
			walk_append(&o, stat, strlen(stat));
			walk_append(&o, "m ", 2);
			walk_append(&o, statm, strlen(statm));
			walk_append(&o, "io ", 3);
			free(stat);
			free(statm);
		} else {
			snprintf(path, sizeof(path), "%d ", pid_list[i]);
			walk_append(&o, path, strlen(path));
		}
		walk_append(&o, line, strlen(line));
		free(io);
	}
	*len = o.len;
	return o.data;
}

static void assert_all_equals(const char *file, char *want, size_t want_len)
{
	char path[64];
	size_t got_len;
	char *got;

	snprintf(path, sizeof(path), "/all/%s", file);
	got = read_or_fail(path, &got_len);
	assert_int_equal(got_len, want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	free(want);
}

static void assert_all_file(const char *file, bool prefix, const char *suffix)
{
	char path[64];
	size_t want_len, got_len;
	char *want = concat_per_pid(file, prefix, suffix, &want_len), *got;

	snprintf(path, sizeof(path), "/all/%s", file);
	got = read_or_fail(path, &got_len);
	assert_int_equal(got_len, want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	free(want);
}

static void test_proc_all_files_concatenate_the_per_pid_files(void **state)
{
	(void)state;
	assert_all_file("stat", false, "");
	assert_all_file("statm", true, "");
	assert_all_file("status", false, "");
	size_t len;
	char *want = concat_io_records(false, &len);
	assert_all_equals("io", want, len);
	want = concat_io_records(true, &len);
	assert_all_equals("statx", want, len);
	assert_all_file("schedstat", true, "");
	assert_all_file("cpuset", true, "");
	assert_all_file("cmdline", true, "\n");
}

static void test_proc_all_leaves_out_a_process_gone_before_its_snapshot(void **state)
{
	size_t want_len, got_len;
	char *want, *got;

	(void)state;
	vanishing = 77;
	want = concat_per_pid("statm", true, "", &want_len);
	got = read_or_fail("/all/statm", &got_len);
	assert_int_equal(got_len, want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	free(want);
	got = read_or_fail("/all/cmdline", &got_len);
	assert_null(strstr(got, "77 "));
	free(got);
}

static void test_a_rewound_read_takes_a_new_snapshot(void **state)
{
	struct vfs_file *f;
	char buf[4096];
	struct iovec iov = {buf, sizeof(buf)};
	ssize_t n1, n2;

	(void)state;
	assert_int_equal(vfs_open(&fs, NULL, "/all/stat", O_RDONLY, 0, &f), 0);
	npids = 2; /* 100 exits after the open */
	n1 = f->ops->read(f, &iov, 1, &f->pos);
	assert_true(n1 > 0);
	assert_non_null(memmem(buf, (size_t)n1, "100 (cat)", 9));
	assert_int_equal(vfs_lseek(f, 0, SEEK_SET), 0);
	n2 = f->ops->read(f, &iov, 1, &f->pos);
	assert_true(n2 > 0 && n2 < n1);
	assert_null(memmem(buf, (size_t)n2, "100 (cat)", 9));
	assert_int_equal(vfs_lseek(f, 0, SEEK_END), -EINVAL);
	vfs_file_put(f);
}

static void test_system_files_follow_linux_formats(void **state)
{
	char *got;

	(void)state;
	assert_file("/uptime", "12.34 40.00\n");
	assert_file("/loadavg", "0.00 0.00 0.00 1/4 100\n");
	got = read_or_fail("/stat", NULL);
	assert_memory_equal(got, "cpu  936 0 0 4000 0 0 0 0 0 0\ncpu0 234 0 0 1000 0 0 0 0 0 0\n",
			    60);
	assert_non_null(strstr(got, "\nbtime 1700000000\nprocesses 120\nprocs_running 1\n"));
	free(got);
	got = read_or_fail("/meminfo", NULL);
	assert_memory_equal(got, "MemTotal:        8388608 kB\nMemFree:         7340032 kB\n", 56);
	assert_non_null(strstr(got, "\nHugePages_Total:       0\n"));
	free(got);
	got = read_or_fail("/cpuinfo", NULL);
	{
		int n = 0;

		for (char *p = got; (p = strstr(p, "processor\t: ")); p++)
			n++;
		assert_int_equal(n, 4);
	}
	assert_non_null(strstr(got, "processor\t: 3\n"));
	assert_non_null(strstr(got, "siblings\t: 4\ncore id\t\t: 3\ncpu cores\t: 4\n"));
	free(got);
	assert_file("/mounts", "overlay / overlay rw,relatime 0 0\n");
	assert_file("/sys/kernel/hostname", "sandbox\n");
	assert_file("/sys/kernel/ostype", "Linux\n");
	assert_file("/sys/kernel/printk", "4\t4\t1\t7\n");
	assert_file("/sys/vm/overcommit_memory", "0\n");
	assert_file("/sys/net/core/somaxconn", "4096\n");
}

static ssize_t write_to(const char *path, const char *data)
{
	struct vfs_file *f;
	struct iovec iov = {(void *)data, strlen(data)};
	ssize_t n;
	int err = vfs_open(&fs, NULL, path, O_WRONLY | O_TRUNC, 0, &f);

	if (err)
		return err;
	n = f->ops->write(f, &iov, 1, &f->pos);
	vfs_file_put(f);
	return n;
}

static void test_sysctl_writes_are_kept_and_read_only_ones_refused(void **state)
{
	struct vfs_file *f;

	(void)state;
	assert_int_equal(write_to("/sys/vm/swappiness", "10\n"), 3);
	assert_file("/sys/vm/swappiness", "10\n");
	assert_int_equal(write_to("/sys/vm/swappiness", "ten\n"), -EINVAL);
	assert_file("/sys/vm/swappiness", "10\n");
	assert_int_equal(write_to("/sys/net/ipv4/ip_local_port_range", "1024 65000\n"), 11);
	assert_file("/sys/net/ipv4/ip_local_port_range", "1024\t65000\n");
	assert_int_equal(write_to("/sys/kernel/hostname", "box\n"), 4);
	assert_file("/sys/kernel/hostname", "box\n");
	assert_string_equal(fake_host, "box"); /* the kernel's (uname's) name */
	assert_file("/sys/kernel/domainname", "(none)\n");
	assert_int_equal(write_to("/sys/kernel/domainname", "lan\n"), 4);
	assert_string_equal(fake_domain, "lan");
	assert_file("/sys/kernel/domainname", "lan\n");
	assert_int_equal(write_to("/sys/kernel/osrelease", "7.0\n"), -EACCES);
	assert_int_equal(vfs_open(&fs, NULL, "/sys/vm/drop_caches", O_RDONLY, 0, &f), -EACCES);
	assert_int_equal(write_to("/sys/vm/drop_caches", "3\n"), 2);
	assert_int_equal(write_to("/cpuinfo", "x"), -EIO);
	assert_int_equal(write_to("/42/stat", "x"), -EINVAL);
	assert_int_equal(vfs_mkdir(&fs, NULL, NULL, "/sys/new", 0755), -EPERM);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/sys/vm"), -EPERM);
	assert_int_equal(vfs_rmdir(&fs, NULL, NULL, "/42"), -EPERM);
	assert_int_equal(vfs_unlink(&fs, NULL, NULL, "/sys/vm/swappiness"), -EPERM);

	/* The values are the sandbox's, and a checkpoint carries them and the boot id. */
	struct enc saved, empty;
	struct dec d;
	char *boot = read_or_fail("/sys/kernel/random/boot_id", NULL);
	enc_init(&saved, NULL);
	assert_int_equal(procfs_state_save(&saved), 0);
	enc_init(&empty, NULL);
	enc_str(&empty, "01234567-89ab-4def-8123-456789abcdef");
	enc_u64(&empty, 0);
	dec_init(&d, empty.buf, empty.len, NULL);
	assert_int_equal(procfs_state_load(&d), 0);
	assert_file("/sys/vm/swappiness", "60\n");
	assert_file("/sys/kernel/random/boot_id", "01234567-89ab-4def-8123-456789abcdef\n");
	dec_free(&d);
	dec_init(&d, saved.buf, saved.len, NULL);
	assert_int_equal(procfs_state_load(&d), 0);
	assert_file("/sys/vm/swappiness", "10\n");
	assert_file("/sys/kernel/hostname", "box\n");
	assert_file("/sys/kernel/random/boot_id", boot);
	dec_free(&d);
	/* Back to the defaults for the tests after this one. */
	dec_init(&d, empty.buf, empty.len, NULL);
	assert_int_equal(procfs_state_load(&d), 0);
	dec_free(&d);
	enc_free(&saved);
	enc_free(&empty);
	free(boot);
	strcpy(fake_host, "sandbox");
	strcpy(fake_domain, "(none)");
}

static void test_proc_sys_is_lazy_and_identical_to_eager(void **state)
{
	static const char *const skip[] = {"/sys/kernel/random/uuid", "/sys/kernel/random/boot_id",
					   NULL};
	struct walk_out lazy = {0}, eager = {0};
	struct kernfs_stats ls, es, after;
	struct vfs_dentry *d;
	struct stat st;
	int entries = 0;

	(void)state;
	assert_int_equal(kernfs_stats(root, &ls), 0);
	assert_true(ls.inodes < 20);
	assert_int_equal(vfs_lookup(&fs, NULL, "/sys/kernel", 0, &d), 0);
	assert_int_equal(vfs_stat(d, &st), 0);
	assert_int_equal(st.st_nlink, 1);
	assert_false(kernfs_dir_populated(d));
	vfs_dentry_put(d);
	assert_file("/sys/vm/swappiness", "60\n");
	assert_int_equal(kernfs_stats(root, &after), 0);
	/* kernel and vm, and swappiness: vm's other rows stay unbuilt. */
	assert_int_equal(after.inodes, ls.inodes + 3);

	walk_tree(&fs, "/sys", skip, &lazy);
	vfs_dentry_put(root);
	mount_procfs(true);
	assert_int_equal(kernfs_stats(root, &es), 0);
	walk_tree(&fs, "/sys", skip, &eager);
	assert_string_equal(lazy.data, eager.data);
	for (char *p = lazy.data; (p = strstr(p, "\n/sys/")); p++)
		entries++;
	assert_true(entries >= 100);
	assert_true(es.inodes > ls.inodes + 100);
	free(lazy.data);
	free(eager.data);
}

/* Eviction frees what a walk left behind and nothing held; a held file keeps its path; the
 * tree read again afterwards is the same, inode numbers included. */
static void test_evict_frees_unheld_nodes_and_the_tree_comes_back_the_same(void **state)
{
	static const char *const skip[] = {"/sys/kernel/random/uuid", "/sys/kernel/random/boot_id",
					   NULL};
	struct walk_out before = {0}, after = {0};
	struct kernfs_stats fresh, walked, evicted;
	struct vfs_dentry *held;

	(void)state;
	assert_int_equal(kernfs_stats(root, &fresh), 0);
	assert_int_equal(vfs_lookup(&fs, NULL, "/sys/vm/swappiness", 0, &held), 0);
	walk_tree(&fs, "/sys", skip, &before);
	assert_int_equal(kernfs_stats(root, &walked), 0);
	assert_true(walked.inodes > fresh.inodes + 100);

	unsigned long gone = kernfs_evict(root);
	assert_int_equal(kernfs_stats(root, &evicted), 0);
	assert_int_equal(evicted.inodes, walked.inodes - gone);
	/* Left: what was there before the walk, plus sys and vm above the held swappiness. */
	assert_true(evicted.inodes <= fresh.inodes + 3);
	assert_int_equal(kernfs_evict(root), 0);
	assert_file("/sys/vm/swappiness", "60\n");

	walk_tree(&fs, "/sys", skip, &after);
	assert_string_equal(before.data, after.data);
	vfs_dentry_put(held);
	free(before.data);
	free(after.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_pid_stat_has_linux_field_order_and_units, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_pid_statm_is_pages_in_linux_order, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_pid_status_has_linux_fields_and_spacing, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_pid_maps_pads_names_to_column_73, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pid_small_files_match_linux, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pid_directories_appear_and_vanish_with_processes,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_self_and_thread_self_are_computed_on_read, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_proc_all_files_concatenate_the_per_pid_files,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_proc_all_leaves_out_a_process_gone_before_its_snapshot, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_a_rewound_read_takes_a_new_snapshot, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_system_files_follow_linux_formats, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_sysctl_writes_are_kept_and_read_only_ones_refused,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_proc_sys_is_lazy_and_identical_to_eager, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(
		test_evict_frees_unheld_nodes_and_the_tree_comes_back_the_same, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
