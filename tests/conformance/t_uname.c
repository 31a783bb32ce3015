/*
 * t_uname: uname(2) reports Linux on x86_64, every field is a NUL-terminated string within its
 * 65 bytes, the release looks like a kernel version, a bad buffer gives EFAULT, and all of it
 * is the same after a checkpoint and restore.
 */
#include "check.h"
#include <ctype.h>
#include <sys/utsname.h>

static int terminated(const char *field)
{
	return memchr(field, '\0', 65) != NULL;
}

int main(void)
{
	struct utsname u;

	memset(&u, 'X', sizeof(u));
	CHECK_EQ(syscall(SYS_uname, &u), 0);
	CHECK(terminated(u.sysname));
	CHECK(terminated(u.nodename));
	CHECK(terminated(u.release));
	CHECK(terminated(u.version));
	CHECK(terminated(u.machine));
	CHECK(terminated(u.domainname));
	CHECK_STREQ(u.sysname, "Linux");
	CHECK_STREQ(u.machine, "x86_64");
	CHECK(isdigit((unsigned char)u.release[0]));
	CHECK(strchr(u.release, '.') != NULL);
	CHECK(strlen(u.version) > 0);

	maybe_save(); /* the sandbox's host name and kernel identity */
	struct utsname v;
	CHECK_EQ(uname(&v), 0);
	CHECK_STREQ(v.sysname, u.sysname);
	CHECK_STREQ(v.nodename, u.nodename);
	CHECK_STREQ(v.release, u.release);
	CHECK_STREQ(v.version, u.version);
	CHECK_STREQ(v.machine, u.machine);
	CHECK_STREQ(v.domainname, u.domainname);

	CHECK_ERR(syscall(SYS_uname, BAD_PTR), EFAULT);
	return check_done();
}
