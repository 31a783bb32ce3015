/* t_proc_formats: the layout of /proc files a process reads about itself, as Linux prints
 * them (values come from the kernel that runs us): stat has 52 fields with comm in
 * parentheses, statm 7 numbers, status the usual "Key:\tvalue" lines in Linux's order, maps
 * "start-end perms offset dev inode path" with our own executable mapped; /proc/self and
 * /proc/thread-self point at us. In the sandbox, /proc/all (minisentry's; Linux has none) must
 * exist, and each of its files equals the per-pid files read one after the other while nothing
 * changes.
 * conformance: native-proc */
#include "check.h"

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

static ssize_t slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t got = 0, n;

	if (fd < 0)
		return -1;
	while (got < (ssize_t)size - 1 && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return got;
}

static void test_stat(void)
{
	char buf[4096], *p;
	int fields = 0;

	CHECK(slurp("/proc/self/stat", buf, sizeof(buf)) > 0);
	CHECK_EQ(atoi(buf), getpid());
	CHECK(strchr(buf, '(') != NULL);
	p = strrchr(buf, ')');
	CHECK(p != NULL);
	if (!p)
		return;
	/* After "pid (comm)": 50 more fields, the state first. */
	CHECK(p[1] == ' ' && strchr("RSDTtZ", p[2]) != NULL);
	for (char *q = p + 1; *q; q++)
		fields += *q == ' ';
	CHECK_EQ(fields, 50);
	CHECK(buf[strlen(buf) - 1] == '\n');
}

static void test_statm_and_status(void)
{
	char buf[8192];
	unsigned long v[7];

	CHECK(slurp("/proc/self/statm", buf, sizeof(buf)) > 0);
	CHECK_EQ(sscanf(buf, "%lu %lu %lu %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3], &v[4],
			&v[5], &v[6]),
		 7);
	CHECK(v[0] >= v[1]); /* size >= resident */
	CHECK(slurp("/proc/self/status", buf, sizeof(buf)) > 0);
	const char *order[] = {"Name:\t",
			       "Umask:\t",
			       "State:\t",
			       "Tgid:\t",
			       "Ngid:\t",
			       "Pid:\t",
			       "PPid:\t",
			       "TracerPid:\t",
			       "Uid:\t",
			       "Gid:\t",
			       "FDSize:\t",
			       "Groups:\t",
			       "VmPeak:\t",
			       "VmSize:\t",
			       "VmRSS:\t",
			       "Threads:\t",
			       "SigQ:\t",
			       "SigPnd:\t",
			       "ShdPnd:\t",
			       "SigBlk:\t",
			       "SigIgn:\t",
			       "SigCgt:\t",
			       "CapInh:\t",
			       "Cpus_allowed:\t",
			       "Cpus_allowed_list:\t",
			       "voluntary_ctxt_switches:\t"};
	const char *at = buf;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *hit = strstr(at, order[i]);
		if (!hit)
			CHECK_FAIL_("status has no '%s' after the previous key", order[i]);
		else
			at = hit;
	}
	char want[32];
	snprintf(want, sizeof(want), "\nPid:\t%d\n", getpid());
	CHECK(strstr(buf, want) != NULL);
}

static void test_maps_and_links(void)
{
	char buf[65536], self[64], link[64];

	CHECK(slurp("/proc/self/maps", buf, sizeof(buf)) > 0);
	unsigned long lo, hi, off, ino;
	char perms[8], dev[16];
	CHECK_EQ(sscanf(buf, "%lx-%lx %7s %lx %15s %lu", &lo, &hi, perms, &off, dev, &ino), 6);
	CHECK(lo < hi);
	CHECK_EQ(strlen(perms), 4);
	CHECK(strstr(buf, "/opt/conformance/t_proc_formats") != NULL);
	CHECK(strstr(buf, "[stack]") != NULL);
	snprintf(self, sizeof(self), "%d", getpid());
	ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = 0;
		CHECK_STREQ(link, self);
	}
	n = readlink("/proc/self/exe", buf, 256);
	CHECK(n > 0);
	if (n > 0) {
		buf[n] = 0;
		CHECK(strstr(buf, "t_proc_formats") != NULL);
	}
}

