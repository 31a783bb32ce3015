/* The shape of seed 003's benchmark, for bench/golden.sh: a guest with MIB MiB of sparse
 * memory of which POP MiB are written (1 MiB blocks spread evenly, random bytes), which prints
 * "sum X" and "ready" and sleeps SECS (the golden image is taken there); then rewrites
 * CHANGE_KIB KiB in REGIONS regions spread over the written blocks, prints "sum X" and
 * "ready2", sleeps SECS again (the delta is taken there), and prints "sum X" and "done".
 *   sparsefill MIB POP SECS [REGIONS CHANGE_KIB] */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static void nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void fill(uint64_t *m, size_t words, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ULL | 1;

	for (size_t i = 0; i < words; i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		m[i] = x * 0x2545F4914F6CDD1DULL;
	}
}

static uint64_t checksum(const uint64_t *m, size_t words)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < words; i++)
		h = (h ^ m[i]) * 0x100000001b3ULL;
	return h;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: sparsefill MIB POP SECS [REGIONS CHANGE_KIB]\n");
		return 2;
	}
	size_t mib = strtoul(argv[1], NULL, 10), pop = strtoul(argv[2], NULL, 10);
	double secs = atof(argv[3]);
	size_t regions = argc > 5 ? strtoul(argv[4], NULL, 10) : 0;
	size_t change = argc > 5 ? strtoul(argv[5], NULL, 10) << 10 : 0;
	size_t len = mib << 20;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED || pop > mib || !pop) {
		fprintf(stderr, "sparsefill: cannot map %zu MiB\n", mib);
		return 1;
	}
	for (size_t k = 0; k < pop; k++)
		fill((uint64_t *)(m + (k * mib / pop << 20)), 1 << 17, k + 1);
	printf("sum %016llx\nready\n", (unsigned long long)checksum((uint64_t *)m, len / 8));
	fflush(stdout);
	nap(secs);
	if (regions) {
		size_t each = (change / regions + 4095) & ~4095UL;
		for (size_t r = 0; r < regions; r++) {
			size_t block = r * pop / regions * mib / pop;
			fill((uint64_t *)(m + (block << 20)), each / 8, 1000 + r);
		}
		printf("sum %016llx\nready2\n",
		       (unsigned long long)checksum((uint64_t *)m, len / 8));
		fflush(stdout);
		nap(secs);
	}
	printf("sum %016llx\ndone\n", (unsigned long long)checksum((uint64_t *)m, len / 8));
	return 0;
}
