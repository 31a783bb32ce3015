/* getpid: the cost of one intercepted system call. Makes N raw getpid syscalls (argv[1],
 * default 200000) and prints the mean time per call in nanoseconds as the first word of
 * its only line, so bench/run.sh can compare it natively and under minisentry. With argv[2]
 * = K > 0 it first installs a seccomp filter of K instructions that lets getpid through last
 * (K = 1: a lone ALLOW; otherwise K - 2 comparisons with other syscalls), for the cost of
 * the guests' own filters (docs/seccomp.md). */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int install_filter(long k)
{
	struct sock_filter f[4096];
	struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};

	if (k == 1) {
		f[0] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	} else {
		f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						    offsetof(struct seccomp_data, nr));
		for (long i = 1; i < k - 2; i++) /* never getpid: each is tried */
			f[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1000 + i,
							    k - 2 - i, 0);
		f[k - 2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		f[k - 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1);
	}
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	long k = argc > 2 ? strtol(argv[2], NULL, 10) : 0;

	if (n <= 0 || k < 0 || k > 4096 || k == 2) {
		fprintf(stderr, "usage: getpid [N > 0 [FILTER_INSNS: 0, 1 or 3..4096]]\n");
		return 2;
	}
	if (k && install_filter(k)) {
		perror("getpid: seccomp");
		return 1;
	}
	long long start = now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	long long elapsed = now_ns() - start;
	printf("%.1f ns per getpid (n=%ld)\n", (double)elapsed / n, n);
	return 0;
}
