/* t_proc_all_churn: /proc/all stays whole while processes come and go. A child forks and
 * reaps short-lived processes as fast as it can while we read /proc/all/stat and
 * /proc/all/status over and over in 61-byte pieces: every read succeeds, every record is
 * complete (a stat line "PID (comm) S ..." ending in a newline; a status block from "Name:" to
 * its empty line, whose "Pid:" is its pid), and the pids rise strictly (none repeated).
 * /proc/all is minisentry's: in the sandbox it must exist; Linux has none, so natively the
 * test only checks that it is absent.
 * conformance: native-proc */
#include "check.h"

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>

#define ROUNDS 40
#define PIECE 61
#define DEADLINE_S 5

static char buf[1 << 18];

/* The whole file, read in PIECE-byte reads; its length, or -1 with errno. */
static ssize_t read_in_pieces(const char *path)
{
	int fd = open(path, O_RDONLY);
	size_t len = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	while (len + PIECE < sizeof(buf) && (n = read(fd, buf + len, PIECE)) > 0)
		len += (size_t)n;
	int saved = errno;
	close(fd);
	errno = saved;
	if (n < 0)
		return -1;
	buf[len] = '\0';
	return (ssize_t)len;
}

/* The highest pid the last stat_records_whole saw. */
static long stat_max_pid;

/* Records of /proc/all/stat: lines "PID (comm) STATE ...", pids rising. */
static bool stat_records_whole(size_t len)
{
	long last = 0;
	char *line = buf;

	if (len == 0 || buf[len - 1] != '\n')
		return false;
	while (*line) {
		char *end = strchr(line, '\n');
		long pid;

		if (!end)
			return false;
		*end = '\0';
		char *paren = strstr(line, " (");
		char *close = strrchr(line, ')');
		if (sscanf(line, "%ld", &pid) != 1 || pid <= last || !paren || !close ||
		    close[1] != ' ')
			return false;
		last = pid;
		line = end + 1;
	}
	stat_max_pid = last;
	return true;
}

/* Records of /proc/all/status: each from its "Name:" line to the next one (the RFC puts them
 * side by side), "Pid:" rising. */
static bool status_records_whole(size_t len)
{
	long last = 0;
	char *rec = buf;

	if (len < 1 || buf[len - 1] != '\n')
		return false;
	while (*rec) {
		char *end = strstr(rec + 1, "\nName:\t");
		char *pidline = strstr(rec, "\nPid:\t");
		long pid;

		if (strncmp(rec, "Name:\t", 6) != 0 || !pidline || (end && pidline > end) ||
		    sscanf(pidline + 6, "%ld", &pid) != 1 || pid <= last)
			return false;
		last = pid;
		rec = end ? end + 1 : buf + len;
	}
	return true;
}

int main(void)
{
	if (!in_sandbox()) {
		CHECK_ERR(access("/proc/all", F_OK), ENOENT);
		return check_done();
	}
	CHECK_EQ(access("/proc/all", F_OK), 0);

	pid_t churner = fork();
	if (churner == 0) {
		for (;;) {
			pid_t p = fork();
			if (p == 0)
				_exit(0);
			if (p > 0)
				waitpid(p, NULL, 0);
		}
	}
	/* Rounds go on until a good number of processes came and went meanwhile (at least
	 * ROUNDS rounds, at most about DEADLINE_S seconds). */
	int bad_stat = 0, bad_status = 0, failed = 0;
	long first_max = 0;
	time_t deadline = time(NULL) + DEADLINE_S;
	for (int i = 0; i < ROUNDS || (stat_max_pid < first_max + 20 && time(NULL) < deadline);
	     i++) {
		if (i == ROUNDS / 2)
			maybe_save(); /* mid-churn: processes being forked and reaped */
		ssize_t n = read_in_pieces("/proc/all/stat");
		if (n < 0)
			failed++;
		else if (!stat_records_whole((size_t)n))
			bad_stat++;
		if (i == 0)
			first_max = stat_max_pid;
		n = read_in_pieces("/proc/all/status");
		if (n < 0)
			failed++;
		else if (!status_records_whole((size_t)n))
			bad_status++;
	}
	kill(churner, SIGKILL);
	CHECK_EQ(waitpid(churner, NULL, 0), churner);
	CHECK_EQ(failed, 0);
	CHECK_EQ(bad_stat, 0);
	CHECK_EQ(bad_status, 0);
	CHECK(stat_max_pid >= first_max + 20); /* processes did come and go meanwhile */
	return check_done();
}
