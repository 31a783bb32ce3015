/*
 * t_proc_access: /proc's ptrace-access rules for a reader that is neither the process nor
 * root. /proc/PID/io refuses it; /proc/PID/stat shows it the process's code bounds as 1, its
 * stack, data and argument bounds and exit code as 0; and in the sandbox /proc/all applies the
 * same rules record by record (the /proc/all RFC): no io record of a process the reader may
 * not read, and the same hidden fields in stat. Needs root to drop to another uid.
 * conformance: native-proc
 */
#include "check.h"
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define OTHER_ID 4242

/* Field N (1-based, as in proc(5)) of a /proc/PID/stat line. */
static unsigned long long stat_field(const char *line, int n)
{
	const char *p = strrchr(line, ')');
	if (!p)
		return ~0ULL;
	p += 2; /* field 3 starts here */
	for (int i = 3; i < n; i++) {
		p = strchr(p, ' ');
		if (!p)
			return ~0ULL;
		p++;
	}
	if (*p < '0' || *p > '9')
		return ~0ULL; /* field 3 is the state letter */
	return strtoull(p, NULL, 10);
}

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY), n = 0, r;
	if (fd < 0)
		return -errno;
	while ((size_t)n < size - 1 && (r = (int)read(fd, buf + n, size - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	close(fd);
	return n;
}

/* The line of BUF (a /proc/all file) that starts with "PID " or "PID (", copied into LINE;
 * or NULL. */
static const char *record_of(const char *buf, pid_t pid, char *line, size_t size)
{
	char key[32];
	int len = snprintf(key, sizeof(key), "%d ", (int)pid);
	for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, (size_t)len))
			continue;
		size_t n = strcspn(l, "\n");
		n = n < size - 1 ? n : size - 1;
		memcpy(line, l, n);
		line[n] = 0;
		return line;
	}
	return NULL;
}

static void as_other_user(pid_t root_pid)
{
	static char buf[1 << 16];
	char path[64], l1[1024], l2[1024];

	CHECK_EQ(setgid(OTHER_ID), 0);
	CHECK_EQ(setuid(OTHER_ID), 0);
	/* Natively a setuid makes the process undumpable, which would hide its own /proc files
	 * from it; the sandbox has no dumpable flag to clear. */
	prctl(PR_SET_DUMPABLE, 1);

	/* Another user's process: io is refused, stat hides the addresses. */
	snprintf(path, sizeof(path), "/proc/%d/io", (int)root_pid);
	CHECK_EQ(read_file(path, buf, sizeof(buf)), -EACCES);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)root_pid);
	CHECK(read_file(path, buf, sizeof(buf)) > 0);
	CHECK_EQ(stat_field(buf, 26), 1); /* startcode */
	CHECK_EQ(stat_field(buf, 27), 1); /* endcode */
	CHECK_EQ(stat_field(buf, 28), 0); /* startstack */
	for (int f = 45; f <= 52; f++)	  /* start_data .. exit_code */
		CHECK_EQ(stat_field(buf, f), 0);

	/* Its own: all there. */
	CHECK(read_file("/proc/self/io", buf, sizeof(buf)) > 0);
	CHECK(read_file("/proc/self/stat", buf, sizeof(buf)) > 0);
	CHECK(stat_field(buf, 26) > 1);
	CHECK(stat_field(buf, 28) > 0);
	CHECK(stat_field(buf, 48) > 0); /* arg_start */

	if (!in_sandbox())
		return;
	/* /proc/all: the same rules, record by record. */
	CHECK(read_file("/proc/all/io", buf, sizeof(buf)) > 0);
	CHECK(record_of(buf, getpid(), l1, sizeof(l1)) != NULL);
	CHECK(record_of(buf, root_pid, l2, sizeof(l2)) == NULL);
	CHECK(read_file("/proc/all/stat", buf, sizeof(buf)) > 0);
	const char *mine = record_of(buf, getpid(), l1, sizeof(l1));
	const char *theirs = record_of(buf, root_pid, l2, sizeof(l2));
	CHECK(mine && theirs);
	if (mine && theirs) {
		CHECK(stat_field(mine, 26) > 1);
		CHECK_EQ(stat_field(theirs, 26), 1);
		CHECK_EQ(stat_field(theirs, 48), 0);
	}
}

int main(void)
{
	int status;

	if (geteuid() != 0) {
		CHECK(!in_sandbox()); /* the sandbox's init is root */
		dprintf(1, "skip t_proc_access: needs root\n");
		return check_done();
	}
	maybe_save();
	pid_t root_pid = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		as_other_user(root_pid);
		_exit(check_failures ? 1 : 0);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return check_done();
}
