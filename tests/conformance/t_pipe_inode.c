/*
 * t_pipe_inode: pipes and sockets have an inode in pipefs and sockfs, as on Linux: fstatfs
 * names PIPEFS_MAGIC and SOCKFS_MAGIC (an eventfd ANON_INODE_FS_MAGIC); fchmod and fchown
 * change what fstat shows of both ends of a pipe and of a socket; flock and fcntl record locks
 * are kept on that inode, conflict between the two ends of a pipe and between processes, and
 * all of it, locks included, survives a checkpoint.
 */
#include "check.h"
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <netinet/in.h>

#define PIPEFS_MAGIC 0x50495045
#define SOCKFS_MAGIC 0x534F434B
#define ANON_INODE_FS_MAGIC 0x09041934
#define K_ST_VALID 0x20

static void check_fs(int fd, long magic)
{
	struct statfs s;

	memset(&s, 0x55, sizeof(s));
	CHECK_EQ(fstatfs(fd, &s), 0);
	CHECK_EQ(s.f_type, magic);
	CHECK_EQ(s.f_bsize, 4096);
	CHECK_EQ(s.f_frsize, 4096);
	CHECK_EQ(s.f_namelen, 255);
	CHECK_EQ(s.f_blocks, 0);
	CHECK_EQ(s.f_files, 0);
	CHECK_EQ(s.f_flags & K_ST_VALID, K_ST_VALID);
}

static mode_t mode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_mode : 0;
}

/* In a child (another process: POSIX locks of one process never conflict): the type of the
 * lock F_GETLK finds over bytes [0, 10) of FD for a would-be lock of TYPE, and its pid. */
static int getlk_in_child(int fd, short type, pid_t *owner)
{
	int p[2];
	struct flock fl = {0};

	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		fl.l_type = type;
		fl.l_whence = SEEK_SET;
		fl.l_len = 10;
		if (fcntl(fd, F_GETLK, &fl) != 0)
			fl.l_type = -1;
		if (write(p[1], &fl, sizeof(fl)) != sizeof(fl))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(read(p[0], &fl, sizeof(fl)), sizeof(fl));
	close(p[0]);
	waitpid(pid, NULL, 0);
	*owner = fl.l_pid;
	return fl.l_type;
}

