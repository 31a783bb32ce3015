/*
 * t_clock_sources: the clocks read through every door a program has — the libc wrappers (which
 * a vDSO serves without a syscall), the raw syscalls, gettimeofday, time and getcpu — agree:
 * interleaved reads never step back, gettimeofday is realtime in microseconds, the resolutions
 * are the kernel's, getcpu names a CPU the process may run on, and monotonic and boot time read
 * through libc go on forward across a checkpoint. The vDSO itself: AT_SYSINFO_EHDR names it,
 * /proc/self/maps shows it there as [vdso] with [vvar] below, its ELF exports the five
 * functions under LINUX_2.6 and each, called directly, agrees with its syscall (raw errors
 * included); a forked child has it at the same address, an exec'd program has one, and after a
 * checkpoint it is where it was and still works.
 * conformance: native-proc
 */
#include "check.h"
#include <elf.h>
#include <sched.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

static long long ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* Reads CLOCK alternately through libc and the raw syscall: neither is ever behind the other. */
static void interleaved(clockid_t clock)
{
	struct timespec prev, cur;

	CHECK_EQ(clock_gettime(clock, &prev), 0);
	for (int i = 0; i < 2000; i++) {
		if (i % 2)
			CHECK_EQ(clock_gettime(clock, &cur), 0);
		else
			CHECK_EQ(syscall(SYS_clock_gettime, clock, &cur), 0);
		if (ns(&cur) < ns(&prev)) {
			CHECK(ns(&cur) >= ns(&prev));
			return;
		}
		prev = cur;
	}
}

/* NAME@LINUX_2.6 in the vDSO at EH, found the way a libc finds it: through the dynamic
 * section's symbol, string and SysV hash tables (whose chain count is the symbol count) and
 * the version each symbol is defined with. */
static void *vdso_sym(const Elf64_Ehdr *eh, const char *name)
{
	const Elf64_Phdr *ph = (const void *)((const char *)eh + eh->e_phoff);
	const Elf64_Dyn *dyn = NULL;
	uintptr_t base = 0;
	int have_base = 0;

	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_base) {
			base = (uintptr_t)eh + ph[i].p_offset - ph[i].p_vaddr;
			have_base = 1;
		}
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const void *)((const char *)eh + ph[i].p_offset);
	}
	if (!dyn || !have_base)
		return NULL;
	const char *strs = NULL;
	const Elf64_Sym *syms = NULL;
	const Elf32_Word *hash = NULL;
	const Elf64_Half *versym = NULL;
	const Elf64_Verdef *verdef = NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		void *p = (void *)(base + dyn->d_un.d_ptr);
		switch (dyn->d_tag) {
		case DT_STRTAB:
			strs = p;
			break;
		case DT_SYMTAB:
			syms = p;
			break;
		case DT_HASH:
			hash = p;
			break;
		case DT_VERSYM:
			versym = p;
			break;
		case DT_VERDEF:
			verdef = p;
			break;
		}
	}
	if (!strs || !syms || !hash)
		return NULL;
	for (Elf32_Word i = 0; i < hash[1]; i++) {
		if (ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC || syms[i].st_shndx == SHN_UNDEF ||
		    strcmp(strs + syms[i].st_name, name))
			continue;
		if (versym && verdef) {
			const Elf64_Verdef *d = verdef;
			while (d->vd_ndx != (versym[i] & 0x7fff) && d->vd_next)
				d = (const void *)((const char *)d + d->vd_next);
			const Elf64_Verdaux *aux = (const void *)((const char *)d + d->vd_aux);
			if (d->vd_ndx != (versym[i] & 0x7fff) ||
			    strcmp(strs + aux->vda_name, "LINUX_2.6"))
				continue;
		}
		return (void *)(base + syms[i].st_value);
	}
	return NULL;
}

/* The [vdso] and [vvar] lines of /proc/self/maps: their starts, ends and permissions. */
struct special {
	unsigned long start, end;
	char perms[5];
};

static int find_mapping(const char *tag, struct special *m)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, tag) &&
			sscanf(line, "%lx-%lx %4s", &m->start, &m->end, m->perms) == 3;
	if (f)
		fclose(f);
	return found;
}

typedef int (*cgt_fn)(clockid_t, struct timespec *);

/* The vDSO where AT_SYSINFO_EHDR says, shown in the maps, exporting what libcs look up;
 * called directly, each function agrees with its syscall. */
