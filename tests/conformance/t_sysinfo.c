/*
 * t_sysinfo: sysinfo(2) says what /proc says: uptime (rounded up to the second) as
 * /proc/uptime, total and free memory as /proc/meminfo's MemTotal and MemFree in bytes
 * (mem_unit 1 on 64-bit), the thread count as /proc/loadavg's, the loads as its averages. In the
 * sandbox that is the sandbox: this test's own threads, a young uptime, no load.
 * conformance: native-proc
 */
#include "check.h"
#include <signal.h>
#include <stdint.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>

static double proc_uptime(void)
{
	double up = -1;
	FILE *f = fopen("/proc/uptime", "r");

	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = -1;
		fclose(f);
	}
	return up;
}

static long long meminfo(const char *key)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = atoll(line + strlen(key) + 1) * 1024;
	if (f)
		fclose(f);
	return v;
}

/* /proc/loadavg's averages (times 100) and its thread count. */
static int loadavg(long *load100, long *threads)
{
	double l[3];
	long running;
	FILE *f = fopen("/proc/loadavg", "r");
	int n = f ? fscanf(f, "%lf %lf %lf %ld/%ld", &l[0], &l[1], &l[2], &running, threads) : 0;

	if (f)
		fclose(f);
	for (int i = 0; i < 3; i++)
		load100[i] = (long)(l[i] * 100 + 0.5);
	return n == 5 ? 0 : -1;
}

/* The thread count, as sysinfo and loadavg both see it: equal when nothing on the host forks
 * between the two reads (tried a few times natively, where the host runs other things). */
static void check_threads(long want)
{
	struct sysinfo a, b;
	long load100[3], threads = -1;
	int ok = 0;

	for (int i = 0; i < 20 && !ok; i++) {
		CHECK_EQ(sysinfo(&a), 0);
		CHECK_EQ(loadavg(load100, &threads), 0);
		CHECK_EQ(sysinfo(&b), 0);
		ok = a.procs == b.procs && threads == a.procs;
	}
	CHECK(ok);
	if (!ok)
		dprintf(1, "sysinfo procs %u/%u, loadavg %ld\n", a.procs, b.procs, threads);
	if (want >= 0)
		CHECK_EQ(a.procs, want);
}

static void check_all(void)
{
	struct sysinfo si;
	long load100[3], threads;

	CHECK_EQ(sysinfo(&si), 0);
	double up = proc_uptime();
	CHECK(up >= 0);
	CHECK((long)si.uptime >= (long)up && (long)si.uptime <= (long)up + 2);
	CHECK_EQ(si.mem_unit, 1);
	CHECK_EQ((long long)si.totalram, meminfo("MemTotal"));
	long long free_now = meminfo("MemFree"), slack = (long long)si.totalram / 50;
	CHECK(free_now >= 0);
	CHECK((long long)si.freeram >= free_now - slack &&
	      (long long)si.freeram <= free_now + slack);
	CHECK((long long)si.sharedram <= meminfo("Shmem") + slack);
	CHECK_EQ((long long)si.totalswap, meminfo("SwapTotal"));
	CHECK(si.freeswap <= si.totalswap);
	CHECK_EQ(loadavg(load100, &threads), 0);
	if (in_sandbox()) {
		for (int i = 0; i < 3; i++)
			CHECK_EQ((long)(si.loads[i] * 100 / 65536), load100[i]);
		CHECK((long)si.uptime < 600); /* the sandbox's own boot, not the host's */
	}
}

int main(void)
{
	CHECK_ERR(syscall(SYS_sysinfo, BAD_PTR), EFAULT);
	check_all();
	check_threads(in_sandbox() ? 1 : -1);

	/* Two more processes: the sandbox counts them. */
	pid_t kids[2];
	for (int i = 0; i < 2; i++)
		if ((kids[i] = fork()) == 0) {
			pause();
			_exit(0);
		}
	check_threads(in_sandbox() ? 3 : -1);
	maybe_save(); /* the count, the uptime and the memory go on from the restore */
	check_all();
	check_threads(in_sandbox() ? 3 : -1);
	for (int i = 0; i < 2; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	check_threads(in_sandbox() ? 1 : -1);
	return check_done();
}
