/* A guest for write tracking after a restore (bench, e2e): it maps MIB MiB of anonymous memory
 * and fills it with random bytes, maps HOLE_MIB MiB more and leaves it untouched, prints
 * "ready", and then obeys one command a line from stdin, printing "t MICROSECONDS" after each:
 *   w N / W N   store a byte (the command's number) in every page of the first N MiB of the
 *               filled / untouched map, without reading it first
 *   r N / R N   read one byte of every page of them
 *   d N         drop the first N MiB of the filled map (madvise MADV_DONTNEED: zeros)
 *   u           unmap the untouched map, map it again and write every page of it
 *   f           fork a child that writes every page of the filled map, and wait for it
 *   s           print "sum X", a checksum of both maps
 *   p SECS      print "pause" and sleep SECS (a checkpoint lands there)
 * It exits at the end of its input.
 *   touchmem MIB [HOLE_MIB] */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static unsigned char *map(size_t len)
{
	void *m = mmap(NULL, len ? len : PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED) {
		fprintf(stderr, "touchmem: cannot map %zu bytes\n", len);
		exit(1);
	}
	return m;
}

static uint64_t checksum(const unsigned char *m, size_t len, uint64_t h)
{
	for (size_t i = 0; i < len; i += 8)
		h = (h ^ *(const uint64_t *)(m + i)) * 0x100000001b3ULL;
	return h;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: touchmem MIB [HOLE_MIB]\n");
		return 2;
	}
	size_t len = strtoul(argv[1], NULL, 10) << 20;
	size_t hlen = argc > 2 ? strtoul(argv[2], NULL, 10) << 20 : 0;
	unsigned char *m = map(len), *h = map(hlen);
	uint64_t x = 88172645463325252ULL;
	char line[64];
	unsigned cmds = 0;

	for (size_t i = 0; i < len / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		((uint64_t *)m)[i] = x;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		char c = 0;
		double n = 0, t0 = now_us();
		volatile unsigned sink = 0;
		if (sscanf(line, " %c %lf", &c, &n) < 1)
			continue;
		cmds++;
		size_t want = (size_t)n << 20;
		unsigned char *b = c == 'W' || c == 'R' ? h : m;
		size_t blen = b == h ? hlen : len;
		if (want > blen)
			want = blen;
		switch (c) {
		case 'w':
		case 'W':
			for (size_t o = 0; o < want; o += PAGE)
				b[o] = (unsigned char)cmds;
			break;
		case 'r':
		case 'R':
			for (size_t o = 0; o < want; o += PAGE)
				sink += b[o];
			break;
		case 'd':
			madvise(m, want, MADV_DONTNEED);
			break;
		case 'u':
			munmap(h, hlen ? hlen : PAGE);
			h = map(hlen);
			for (size_t o = 0; o < hlen; o += PAGE)
				h[o] = (unsigned char)(o >> 12) | 1;
			break;
		case 'f': {
			pid_t p = fork();
			if (p == 0) {
				for (size_t o = 0; o < len; o += PAGE)
					m[o]++;
				_exit(0);
			}
			while (p > 0 && waitpid(p, NULL, 0) < 0 && errno == EINTR)
				;
			break;
		}
		case 's':
			printf("sum %016llx\n",
			       (unsigned long long)checksum(
				   h, hlen, checksum(m, len, 0xcbf29ce484222325ULL)));
			break;
		case 'p': {
			printf("pause\n");
			fflush(stdout);
			struct timespec ts = {(time_t)n, (long)((n - (time_t)n) * 1e9)};
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
			break;
		}
		default:
			continue;
		}
		printf("t %.0f\n", now_us() - t0);
		fflush(stdout);
	}
	return 0;
}
