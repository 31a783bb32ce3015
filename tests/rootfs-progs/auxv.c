/* auxv: prints the auxiliary vector entries a loader and libc rely on, as NAME=value lines,
 * so the values minisentry's ELF loader builds can be compared with Linux's. */
#include <stdio.h>
#include <sys/auxv.h>

#define AUX(name)                                                                                  \
	{                                                                                          \
#name, name                                                                        \
	}

static const struct {
	const char *name;
	unsigned long type;
} numeric[] = {
    AUX(AT_PAGESZ), AUX(AT_CLKTCK), AUX(AT_PHDR),  AUX(AT_PHENT),  AUX(AT_PHNUM),
    AUX(AT_BASE),   AUX(AT_ENTRY),  AUX(AT_UID),   AUX(AT_EUID),   AUX(AT_GID),
    AUX(AT_EGID),   AUX(AT_SECURE), AUX(AT_HWCAP), AUX(AT_HWCAP2), AUX(AT_SYSINFO_EHDR),
};

int main(void)
{
	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++)
		printf("%s=0x%lx\n", numeric[i].name, getauxval(numeric[i].type));

	const char *execfn = (const char *)getauxval(AT_EXECFN);
	const char *platform = (const char *)getauxval(AT_PLATFORM);
	const unsigned char *random = (const unsigned char *)getauxval(AT_RANDOM);
	printf("AT_EXECFN=%s\n", execfn ? execfn : "(none)");
	printf("AT_PLATFORM=%s\n", platform ? platform : "(none)");
	if (random) {
		printf("AT_RANDOM=");
		for (int i = 0; i < 16; i++)
			printf("%02x", random[i]);
		printf("\n");
	} else {
		printf("AT_RANDOM=(none)\n");
	}
	return 0;
}
