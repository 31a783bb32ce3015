/*
 * t_auxv: the auxiliary vector the loader left after envp on the initial stack, read both
 * raw and through getauxval: page size, AT_RANDOM's 16 bytes, AT_EXECFN equal to argv[0] (the
 * runner execs the absolute path), AT_PHDR/AT_PHNUM/AT_PHENT describing our own program
 * headers, AT_ENTRY at _start, AT_BASE set exactly when there is a PT_INTERP, ids matching
 * getuid() and friends, AT_SECURE off; all of it as before after a checkpoint and restore.
 */
#include "check.h"
#include <elf.h>
#include <stdint.h>
#include <sys/auxv.h>

extern char **environ;
extern char _start[];

int main(int argc, char **argv, char **envp)
{
	(void)argc;
	unsigned char random_before[16];
	memcpy(random_before, (const void *)getauxval(AT_RANDOM), 16);
	maybe_save(); /* the initial stack with its auxv, and libc's copy of it */
	CHECK_EQ(getauxval(AT_PAGESZ), 4096);
	CHECK_EQ(getauxval(AT_CLKTCK), 100);
	CHECK_EQ(getauxval(AT_SECURE), 0);
	CHECK_EQ(getauxval(AT_UID), getuid());
	CHECK_EQ(getauxval(AT_EUID), geteuid());
	CHECK_EQ(getauxval(AT_GID), getgid());
	CHECK_EQ(getauxval(AT_EGID), getegid());

	const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
	CHECK(rnd != NULL);
	if (rnd) {
		int nonzero = 0;
		for (int i = 0; i < 16; i++)
			nonzero |= rnd[i];
		CHECK(nonzero);
		CHECK_EQ(memcmp(rnd, random_before, 16), 0);
	}

	const char *execfn = (const char *)getauxval(AT_EXECFN);
	CHECK(execfn != NULL);
	CHECK_STREQ(execfn, argv[0]);

	/* Our program headers: the right size, one PT_PHDR/PT_LOAD covering them. */
	const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	unsigned long phnum = getauxval(AT_PHNUM);
	CHECK(ph != NULL);
	CHECK_EQ(getauxval(AT_PHENT), sizeof(Elf64_Phdr));
	CHECK(phnum > 0 && phnum < 64);
	int loads = 0, interp = 0;
	for (unsigned long i = 0; ph && i < phnum; i++) {
		loads += ph[i].p_type == PT_LOAD;
		interp += ph[i].p_type == PT_INTERP;
	}
	CHECK(loads >= 1);
	CHECK_EQ(getauxval(AT_ENTRY), (uintptr_t)_start);
	if (interp)
		CHECK(getauxval(AT_BASE) != 0);
	else
		CHECK_EQ(getauxval(AT_BASE), 0);

	/* The raw vector follows envp's NULL; every entry agrees with getauxval. */
	CHECK(envp == environ);
	char **p = envp;
	while (*p)
		p++;
	const unsigned long *av = (const unsigned long *)(p + 1);
	int seen_pagesz = 0, seen_random = 0, n = 0;
	for (; av[0] != AT_NULL && n < 64; av += 2, n++) {
		/* glibc replaces AT_HWCAP with its own x86 feature bits. */
		if (av[0] != AT_HWCAP)
			CHECK_EQ(getauxval(av[0]), av[1]);
		seen_pagesz |= av[0] == AT_PAGESZ;
		seen_random |= av[0] == AT_RANDOM;
	}
	CHECK_EQ(av[0], AT_NULL);
	CHECK(seen_pagesz && seen_random);
	/* AT_RANDOM and AT_EXECFN point into the initial stack, above envp. */
	CHECK((uintptr_t)rnd > (uintptr_t)av);
	CHECK((uintptr_t)execfn > (uintptr_t)av);

	/* An unknown type is 0 with ENOENT. */
	errno = 0;
	CHECK_EQ(getauxval(12345), 0);
	CHECK_EQ(errno, ENOENT);
	return check_done();
}