static void check_vdso(void)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct special vdso = {0}, vvar = {0};

	CHECK(eh != NULL);
	if (!eh)
		return;
	CHECK_EQ(memcmp(eh->e_ident, ELFMAG, SELFMAG), 0);
	CHECK(find_mapping(" [vdso]", &vdso));
	CHECK_EQ(vdso.start, (uintptr_t)eh);
	CHECK_STREQ(vdso.perms, "r-xp");
	CHECK(find_mapping(" [vvar]", &vvar));
	CHECK(vvar.end <= vdso.start && vvar.perms[0] == 'r' && vvar.perms[1] == '-');

	const char *names[] = {"__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time",
			       "__vdso_clock_getres", "__vdso_getcpu"};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!vdso_sym(eh, names[i]))
			CHECK_FAIL_("the vDSO has no %s@LINUX_2.6", names[i]);
	cgt_fn cgt = (cgt_fn)vdso_sym(eh, "__vdso_clock_gettime");
	int (*gtod)(struct timeval *, struct timezone *) = vdso_sym(eh, "__vdso_gettimeofday");
	time_t (*vtime)(time_t *) = vdso_sym(eh, "__vdso_time");
	int (*getres)(clockid_t, struct timespec *) = vdso_sym(eh, "__vdso_clock_getres");
	long (*getcpu)(unsigned *, unsigned *, void *) = vdso_sym(eh, "__vdso_getcpu");
	if (!cgt || !gtod || !vtime || !getres || !getcpu)
		return;

	clockid_t clocks[] = {CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_MONOTONIC_RAW};
	for (unsigned c = 0; c < sizeof(clocks) / sizeof(clocks[0]); c++) {
		struct timespec a, b;
		CHECK_EQ(cgt(clocks[c], &a), 0);
		for (int i = 0; i < 200; i++) {
			if (i % 2)
				CHECK_EQ(cgt(clocks[c], &b), 0);
			else
				CHECK_EQ(syscall(SYS_clock_gettime, clocks[c], &b), 0);
			if (ns(&b) < ns(&a)) {
				CHECK_FAIL_("clock %d stepped back by %lld ns between the vDSO and "
					    "the syscall",
					    (int)clocks[c], ns(&a) - ns(&b));
				break;
			}
			a = b;
		}
	}
	/* What the vDSO cannot answer is the kernel's answer, errors raw as syscalls return
	 * them. */
	struct timespec ts, res2;
	CHECK_EQ(cgt((clockid_t)1000, &ts), -EINVAL);
	CHECK_EQ(cgt(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
	CHECK(ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
	CHECK_EQ(getres((clockid_t)1000, &ts), -EINVAL);
	clockid_t rclocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE,
			       CLOCK_REALTIME_COARSE, CLOCK_BOOTTIME};
	for (unsigned c = 0; c < sizeof(rclocks) / sizeof(rclocks[0]); c++) {
		CHECK_EQ(getres(rclocks[c], &ts), 0);
		CHECK_EQ(syscall(SYS_clock_getres, rclocks[c], &res2), 0);
		CHECK_EQ(ns(&ts), ns(&res2));
	}
	struct timeval tv1, tv2;
	CHECK_EQ(syscall(SYS_gettimeofday, &tv1, NULL), 0);
	CHECK_EQ(gtod(&tv2, NULL), 0);
	CHECK(tv2.tv_sec > tv1.tv_sec || (tv2.tv_sec == tv1.tv_sec && tv2.tv_usec >= tv1.tv_usec));
	time_t t1 = vtime(NULL), t2 = 0;
	CHECK_EQ(syscall(SYS_time, &t2), t2);
	CHECK(t2 >= t1 && t2 <= t1 + 1);
	unsigned cpu1 = ~0U, cpu2 = ~0U;
	CHECK_EQ(getcpu(&cpu1, NULL, NULL), 0);
	CHECK_EQ(syscall(SYS_getcpu, &cpu2, NULL, NULL), 0);
	CHECK(cpu1 < CPU_SETSIZE && cpu2 < CPU_SETSIZE);
}

/* What may be done to the mappings, as Linux allows it: [vvar] is never writable nor
 * executable and takes no MADV_DONTNEED; [vdso] cannot grow, and MADV_DONTNEED leaves it
 * working; it may be made writable and written (a breakpoint), which changes only this
 * process's copy. */
static void check_vdso_mappings(void)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct special vdso = {0}, vvar = {0};
	struct timespec ts;

	if (!eh || !find_mapping(" [vdso]", &vdso) || !find_mapping(" [vvar]", &vvar))
		return; /* check_vdso said so */
	cgt_fn cgt = (cgt_fn)vdso_sym(eh, "__vdso_clock_gettime");
	size_t len = vdso.end - vdso.start;
	CHECK_ERR(mprotect((void *)vvar.start, 4096, PROT_READ | PROT_WRITE), EACCES);
	CHECK_ERR(mprotect((void *)vvar.start, 4096, PROT_READ | PROT_EXEC), EACCES);
	CHECK(mremap((void *)vdso.start, len, 2 * len, 0) == MAP_FAILED && errno == EFAULT);
	CHECK(mremap((void *)vdso.start, len, 2 * len, MREMAP_MAYMOVE) == MAP_FAILED &&
	      errno == EFAULT);
	CHECK_ERR(madvise((void *)vvar.start, 4096, MADV_DONTNEED), EINVAL);
	CHECK_EQ(madvise((void *)vdso.start, len, MADV_DONTNEED), 0);
	CHECK_EQ(cgt(CLOCK_MONOTONIC, &ts), 0);
	CHECK_EQ(mprotect((void *)vdso.start, len, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
	((volatile char *)vdso.start)[EI_PAD + 1] ^= 0; /* a write: this process's own copy */
	CHECK_EQ(mprotect((void *)vdso.start, len, PROT_READ | PROT_EXEC), 0);
	CHECK_EQ(cgt(CLOCK_MONOTONIC, &ts), 0);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &ts), 0);
}

