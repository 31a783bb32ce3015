/*
 * t_stat: fstat/stat/lstat/newfstatat agree with each other and with read(): file types
 * (directory, regular file, symlink followed or not), sizes, inode numbers; AT_EMPTY_PATH
 * stats the fd itself; missing paths, bad fds and bad pointers fail as Linux does.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/stat.h>

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode &&
	       a->st_size == b->st_size && a->st_nlink == b->st_nlink;
}

int main(void)
{
	struct stat st, st2, lst;
	char buf[8192];

	CHECK_EQ(syscall(SYS_stat, "/etc", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK(st.st_nlink >= 2);
	CHECK_EQ(syscall(SYS_stat, "/", &st), 0);
	CHECK(S_ISDIR(st.st_mode));

	/* A regular file: stat, fstat and the bytes read agree. */
	CHECK_EQ(syscall(SYS_stat, "/etc/passwd", &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK(st.st_nlink >= 1);
	CHECK(st.st_blksize > 0);
	int fd = open("/etc/passwd", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(syscall(SYS_fstat, fd, &st2), 0);
	CHECK(same_file(&st, &st2));
	CHECK_EQ(read(fd, buf, sizeof(buf)), st.st_size);
	CHECK_EQ(syscall(SYS_lstat, "/etc/passwd", &lst), 0);
	CHECK(same_file(&st, &lst));
	maybe_save();
	CHECK_EQ(syscall(SYS_fstat, fd, &st2), 0);
	CHECK(same_file(&st, &st2));

	/* AT_EMPTY_PATH with an empty path stats the descriptor. */
	CHECK_EQ(syscall(SYS_newfstatat, fd, "", &st2, AT_EMPTY_PATH), 0);
	CHECK(same_file(&st, &st2));
	CHECK_ERR(syscall(SYS_newfstatat, fd, "", &st2, 0), ENOENT);
	close(fd);

	/* A symlink: lstat sees the link, stat the busybox binary behind it. */
	struct stat bb;
	CHECK_EQ(syscall(SYS_stat, "/bin/busybox", &bb), 0);
	CHECK(S_ISREG(bb.st_mode));
	CHECK(bb.st_mode & 0111);
	CHECK_EQ(syscall(SYS_lstat, "/bin/sh", &lst), 0);
	CHECK(S_ISLNK(lst.st_mode));
	CHECK(lst.st_size > 0);
	CHECK(lst.st_ino != bb.st_ino);
	CHECK_EQ(syscall(SYS_stat, "/bin/sh", &st), 0);
	CHECK(same_file(&st, &bb));
	CHECK_EQ(syscall(SYS_newfstatat, AT_FDCWD, "/bin/sh", &st2, AT_SYMLINK_NOFOLLOW), 0);
	CHECK(same_file(&st2, &lst));
	CHECK_EQ(syscall(SYS_newfstatat, AT_FDCWD, "/bin/sh", &st2, 0), 0);
	CHECK(same_file(&st2, &bb));

	/* newfstatat relative to a directory fd. */
	int dfd = open("/bin", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_EQ(syscall(SYS_newfstatat, dfd, "busybox", &st2, 0), 0);
	CHECK(same_file(&st2, &bb));
	CHECK_EQ(fstatat(dfd, "sh", &st2, AT_SYMLINK_NOFOLLOW), 0);
	CHECK(S_ISLNK(st2.st_mode));
	CHECK_ERR(syscall(SYS_newfstatat, dfd, "sh", &st2, 0x40000000), EINVAL);
	close(dfd);

	/* The libc wrappers agree with the raw calls. */
	CHECK_EQ(stat("/etc/group", &st), 0);
	CHECK_EQ(syscall(SYS_stat, "/etc/group", &st2), 0);
	CHECK(same_file(&st, &st2));
	CHECK_EQ(lstat("/bin/sh", &st), 0);
	CHECK(S_ISLNK(st.st_mode));

	CHECK_ERR(syscall(SYS_stat, "/etc/nonexistent", &st), ENOENT);
	CHECK_ERR(syscall(SYS_stat, "", &st), ENOENT);
	CHECK_ERR(syscall(SYS_stat, "/etc/passwd/x", &st), ENOTDIR);
	CHECK_ERR(syscall(SYS_fstat, 999, &st), EBADF);
	CHECK_ERR(syscall(SYS_fstat, -1, &st), EBADF);
	CHECK_ERR(syscall(SYS_stat, "/etc/passwd", BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_stat, BAD_PTR, &st), EFAULT);
	CHECK_ERR(syscall(SYS_fstat, 1, BAD_PTR), EFAULT);
	return check_done();
}
