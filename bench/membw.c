/* Native memory bandwidth, the scale for the checkpoint benchmark: memcpy of MIB MiB (default
 * 256) between two buffers that are already faulted in, RUNS times (default 5); prints the
 * median in MB/s. Also the cost of first touch, which a restore pays for every page it fills:
 * memcpy into fresh pages of a memfd mapped shared, as the memory file is. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t len = (argc > 1 ? strtoul(argv[1], NULL, 10) : 256) << 20;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	char *a = malloc(len), *b = malloc(len);
	double hot[64], fresh[64];

	if (!a || !b || runs < 1 || runs > 64)
		return 1;
	memset(a, 0x5a, len);
	memset(b, 0xa5, len);
	int fd = memfd_create("membw", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, len))
		return 1;
	for (int r = 0; r < runs; r++) {
		double t = now();
		memcpy(b, a, len);
		hot[r] = len / (now() - t) / 1e6;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return 1;
		t = now();
		memcpy(m, a, len);
		fresh[r] = len / (now() - t) / 1e6;
		munmap(m, len);
		fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, len);
	}
	qsort(hot, runs, sizeof(double), cmp);
	qsort(fresh, runs, sizeof(double), cmp);
	printf("%.0f %.0f\n", hot[runs / 2], fresh[runs / 2]);
	return 0;
}
