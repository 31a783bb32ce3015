/*
 * t_fs_perms: the permission checks an unprivileged process meets under /tmp. A child that
 * became uid/gid 65534 is refused reading a 0600 file and writing a 0644 one (EACCES),
 * changing modes, owners and explicit times of files it does not own (EPERM), adding or
 * removing entries in a directory it cannot write (EACCES), searching a 0700 directory, and
 * removing or renaming others' files in a sticky directory (EPERM). Natively under
 * `unshare -r`, where uid 65534 is not mapped, there is nothing to test; in the sandbox it is
 * always mapped.
 */
#include "check.h"
#include "scratch.h"
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define NOBODY 65534

static void make_file(const char *path, mode_t mode)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, mode);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	close(fd);
	CHECK_EQ(chmod(path, mode), 0);
}

/* Runs in a child as uid/gid NOBODY: returns its own failure count as exit status. */
static int unprivileged_checks(void)
{
	struct stat st;
	struct timespec ts[2] = {{1, 0}, {1, 0}};

	CHECK_ERR(open("secret", O_RDONLY), EACCES);
	CHECK_ERR(access("secret", R_OK), EACCES);
	CHECK_EQ(access("secret", F_OK), 0);
	CHECK_EQ(stat("secret", &st), 0); /* the directory is searchable */
	CHECK_ERR(open("readable", O_WRONLY), EACCES);
	int fd = open("readable", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_ERR(fchmod(fd, 0666), EPERM);
	close(fd);
	CHECK_ERR(chmod("readable", 0666), EPERM);
	CHECK_ERR(chown("readable", NOBODY, NOBODY), EPERM);
	CHECK_ERR(utimensat(AT_FDCWD, "readable", ts, 0), EPERM);
	CHECK_ERR(utimensat(AT_FDCWD, "readable", NULL, 0), EACCES);
	CHECK_ERR(truncate("readable", 0), EACCES);
	/* The directory itself is root's 0755: no entries can be added or removed. */
	CHECK_ERR(open("mine", O_CREAT | O_WRONLY, 0644), EACCES);
	CHECK_ERR(mkdir("mydir", 0755), EACCES);
	CHECK_ERR(unlink("readable"), EACCES);
	CHECK_ERR(rename("readable", "x"), EACCES);
	CHECK_ERR(symlink("readable", "x"), EACCES);
	/* A 0700 directory cannot be searched or listed. */
	CHECK_ERR(stat("closed/inside", &st), EACCES);
	CHECK_ERR(open("closed", O_RDONLY | O_DIRECTORY), EACCES);
	CHECK_ERR(chdir("closed"), EACCES);
	/* In a world-writable sticky directory: own files yes, others' files no. */
	fd = open("pub/mine", O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(stat("pub/mine", &st), 0);
	CHECK_EQ(st.st_uid, NOBODY);
	CHECK_EQ(st.st_gid, NOBODY);
	CHECK_EQ(chmod("pub/mine", 0640), 0); /* the owner may */
	CHECK_ERR(unlink("pub/roots"), EPERM);
	CHECK_ERR(rename("pub/roots", "pub/x"), EPERM);
	CHECK_EQ(rename("pub/mine", "pub/mine2"), 0);
	CHECK_EQ(unlink("pub/mine2"), 0);
	return check_failures;
}

static void test_unprivileged(void)
{
	make_file("secret", 0600);
	make_file("readable", 0644);
	CHECK_EQ(chmod("closed", 0700), 0);
	CHECK_EQ(mkdir("pub", 0), 0);
	CHECK_EQ(chmod("pub", 01777), 0);
	make_file("pub/roots", 0666);

	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0;
		/*
		 * Dropping supplementary groups is best effort: no file here grants anything to
		 * group root. Natively under `unshare -r` NOBODY is not mapped (EINVAL): skip.
		 */
		setgroups(0, NULL);
		if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0) {
			if (errno == EINVAL && !in_sandbox())
				_exit(0);
			CHECK_FAIL_("setgid/setuid(%d) failed: %s", NOBODY, strerror(errno));
			_exit(1);
		}
		_exit(unprivileged_checks());
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_EQ(access("pub/roots", F_OK), 0);
}

int main(void)
{
	scratch_enter("t_fs_perms");
	CHECK_EQ(mkdir("closed", 0700), 0);
	make_file("closed/inside", 0644);
	maybe_save();
	test_unprivileged();

	scratch_leave();
	return check_done();
}
