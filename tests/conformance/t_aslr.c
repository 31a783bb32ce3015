/* Address-space layout randomisation and personality(2): two execs of the same program get a
 * different stack, mmap area, brk and (for a PIE) load address; under
 * personality(ADDR_NO_RANDOMIZE), which fork inherits and exec keeps, they get the same ones,
 * also across a checkpoint. In the sandbox, kernel.randomize_va_space 0 turns it all off and
 * 1 everything but brk (natively the test only reads the host's value).
 * conformance: native-proc
 */
#include "check.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/wait.h>

static const char *self;

struct layout {
	unsigned long stack, map, brk, code, pers;
};

static int child(void)
{
	int local = 0;
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	dprintf(1, "%lx %lx %lx %lx %lx\n", (unsigned long)&local, (unsigned long)m,
		(unsigned long)sbrk(0), (unsigned long)(uintptr_t)&child,
		(unsigned long)personality(0xffffffff));
	return 0;
}

static struct layout run_child(void)
{
	struct layout l = {0};
	char buf[256];
	int fds[2], st;
	ssize_t n;

	if (pipe(fds))
		return l;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		execl(self, self, "child", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	waitpid(pid, &st, 0);
	CHECK(n > 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	buf[n > 0 ? n : 0] = 0;
	CHECK_EQ(sscanf(buf, "%lx %lx %lx %lx %lx", &l.stack, &l.map, &l.brk, &l.code, &l.pers), 5);
	return l;
}

static int is_pie(void)
{
	Elf64_Ehdr h;
	int fd = open(self, O_RDONLY);
	int ok = fd >= 0 && read(fd, &h, sizeof(h)) == sizeof(h);

	if (fd >= 0)
		close(fd);
	return ok && h.e_type == ET_DYN;
}

static int read_va_space(void)
{
	char b[16] = "2";
	int fd = open("/proc/sys/kernel/randomize_va_space", O_RDONLY);

	if (fd >= 0) {
		CHECK(read(fd, b, sizeof(b) - 1) > 0);
		close(fd);
	}
	return atoi(b);
}

static void write_va_space(const char *v)
{
	int fd = open("/proc/sys/kernel/randomize_va_space", O_WRONLY);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, v, strlen(v)), (long)strlen(v));
	close(fd);
}

/* Two runs differ in what VA (a randomize_va_space value) randomises, or agree on all. */
static void check_pair(int va, int pie)
{
	struct layout a = run_child(), b = run_child();

	if (va >= 1) {
		CHECK(a.stack != b.stack);
		CHECK(a.map != b.map);
		if (pie)
			CHECK(a.code != b.code);
	} else {
		CHECK_EQ(a.stack, b.stack);
		CHECK_EQ(a.map, b.map);
		CHECK_EQ(a.code, b.code);
	}
	if (va >= 2)
		CHECK(a.brk != b.brk);
	else if (!pie)
		CHECK_EQ(a.brk, b.brk);
	else
		CHECK_EQ(a.brk - a.code, b.brk - b.code); /* at the program's end, wherever it is */
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	self = argv[0];

	int pie = is_pie(), va = read_va_space();
	unsigned long p0 = personality(0xffffffff);

	CHECK_EQ(personality(0xffffffff), p0); /* asking changes nothing */
	CHECK_EQ(p0 & ADDR_NO_RANDOMIZE, 0);
	/* The argument is 32 bits: the upper half is not looked at. */
	CHECK_EQ(syscall(SYS_personality, 0x1ffffffffUL), (long)p0);
	CHECK_EQ(personality(0xffffffff), p0);

	check_pair(va, pie);
	struct layout r = run_child();
	CHECK_EQ(r.pers, p0);

	/* ADDR_NO_RANDOMIZE: set, reported, inherited by fork, kept by exec. */
	CHECK_EQ(personality(p0 | ADDR_NO_RANDOMIZE), (long)p0);
	CHECK_EQ(personality(0xffffffff), (long)(p0 | ADDR_NO_RANDOMIZE));
	pid_t pid = fork();
	if (pid == 0)
		_exit(personality(0xffffffff) == (int)(p0 | ADDR_NO_RANDOMIZE) ? 0 : 1);
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	struct layout a = run_child(), b = run_child();
	CHECK_EQ(a.pers, p0 | ADDR_NO_RANDOMIZE);
	CHECK_EQ(a.stack, b.stack);
	CHECK_EQ(a.map, b.map);
	CHECK_EQ(a.brk, b.brk);
	CHECK_EQ(a.code, b.code);
	maybe_save();
	struct layout c = run_child();
	CHECK_EQ(c.pers, p0 | ADDR_NO_RANDOMIZE);
	CHECK_EQ(c.stack, a.stack);
	CHECK_EQ(c.map, a.map);
	CHECK_EQ(c.brk, a.brk);
	CHECK_EQ(c.code, a.code);

	/* Any value is kept, as Linux keeps it. */
	CHECK_EQ(personality(p0 | 0x0008), (long)(p0 | ADDR_NO_RANDOMIZE));
	CHECK_EQ(personality(0xffffffff), (long)(p0 | 0x0008));
	CHECK_EQ(personality(p0), (long)(p0 | 0x0008));

	/* The sandbox's own sysctl (never the host's: natively it is only read). */
	if (in_sandbox()) {
		CHECK_EQ(va, 2);
		write_va_space("0\n");
		CHECK_EQ(read_va_space(), 0);
		check_pair(0, pie);
		write_va_space("1\n");
		maybe_save();
		CHECK_EQ(read_va_space(), 1);
		check_pair(1, pie);
		write_va_space("2\n");
		check_pair(2, pie);
	}
	return check_done();
}
