/* A guest that holds memory worth checkpointing, for the checkpoint benchmark and e2e tests:
 * it maps MIB MiB of anonymous memory, fills it with random bytes or with a pattern, prints
 * "sum X" (a checksum of all of it) and "ready", sleeps SECS seconds (a checkpoint lands
 * there), then reads every byte again and prints the checksum it finds and "done". A restored
 * guest whose memory came back intact prints the same sum twice.
 *   memfill random|pattern MIB [SECS] [DIRTY_MIB]
 * DIRTY_MIB: after SECS, rewrite that many MiB at the start (a change for --parent), sleep
 * SECS again, then check. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static void nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Random: xorshift64*, 8 bytes a step. Pattern: each page a repeated line with its page
 * number, compressible about 100:1 by zlib, as text or tables in a real heap are. */
static void fill(uint64_t *m, size_t words, int random, uint64_t seed)
{
	if (random) {
		uint64_t x = seed * 0x9E3779B97F4A7C15ULL | 1;
		for (size_t i = 0; i < words; i++) {
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			m[i] = x * 0x2545F4914F6CDD1DULL;
		}
		return;
	}
	static const char line[] = "minisentry patterned memory, page ";
	char *p = (char *)m;
	for (size_t pg = 0; pg < words / 512; pg++) {
		char *page = p + pg * 4096;
		int n = 0;
		while (n < 4096 - 64)
			n += snprintf(page + n, 64, "%s%zu.%llu\n", line, pg,
				      (unsigned long long)seed);
		memset(page + n, '.', 4096 - n);
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
	if (argc < 3 || (strcmp(argv[1], "random") && strcmp(argv[1], "pattern"))) {
		fprintf(stderr, "usage: memfill random|pattern MIB [SECS] [DIRTY_MIB]\n");
		return 2;
	}
	int random = !strcmp(argv[1], "random");
	size_t mib = strtoul(argv[2], NULL, 10);
	double secs = argc > 3 ? atof(argv[3]) : 1;
	size_t dirty = argc > 4 ? strtoul(argv[4], NULL, 10) : 0;
	size_t len = mib << 20, words = len / 8;
	uint64_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	fill(m, words, random, 42);
	printf("sum %016llx\nready\n", (unsigned long long)checksum(m, words));
	fflush(stdout);
	nap(secs);
	if (dirty) {
		fill(m, (dirty < mib ? dirty : mib) << 17, random, 43);
		printf("sum %016llx\nready2\n", (unsigned long long)checksum(m, words));
		fflush(stdout);
		nap(secs);
	}
	printf("sum %016llx\ndone\n", (unsigned long long)checksum(m, words));
	return 0;
}