/* /proc/PID/io's seven "name: N" lines as the RFC's one line of numbers; false if malformed. */
static bool io_line(const char *io, char *out, size_t size)
{
	unsigned long long v[7];

	if (sscanf(io,
		   "rchar: %llu wchar: %llu syscr: %llu syscw: %llu read_bytes: %llu "
		   "write_bytes: %llu cancelled_write_bytes: %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
		return false;
	snprintf(out, size, "%llu %llu %llu %llu %llu %llu %llu\n", v[0], v[1], v[2], v[3], v[4],
		 v[5], v[6]);
	return true;
}

/* What the RFC's /proc/all/FILE holds for process PID, made from its /proc/PID files. */
static size_t expected_record(const char *file, pid_t pid, char *out, size_t size)
{
	static char one[1 << 16], stat[4096], statm[256];
	char pp[64], io[256];

	if (!strcmp(file, "io") || !strcmp(file, "statx")) {
		snprintf(pp, sizeof(pp), "/proc/%d/io", pid);
		CHECK(slurp(pp, one, sizeof(one)) > 0);
		CHECK(io_line(one, io, sizeof(io)));
		if (!strcmp(file, "io"))
			return snprintf(out, size, "%d %s", pid, io);
		snprintf(pp, sizeof(pp), "/proc/%d/stat", pid);
		CHECK(slurp(pp, stat, sizeof(stat)) > 0);
		snprintf(pp, sizeof(pp), "/proc/%d/statm", pid);
		CHECK(slurp(pp, statm, sizeof(statm)) > 0);
		return snprintf(out, size, "%sm %sio %s", stat, statm, io);
	}
	snprintf(pp, sizeof(pp), "/proc/%d/%s", pid, file);
	CHECK(slurp(pp, one, sizeof(one)) > 0);
	if (!strcmp(file, "stat") || !strcmp(file, "status"))
		return snprintf(out, size, "%s", one);
	return snprintf(out, size, "%d %s", pid, one);
}

/* /proc/all/FILE against /proc/PID/FILE of the same processes, children stopped. */
static void test_proc_all(void)
{
	static char all[1 << 16], cat[1 << 16];
	const char *files[] = {"stat", "statm", "status", "io", "statx", "schedstat", "cpuset"};
	pid_t kids[3];

	if (!in_sandbox()) {
		CHECK_ERR(access("/proc/all", F_OK), ENOENT); /* Linux has no /proc/all */
		return;
	}
	CHECK_EQ(access("/proc/all", F_OK), 0);
	for (int i = 0; i < 3; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			for (;;)
				pause();
		}
		kill(kids[i], SIGSTOP);
	}
	for (int i = 0; i < 3; i++) {
		int st;
		waitpid(kids[i], &st, WUNTRACED);
	}
	maybe_save(); /* stopped children, each with its /proc files */
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/all/%s", files[f]);
		CHECK(slurp(path, all, sizeof(all)) > 0);
		/* The reader is in /proc/all too; its own stat/status change while reading, so
		 * compare the records of the stopped children, which do not. */
		size_t len = 0;
		cat[0] = 0;
		for (int i = 0; i < 3; i++)
			len += expected_record(files[f], kids[i], cat + len, sizeof(cat) - len);
		if (!strstr(all, cat))
			CHECK_FAIL_("/proc/all/%s does not hold the children's records in order",
				    files[f]);
	}
	for (int i = 0; i < 3; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
}

int main(void)
{
	test_stat();
	test_statm_and_status();
	test_maps_and_links();
	test_proc_all();
	return check_done();
}
