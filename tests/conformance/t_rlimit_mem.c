/*
 * t_rlimit_mem: RLIMIT_AS and RLIMIT_DATA bound the address space as Linux does: mmap,
 * mremap growth and brk past them fail (ENOMEM, or brk leaving the break where it was),
 * MAP_FIXED over memory already mapped only counts what is new, shared and read-only
 * mappings are not data, and raising the limit again lets the same calls succeed.
 */
#include "check.h"
#include <sys/mman.h>
#include <sys/resource.h>

#define MB (1UL << 20)

/* How many more MiB the address space can take now, in 1 MiB mappings (freed again). */
static unsigned long headroom_mb(void)
{
	static void *maps[1024];
	unsigned long n = 0;

	while (n < 1024 && (maps[n] = mmap(NULL, MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
					   0)) != MAP_FAILED)
		n++;
	CHECK(n < 1024);
	CHECK_EQ(errno, ENOMEM);
	for (unsigned long i = 0; i < n; i++)
		munmap(maps[i], MB);
	return n;
}

int main(void)
{
	struct rlimit orig, lim;

	/* RLIMIT_AS: 256 MiB in all, some of it taken by what is mapped now. */
	CHECK_EQ(getrlimit(RLIMIT_AS, &orig), 0);
	lim.rlim_cur = 256 * MB;
	lim.rlim_max = orig.rlim_max;
	CHECK_EQ(setrlimit(RLIMIT_AS, &lim), 0);
	maybe_save();
	unsigned long room = headroom_mb();
	CHECK(room >= 16 && room < 256);
	void *big = mmap(NULL, (room + 1) * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(big == MAP_FAILED && errno == ENOMEM);
	void *p = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	/* MAP_FIXED over itself adds nothing. */
	CHECK(mmap(p, 4 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p);
	/* Growing past the limit with mremap fails and leaves the mapping. */
	void *q = mremap(p, 4 * MB, (room + 1) * MB, MREMAP_MAYMOVE);
	CHECK(q == MAP_FAILED && errno == ENOMEM);
	/* brk past it leaves the break. */
	void *brk0 = sbrk(0);
	CHECK_EQ(syscall(SYS_brk, (char *)brk0 + (room + 1) * MB), (long)brk0);
	CHECK(sbrk(0) == brk0);
	CHECK_EQ(munmap(p, 4 * MB), 0);
	/* Within the limit again, the same growth works. */
	p = mmap(NULL, room * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(munmap(p, room * MB), 0);
	CHECK_EQ(setrlimit(RLIMIT_AS, &orig), 0);
	p = mmap(NULL, 512 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(munmap(p, 512 * MB), 0);

	/* RLIMIT_DATA: private writable memory only. */
	CHECK_EQ(getrlimit(RLIMIT_DATA, &orig), 0);
	lim.rlim_cur = 64 * MB;
	lim.rlim_max = orig.rlim_max;
	CHECK_EQ(setrlimit(RLIMIT_DATA, &lim), 0);
	p = mmap(NULL, 128 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p == MAP_FAILED && errno == ENOMEM);
	p = mmap(NULL, 128 * MB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(munmap(p, 128 * MB), 0);
	p = mmap(NULL, 128 * MB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(munmap(p, 128 * MB), 0);
	brk0 = sbrk(0);
	CHECK_EQ(syscall(SYS_brk, (char *)brk0 + 128 * MB), (long)brk0);
	CHECK(sbrk(0) == brk0);
	CHECK_EQ(syscall(SYS_brk, (char *)brk0 + 4096), (long)brk0 + 4096);
	CHECK_EQ(syscall(SYS_brk, brk0), (long)brk0);
	CHECK_EQ(setrlimit(RLIMIT_DATA, &orig), 0);
	return check_done();
}