int main(void)
{
	int pf[2], sv[2];
	CHECK_EQ(pipe(pf), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	int in = socket(AF_INET, SOCK_DGRAM, 0);
	int ev = eventfd(0, 0);
	CHECK(in >= 0 && ev >= 0);

	check_fs(pf[0], PIPEFS_MAGIC);
	check_fs(pf[1], PIPEFS_MAGIC);
	check_fs(sv[0], SOCKFS_MAGIC);
	check_fs(in, SOCKFS_MAGIC);
	check_fs(ev, ANON_INODE_FS_MAGIC);

	/* fchmod and fchown: one inode for both ends of the pipe. */
	struct stat before, st;
	CHECK_EQ(fstat(pf[0], &before), 0);
	CHECK_EQ(before.st_mode, S_IFIFO | 0600);
	CHECK_EQ(fchmod(pf[0], 0640), 0);
	CHECK_EQ(mode_of(pf[0]), S_IFIFO | 0640);
	CHECK_EQ(mode_of(pf[1]), S_IFIFO | 0640);
	CHECK_EQ(fstat(pf[1], &st), 0);
	CHECK(st.st_ctim.tv_sec > before.st_ctim.tv_sec ||
	      (st.st_ctim.tv_sec == before.st_ctim.tv_sec &&
	       st.st_ctim.tv_nsec >= before.st_ctim.tv_nsec));
	CHECK_EQ(fchown(pf[1], -1, -1), 0);
	CHECK_EQ(fchown(pf[1], 1234, 5678), 0); /* root's */
	CHECK_EQ(fstat(pf[0], &st), 0);
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(st.st_gid, 5678);
	CHECK_EQ(st.st_ino, before.st_ino);

	CHECK_EQ(mode_of(sv[0]), S_IFSOCK | 0777);
	CHECK_EQ(fchmod(sv[0], 0600), 0);
	CHECK_EQ(mode_of(sv[0]), S_IFSOCK | 0600);
	CHECK_EQ(mode_of(sv[1]), S_IFSOCK | 0777); /* the peer is another inode */
	CHECK_EQ(fchown(in, 42, 43), 0);
	CHECK_EQ(fstat(in, &st), 0);
	CHECK_EQ(st.st_uid, 42);
	CHECK_EQ(st.st_gid, 43);

	/* flock: the ends are two open file descriptions of one inode. */
	CHECK_EQ(flock(pf[0], LOCK_EX | LOCK_NB), 0);
	CHECK_ERR(flock(pf[1], LOCK_SH | LOCK_NB), EWOULDBLOCK);
	CHECK_EQ(flock(sv[0], LOCK_SH), 0);
	CHECK_EQ(flock(sv[1], LOCK_EX | LOCK_NB), 0); /* another socket */

	/* Record locks: a write lock needs the write end (EBADF on the read end). */
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	CHECK_ERR(fcntl(pf[0], F_SETLK, &fl), EBADF);
	CHECK_EQ(fcntl(pf[1], F_SETLK, &fl), 0);
	fl.l_type = F_RDLCK;
	fl.l_start = 100;
	CHECK_EQ(fcntl(pf[0], F_SETLK, &fl), 0);
	fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET};
	CHECK_EQ(fcntl(sv[0], F_SETLK, &fl), 0);
	pid_t owner = 0;
	CHECK_EQ(getlk_in_child(pf[0], F_RDLCK, &owner), F_WRLCK);
	CHECK_EQ(owner, getpid());
	CHECK_EQ(getlk_in_child(sv[0], F_RDLCK, &owner), F_WRLCK);

	/* Not root: a new pipe is its maker's; another's inode may not be changed. */
	pid_t kid = fork();
	if (kid == 0) {
		int q[2];
		if (setgid(100) || setuid(1000) || pipe(q))
			_exit(10);
		if (fstat(q[1], &st) || st.st_uid != 1000 || st.st_gid != 100)
			_exit(11);
		if (fchmod(q[0], 0604) || mode_of(q[1]) != (S_IFIFO | 0604))
			_exit(12);
		if (fchown(q[0], 0, -1) == 0 || errno != EPERM)
			_exit(13);
		if (fchmod(pf[0], 0666) == 0 || errno != EPERM)
			_exit(14);
		if (fchown(q[0], 1000, 100) != 0) /* to what it is: allowed */
			_exit(15);
		_exit(0);
	}
	int status;
	CHECK_EQ(waitpid(kid, &status, 0), kid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);

	maybe_save();
	CHECK_EQ(mode_of(pf[1]), S_IFIFO | 0640);
	CHECK_EQ(fstat(pf[1], &st), 0);
	CHECK_EQ(st.st_uid, 1234);
	CHECK_EQ(mode_of(sv[0]), S_IFSOCK | 0600);
	CHECK_EQ(mode_of(sv[1]), S_IFSOCK | 0777);
	CHECK_EQ(fstat(in, &st), 0);
	CHECK_EQ(st.st_uid, 42);
	CHECK_ERR(flock(pf[1], LOCK_SH | LOCK_NB), EWOULDBLOCK);
	CHECK_EQ(getlk_in_child(pf[1], F_WRLCK, &owner), F_WRLCK);
	CHECK_EQ(owner, getpid());
	CHECK_EQ(getlk_in_child(sv[0], F_RDLCK, &owner), F_WRLCK);
	check_fs(pf[0], PIPEFS_MAGIC);

	/* Unlocked, the other end may lock; the pipe still works. */
	CHECK_EQ(flock(pf[0], LOCK_UN), 0);
	CHECK_EQ(flock(pf[1], LOCK_SH | LOCK_NB), 0);
	fl = (struct flock){.l_type = F_UNLCK, .l_whence = SEEK_SET};
	CHECK_EQ(fcntl(pf[1], F_SETLK, &fl), 0);
	CHECK_EQ(getlk_in_child(pf[1], F_WRLCK, &owner), F_UNLCK);
	CHECK_EQ(write(pf[1], "x", 1), 1);
	char c;
	CHECK_EQ(read(pf[0], &c, 1), 1);

	close(pf[0]);
	close(pf[1]);
	close(sv[0]);
	close(sv[1]);
	close(in);
	close(ev);
	return check_done();
}
