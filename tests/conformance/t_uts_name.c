/*
 * t_uts_name: sethostname and setdomainname change what uname, gethostname and
 * /proc/sys/kernel/{hostname,domainname} show, and a write of those files changes what uname
 * shows; names are at most 64 bytes (EINVAL past it or for a negative length, EFAULT for a bad
 * buffer); a process without CAP_SYS_ADMIN gets EPERM; children see the new names. Natively
 * the test first enters a UTS namespace of its own (the host's name stays); the sandbox is
 * one.
 * conformance: native-proc
 */
#include "check.h"
#include <fcntl.h>
#include <sched.h>
#include <sys/utsname.h>
#include <sys/wait.h>

static void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n = fd < 0 ? -1 : write(fd, s, strlen(s));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

int main(void)
{
	struct utsname u;
	char buf[256], long_name[80];

	if (!in_sandbox())
		CHECK_EQ(unshare(CLONE_NEWUTS), 0);

	CHECK_EQ(sethostname("conf-host", 9), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_STREQ(u.nodename, "conf-host");
	CHECK_EQ(gethostname(buf, sizeof(buf)), 0);
	CHECK_STREQ(buf, "conf-host");
	read_file("/proc/sys/kernel/hostname", buf, sizeof(buf));
	CHECK_STREQ(buf, "conf-host\n");

	/* The length is the name's: no terminating NUL is needed. */
	CHECK_EQ(sethostname("abcdef", 3), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_STREQ(u.nodename, "abc");

	memset(long_name, 'x', sizeof(long_name));
	CHECK_EQ(sethostname(long_name, 64), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_EQ(strlen(u.nodename), 64);
	CHECK_ERR(sethostname(long_name, 65), EINVAL);
	CHECK_ERR(syscall(SYS_sethostname, long_name, -1), EINVAL);
	CHECK_ERR(syscall(SYS_sethostname, BAD_PTR, 4), EFAULT);
	CHECK_ERR(syscall(SYS_setdomainname, long_name, 65), EINVAL);
	CHECK_ERR(syscall(SYS_setdomainname, BAD_PTR, 4), EFAULT);
	CHECK_EQ(sethostname("", 0), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_STREQ(u.nodename, "");

	/* Through /proc. */
	CHECK_EQ(write_file("/proc/sys/kernel/hostname", "via-proc\n"), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_STREQ(u.nodename, "via-proc");
	CHECK_EQ(setdomainname("example.org", 11), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_STREQ(u.domainname, "example.org");
	read_file("/proc/sys/kernel/domainname", buf, sizeof(buf));
	CHECK_STREQ(buf, "example.org\n");
	CHECK_EQ(write_file("/proc/sys/kernel/domainname", "lan"), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_STREQ(u.domainname, "lan");

	maybe_save(); /* both names */
	CHECK_EQ(uname(&u), 0);
	CHECK_STREQ(u.nodename, "via-proc");
	CHECK_STREQ(u.domainname, "lan");
	read_file("/proc/sys/kernel/hostname", buf, sizeof(buf));
	CHECK_STREQ(buf, "via-proc\n");

	/* A child sees them; without CAP_SYS_ADMIN it may not change them. */
	pid_t kid = fork();
	if (kid == 0) {
		struct utsname c;
		if (uname(&c) || strcmp(c.nodename, "via-proc") || strcmp(c.domainname, "lan"))
			_exit(1);
		if (setresuid(65534, 65534, 65534))
			_exit(2);
		errno = 0;
		if (sethostname("nope", 4) != -1 || errno != EPERM)
			_exit(3);
		errno = 0;
		if (setdomainname("nope", 4) != -1 || errno != EPERM)
			_exit(4);
		errno = 0;
		if (sethostname(long_name, 65) != -1 || errno != EPERM) /* EPERM comes first */
			_exit(5);
		_exit(0);
	}
	int status;
	CHECK_EQ(waitpid(kid, &status, 0), kid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK_STREQ(u.nodename, "via-proc");

	return check_done();
}
