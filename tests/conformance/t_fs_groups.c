/*
 * t_fs_groups: supplementary groups count in permission checks, as the primary group does. A
 * child running as uid 1000, gid 2000 with supplementary group 3000 may read a 0640 file of
 * group 3000 (and not once it drops its supplementary groups), search a 0710 directory of group
 * 3000, give its own file to group 3000 but not to group 4000, and keep the setgid bit when it
 * chmods a file of group 3000. Natively under `unshare -r`, where these ids are not mapped,
 * there is nothing to test; in the sandbox they always are.
 */
#include "check.h"
#include "scratch.h"
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define USER 1000
#define PRIMARY 2000
#define SUPPLEMENTARY 3000
#define OTHER 4000

static void make_file(const char *path, mode_t mode, gid_t gid)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, mode);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "data", 4), 4);
	close(fd);
	CHECK_EQ(chown(path, 0, gid), 0);
	CHECK_EQ(chmod(path, mode), 0);
}

/* Runs as USER with groups PRIMARY and SUPPLEMENTARY; returns its failure count. */
static int member_checks(void)
{
	struct stat st;
	int fd = open("group-readable", O_RDONLY);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(access("group-readable", R_OK), 0);
	CHECK_ERR(open("group-readable", O_WRONLY), EACCES);
	CHECK_EQ(stat("group-dir/inside", &st), 0); /* search through the group's x bit */
	CHECK_ERR(open("group-dir/inside", O_RDONLY), EACCES); /* the file itself is 0600 */

	fd = open("mine", O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(chown("mine", -1, SUPPLEMENTARY), 0);
	CHECK_EQ(stat("mine", &st), 0);
	CHECK_EQ(st.st_gid, SUPPLEMENTARY);
	CHECK_ERR(chown("mine", -1, OTHER), EPERM);
	/* setgid survives a chmod by a member of the file's group. */
	CHECK_EQ(chmod("mine", 02755), 0);
	CHECK_EQ(stat("mine", &st), 0);
	CHECK_EQ(st.st_mode & 07777, 02755);
	maybe_save(); /* the groups are part of the task */
	fd = open("group-readable", O_RDONLY);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	return check_failures;
}

static int nonmember_checks(void)
{
	CHECK_ERR(open("group-readable", O_RDONLY), EACCES);
	CHECK_ERR(access("group-readable", R_OK), EACCES);
	CHECK_ERR(stat("group-dir/inside", &(struct stat){0}), EACCES);
	return check_failures;
}

static void run_as(const gid_t *groups, int ngroups, int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		check_failures = 0; /* the child reports only its own */
		if (setgroups(ngroups, groups) != 0 || setgid(PRIMARY) != 0 || setuid(USER) != 0)
			_exit(errno == EINVAL || errno == EPERM ? 100 : 101);
		_exit(fn());
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	if (WEXITSTATUS(status) == 100 && !in_sandbox())
		return; /* natively under `unshare -r`: the ids are not mapped */
	CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
	static const gid_t member[] = {SUPPLEMENTARY};

	scratch_enter("t_fs_groups");
	CHECK_EQ(chmod(".", 0777), 0);
	make_file("group-readable", 0640, SUPPLEMENTARY);
	CHECK_EQ(mkdir("group-dir", 0710), 0);
	CHECK_EQ(chown("group-dir", 0, SUPPLEMENTARY), 0);
	make_file("group-dir/inside", 0600, 0);

	run_as(member, 1, member_checks);
	run_as(NULL, 0, nonmember_checks);

	scratch_leave();
	return check_done();
}