/* A forked child has the vDSO where its parent has it; an exec'd program has one of its own. */
static void check_vdso_across_fork_and_exec(const char *self)
{
	unsigned long at = getauxval(AT_SYSINFO_EHDR);
	pid_t pid = fork();

	if (pid == 0) {
		struct special m = {0};
		struct timespec ts;
		int ok = find_mapping(" [vdso]", &m) && m.start == at &&
			 ((cgt_fn)vdso_sym((const void *)at, "__vdso_clock_gettime"))(
			     CLOCK_MONOTONIC, &ts) == 0;
		_exit(ok ? 0 : 1);
	}
	int status = -1;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);

	pid = fork();
	if (pid == 0) {
		char *argv[] = {(char *)self, "--vdso-exec-child", NULL};
		execv(self, argv);
		_exit(2);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(status, 0);
}

/* The exec'd program's side: a vDSO at its AT_SYSINFO_EHDR, in its maps, that works. */
static int exec_child(void)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct special m = {0};
	struct timespec ts;

	if (!eh || !find_mapping(" [vdso]", &m) || m.start != (uintptr_t)eh)
		return 1;
	cgt_fn cgt = (cgt_fn)vdso_sym(eh, "__vdso_clock_gettime");
	return cgt && cgt(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec > 1500000000 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct timespec rt, rt2, res, m1, m2, b1, b2;
	struct timeval tv;

	if (argc > 1 && !strcmp(argv[1], "--vdso-exec-child"))
		return exec_child();

	interleaved(CLOCK_MONOTONIC);
	interleaved(CLOCK_BOOTTIME);
	interleaved(CLOCK_REALTIME);

	/* gettimeofday is realtime cut to microseconds, between two realtime reads. */
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &rt), 0);
	CHECK_EQ(gettimeofday(&tv, NULL), 0);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &rt2), 0);
	CHECK(tv.tv_usec >= 0 && tv.tv_usec < 1000000);
	long long tv_ns = tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
	CHECK(tv_ns >= ns(&rt) - 999 && tv_ns <= ns(&rt2));
	struct timeval tv2;
	CHECK_EQ(syscall(SYS_gettimeofday, &tv2, NULL), 0);
	CHECK(tv2.tv_sec > tv.tv_sec || (tv2.tv_sec == tv.tv_sec && tv2.tv_usec >= tv.tv_usec));

	/* time() is realtime's seconds, never ahead of a later read. */
	time_t t = time(NULL);
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &rt), 0);
	CHECK(t <= rt.tv_sec && t >= rt.tv_sec - 1);
	time_t t2 = 0;
	CHECK_EQ(time(&t2), t2);
	CHECK(t2 >= t);

	/* High-resolution clocks resolve a nanosecond; libc and the syscall say the same. */
	clockid_t hr[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME};
	for (unsigned i = 0; i < sizeof(hr) / sizeof(hr[0]); i++) {
		CHECK_EQ(clock_getres(hr[i], &res), 0);
		CHECK_EQ(res.tv_sec, 0);
		CHECK_EQ(res.tv_nsec, 1);
		CHECK_EQ(syscall(SYS_clock_getres, hr[i], &res), 0);
		CHECK_EQ(res.tv_nsec, 1);
	}
	/* The coarse clocks tick: coarser than a nanosecond, finer than a second. */
	CHECK_EQ(clock_getres(CLOCK_MONOTONIC_COARSE, &res), 0);
	CHECK(res.tv_sec == 0 && res.tv_nsec > 1);
	CHECK_ERR(clock_getres((clockid_t)1000, &res), EINVAL);

	/* getcpu: a CPU this process may run on, the same as sched_getcpu's; node 0 here. */
	cpu_set_t set;
	unsigned int cpu = ~0U, node = ~0U;
	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	CHECK_EQ(syscall(SYS_getcpu, &cpu, &node, NULL), 0);
	CHECK(cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set));
	int c = sched_getcpu();
	CHECK(c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &set));
	CHECK_EQ(syscall(SYS_getcpu, NULL, NULL, NULL), 0);

	check_vdso();
	check_vdso_across_fork_and_exec(argv[0]);
	check_vdso_mappings();

	/* Across a checkpoint, monotonic and boot time read through libc go on forward, and the
	 * vDSO is where it was. */
	unsigned long vdso_before = getauxval(AT_SYSINFO_EHDR);
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &m1), 0);
	CHECK_EQ(clock_gettime(CLOCK_BOOTTIME, &b1), 0);
	maybe_save();
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &m2), 0);
	CHECK_EQ(clock_gettime(CLOCK_BOOTTIME, &b2), 0);
	CHECK(ns(&m2) >= ns(&m1));
	CHECK(ns(&b2) >= ns(&b1));
	CHECK_EQ(getauxval(AT_SYSINFO_EHDR), vdso_before);
	interleaved(CLOCK_MONOTONIC);
	interleaved(CLOCK_REALTIME);
	check_vdso();
	check_done();
}
