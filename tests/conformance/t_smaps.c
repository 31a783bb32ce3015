/*
 * t_smaps: /proc/self/smaps has one entry per line of /proc/self/maps, that line first, then
 * Linux's fields in Linux's order (Size, page sizes, Rss ... Locked, THPeligible, VmFlags);
 * Size is the mapping's, Rss counts the pages touched of a fresh anonymous mapping, which are
 * Anonymous and Private_Dirty; VmFlags names the access; smaps_rollup is the sum of the
 * entries under a [rollup] header spanning them all.
 * conformance: native-proc
 */
#include "check.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>

/* Static buffers: reading must not map anything between the three files. */
static char bufs[3][1 << 20];

static char *slurp(const char *path, int i)
{
	int fd = open(path, O_RDONLY);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, bufs[i] + len, sizeof(bufs[i]) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	bufs[i][len] = 0;
	return bufs[i];
}

static const char *fields[] = {
    "Size",	     "KernelPageSize", "MMUPageSize",	  "Rss",
    "Pss",	     "Pss_Dirty",      "Shared_Clean",	  "Shared_Dirty",
    "Private_Clean", "Private_Dirty",  "Referenced",	  "Anonymous",
    "KSM",	     "LazyFree",       "AnonHugePages",	  "ShmemPmdMapped",
    "FilePmdMapped", "Shared_Hugetlb", "Private_Hugetlb", "Swap",
    "SwapPss",	     "Locked",	       "THPeligible",
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* The value of FIELD (kB) in the entry starting at E, or -1. */
static long field(const char *e, const char *name)
{
	char key[64];
	snprintf(key, sizeof(key), "\n%s:", name);
	const char *end = strstr(e + 1, "\nVmFlags:");
	const char *p = strstr(e, key);
	return p && (!end || p < end) ? atol(p + strlen(key)) : -1;
}

int main(void)
{
	/* Between inaccessible pages, so that no neighbour merges with them. */
	char *res = mmap(NULL, 24 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(res != MAP_FAILED);
	char *anon = res + 4096, *ro = res + 18 * 4096;
	CHECK_EQ(mprotect(anon, 16 * 4096, PROT_READ | PROT_WRITE), 0);
	CHECK_EQ(mprotect(ro, 2 * 4096, PROT_READ), 0);
	anon[0] = 1, anon[4096 * 5] = 1, anon[4096 * 9] = 1;
	maybe_save(); /* the mappings and their resident pages */

	char *maps = slurp("/proc/self/maps", 0);
	char *smaps = slurp("/proc/self/smaps", 1);
	char *rollup = slurp("/proc/self/smaps_rollup", 2);
	CHECK(maps && smaps && rollup);
	if (!maps || !smaps || !rollup)
		return check_done();

	/* Entry by entry: the maps line, then the fields in order, ending with VmFlags. */
	long rss_sum = 0, anon_sum = 0;
	int entries = 0, found = 0;
	char *m = maps, *s = smaps;
	while (*m) {
		char *nl = strchr(m, '\n');
		size_t ml = (size_t)(nl - m) + 1;
		CHECK(!strncmp(s, m, ml));
		if (strncmp(s, m, ml)) {
			dprintf(1, "maps: %.*s smaps: %.80s\n", (int)ml, m, s);
			break;
		}
		unsigned long start, end;
		CHECK_EQ(sscanf(m, "%lx-%lx", &start, &end), 2);
		char *e = s;
		const char *at = s + ml;
		for (size_t i = 0; i < NFIELDS; i++) {
			size_t fl = strlen(fields[i]);
			CHECK(!strncmp(at, fields[i], fl) && at[fl] == ':');
			if (strncmp(at, fields[i], fl)) {
				dprintf(1, "expected %s at %.40s\n", fields[i], at);
				return check_done();
			}
			at = strchr(at, '\n') + 1;
			/* Linux shows ProtectionKey on CPUs with protection keys. */
			if (!strncmp(at, "ProtectionKey:", 14))
				at = strchr(at, '\n') + 1;
		}
		CHECK(!strncmp(at, "VmFlags:", 8));
		CHECK_EQ(field(e, "Size"), (long)((end - start) >> 10));
		CHECK_EQ(field(e, "KernelPageSize"), 4);
		rss_sum += field(e, "Rss");
		anon_sum += field(e, "Anonymous");
		char *vmflags = strstr(e, "\nVmFlags:");
		if (start == (uintptr_t)anon) {
			found++;
			CHECK_EQ(field(e, "Size"), 64);
			CHECK_EQ(field(e, "Rss"), 12);
			CHECK_EQ(field(e, "Anonymous"), 12);
			CHECK_EQ(field(e, "Private_Dirty"), 12);
			CHECK(!strncmp(vmflags, "\nVmFlags: rd wr mr mw me ", 25));
			CHECK(strstr(vmflags, " ac ") &&
			      strstr(vmflags, " ac ") < strchr(vmflags + 1, '\n'));
		}
		if (start == (uintptr_t)ro) {
			found++;
			CHECK_EQ(field(e, "Size"), 8);
			CHECK_EQ(field(e, "Rss"), 0);
			CHECK(!strncmp(vmflags, "\nVmFlags: rd mr mw me ", 22));
		}
		s = strchr(vmflags + 1, '\n') + 1;
		m = nl + 1;
		entries++;
	}
	CHECK_EQ(*s, 0);
	CHECK_EQ(found, 2);
	CHECK(entries > 3);

	/* The rollup: one header spanning the first and last mapping, then the sums. */
	unsigned long rs, re, first, last_end = 0;
	CHECK_EQ(sscanf(rollup, "%lx-%lx ---p 00000000 00:00 0", &rs, &re), 2);
	CHECK(strstr(rollup, "[rollup]\nRss:") != NULL);
	CHECK_EQ(sscanf(maps, "%lx-", &first), 1);
	for (char *l = maps; *l; l = strchr(l, '\n') + 1)
		if (!strstr(l, "[vsyscall]") || strstr(l, "[vsyscall]") > strchr(l, '\n'))
			sscanf(l, "%*x-%lx", &last_end);
	CHECK_EQ(rs, first);
	CHECK_EQ(re, last_end);
	/* The files were read in one go each, but natively the process can still change a page
	 * or two in between (stack, libc's buffers). */
	CHECK(labs(field(rollup, "Rss") - rss_sum) <= 16);
	CHECK(labs(field(rollup, "Anonymous") - anon_sum) <= 16);
	CHECK(field(rollup, "Pss_Anon") >= 0 && field(rollup, "Pss_File") >= 0);
	return check_done();
}
