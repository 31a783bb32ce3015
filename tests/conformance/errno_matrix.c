/*
 * errno_matrix: the error cases syscalls' man pages list, one line per (syscall, case) with
 * what the call returned ("ok" or the errno's name), for errno-matrix.sh to compare between
 * Linux and the sandbox. Descriptor calls are tried on every kind of descriptor (closed, a
 * pipe's two ends, a FIFO, a socket, O_PATH, a directory, read-only and write-only files,
 * /dev/null when there is one); path calls on missing, misplaced, too long and looping names,
 * bad pointers and bad flags; permission cases as an ordinary user (uid 65534). Every call is
 * made so that it cannot block. Run as root in a scratch directory it may fill (argv[1]).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define BAD ((void *)1)

static void report(const char *call, const char *kind, long r)
{
	int e = errno;

	if (r >= 0)
		printf("%s %s ok\n", call, kind);
	else
		printf("%s %s %s\n", call, kind, strerrorname_np(e) ? strerrorname_np(e) : "?");
	fflush(stdout);
}

#define TRY(call, kind, expr)                                                                      \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = (long)(expr);                                                            \
		report(call, kind, r_ == -1 || (void *)r_ == MAP_FAILED ? -1 : r_);                \
	} while (0)

/* Descriptor kinds, made afresh for each call. */
enum kind {
	K_CLOSED,
	K_PIPE_R,
	K_PIPE_W,
	K_FIFO,
	K_SOCKET,
	K_OPATH,
	K_DIR,
	K_RDONLY,
	K_WRONLY,
	K_DEVNULL,
	K_N
};
static const char *kind_names[K_N] = {"closed", "pipe-r", "pipe-w", "fifo",   "socket",
				      "o_path", "dir",	  "rdonly", "wronly", "devnull"};
static int extra_fd = -1;

static int make(enum kind k)
{
	int p[2], fd = -1;

	extra_fd = -1;
	switch (k) {
	case K_CLOSED:
		return 987;
	case K_PIPE_R:
	case K_PIPE_W:
		if (pipe2(p, O_NONBLOCK))
			return -1;
		extra_fd = k == K_PIPE_R ? p[1] : p[0];
		return k == K_PIPE_R ? p[0] : p[1];
	case K_FIFO:
		return open("fifo", O_RDWR | O_NONBLOCK);
	case K_SOCKET:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p))
			return -1;
		extra_fd = p[1];
		return p[0];
	case K_OPATH:
		return open("file", O_PATH);
	case K_DIR:
		return open("dir", O_RDONLY | O_DIRECTORY);
	case K_RDONLY:
		return open("file", O_RDONLY);
	case K_WRONLY:
		return open("file", O_WRONLY);
	case K_DEVNULL:
		fd = open("/dev/null", O_RDWR);
		return fd;
	default:
		return -1;
	}
}

static void done(int fd)
{
	if (fd >= 0 && fd != 987)
		close(fd);
	if (extra_fd >= 0)
		close(extra_fd);
}

typedef long (*fd_call)(int fd);

static char buf[4096];

static long c_read(int fd)
{
	return read(fd, buf, 1);
}
static long c_write(int fd)
{
	return write(fd, "x", 1);
}
static long c_pread(int fd)
{
	return pread(fd, buf, 1, 0);
}
static long c_pwrite(int fd)
{
	return pwrite(fd, "x", 1, 0);
}
static long c_readv_bad(int fd)
{
	return syscall(SYS_readv, fd, BAD, 1);
}
static long c_lseek(int fd)
{
	return lseek(fd, 0, SEEK_CUR);
}
static long c_lseek_bad_whence(int fd)
{
	return lseek(fd, 0, 77);
}
static long c_fstat(int fd)
{
	struct stat st;
	return fstat(fd, &st);
}
static long c_fstat_bad(int fd)
{
	return syscall(SYS_fstat, fd, BAD);
}
static long c_fstatfs(int fd)
{
	struct statfs st;
	return fstatfs(fd, &st);
}
static long c_ftruncate(int fd)
{
	return ftruncate(fd, 0);
}
static long c_fsync(int fd)
{
	return fsync(fd);
}
static long c_fdatasync(int fd)
{
	return fdatasync(fd);
}
static long c_getdents(int fd)
{
	return syscall(SYS_getdents64, fd, buf, sizeof(buf));
}
static long c_getdents_bad(int fd)
{
	return syscall(SYS_getdents64, fd, BAD, sizeof(buf));
}
static long c_fchdir(int fd)
{
	int here = open(".", O_RDONLY | O_DIRECTORY);
	long r = fchdir(fd);
	int e = errno;
	if (!r)
		fchdir(here);
	close(here);
	errno = e;
	return r;
}
static long c_fchmod(int fd)
{
	return fchmod(fd, 0644);
}
static long c_fchown(int fd)
{
	return fchown(fd, 0, 0);
}
static long c_dup3_same(int fd)
{
	return dup3(fd, fd, 0);
}
static long c_dup2_bad_target(int fd)
{
	return dup2(fd, -1);
}
static long c_dup3_bad_flags(int fd)
{
	return dup3(fd, 900, 0x4);
}
static long c_fcntl_getfl(int fd)
{
	return fcntl(fd, F_GETFL);
}
static long c_fcntl_bad_cmd(int fd)
{
	return fcntl(fd, 9999);
}
static long c_fcntl_setlk(int fd)
{
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
	return fcntl(fd, F_SETLK, &fl);
}
static long c_fcntl_setlk_wr(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	return fcntl(fd, F_SETLK, &fl);
}
static long c_flock(int fd)
{
	return flock(fd, LOCK_SH | LOCK_NB);
}
static long c_flock_bad(int fd)
{
	return flock(fd, 77);
}
static long c_ioctl_fionread(int fd)
{
	int n;
	return ioctl(fd, FIONREAD, &n);
}
static long c_ioctl_tcgets(int fd)
{
	struct termios t;
	return ioctl(fd, TCGETS, &t);
}
static long c_mmap_ro_private(int fd)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	return p == MAP_FAILED ? -1 : 0;
}
static long c_mmap_rw_shared(int fd)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	return p == MAP_FAILED ? -1 : 0;
}
static long c_fadvise(int fd)
{
	int e = posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
	errno = e;
	return e ? -1 : 0;
}
static long c_fallocate(int fd)
{
	return fallocate(fd, 0, 0, 4096);
}
static long c_sync_file_range(int fd)
{
	return sync_file_range(fd, 0, 0, 0);
}
static long c_openat_rel(int fd)
{
	return openat(fd, "x", O_RDONLY);
}
static long c_mkdirat(int fd)
{
	return mkdirat(fd, "newdir", 0755);
}
static long c_fstatat_empty(int fd)
{
	struct stat st;
	return fstatat(fd, "", &st, 0);
}
static long c_fstatat_empty_ok(int fd)
{
	struct stat st;
	return fstatat(fd, "", &st, AT_EMPTY_PATH);
}
static long c_sendfile_in(int fd)
{
	int p[2];
	if (pipe2(p, O_NONBLOCK))
		return -2;
	long r = sendfile(p[1], fd, NULL, 1);
	int e = errno;
	close(p[0]), close(p[1]);
	errno = e;
	return r;
}
static long c_sendfile_out(int fd)
{
	int in = open("file", O_RDONLY);
	long r = sendfile(fd, in, NULL, 1);
	int e = errno;
	close(in);
	errno = e;
	return r;
}
static long c_splice_in(int fd)
{
	int p[2];
	if (pipe2(p, O_NONBLOCK))
		return -2;
	long r = splice(fd, NULL, p[1], NULL, 1, SPLICE_F_NONBLOCK);
	int e = errno;
	close(p[0]), close(p[1]);
	errno = e;
	return r;
}
static long c_poll(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	long r = poll(&p, 1, 0);
	return r < 0 ? r : p.revents;
}
static long c_accept(int fd)
{
	return accept(fd, NULL, NULL);
}
static long c_listen(int fd)
{
	return listen(fd, 1);
}
static long c_getsockopt(int fd)
{
	int v;
	socklen_t l = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l);
}
static long c_shutdown(int fd)
{
	return shutdown(fd, SHUT_RD);
}
static long c_fgetxattr(int fd)
{
	return fgetxattr(fd, "user.none", buf, sizeof(buf));
}
static long c_close(int fd)
{
	return close(fd);
}

static const struct {
	const char *name;
	fd_call fn;
} fd_calls[] = {
    {"read", c_read},
    {"write", c_write},
    {"pread64", c_pread},
    {"pwrite64", c_pwrite},
    {"readv(bad-iov)", c_readv_bad},
    {"lseek", c_lseek},
    {"lseek(bad-whence)", c_lseek_bad_whence},
    {"fstat", c_fstat},
    {"fstat(bad-buf)", c_fstat_bad},
    {"fstatfs", c_fstatfs},
    {"ftruncate", c_ftruncate},
    {"fsync", c_fsync},
    {"fdatasync", c_fdatasync},
    {"getdents64", c_getdents},
    {"getdents64(bad-buf)", c_getdents_bad},
    {"fchdir", c_fchdir},
    {"fchmod", c_fchmod},
    {"fchown", c_fchown},
    {"dup3(same)", c_dup3_same},
    {"dup2(-1)", c_dup2_bad_target},
    {"dup3(bad-flags)", c_dup3_bad_flags},
    {"fcntl(F_GETFL)", c_fcntl_getfl},
    {"fcntl(bad-cmd)", c_fcntl_bad_cmd},
    {"fcntl(F_SETLK,rd)", c_fcntl_setlk},
    {"fcntl(F_SETLK,wr)", c_fcntl_setlk_wr},
    {"flock", c_flock},
    {"flock(bad-op)", c_flock_bad},
    {"ioctl(FIONREAD)", c_ioctl_fionread},
    {"ioctl(TCGETS)", c_ioctl_tcgets},
    {"mmap(ro,private)", c_mmap_ro_private},
    {"mmap(rw,shared)", c_mmap_rw_shared},
    {"fadvise64", c_fadvise},
    {"fallocate", c_fallocate},
    {"sync_file_range", c_sync_file_range},
    {"openat(fd,rel)", c_openat_rel},
    {"mkdirat(fd,rel)", c_mkdirat},
    {"newfstatat(fd,\"\")", c_fstatat_empty},
    {"newfstatat(fd,\"\",EMPTY_PATH)", c_fstatat_empty_ok},
    {"sendfile(in)", c_sendfile_in},
    {"sendfile(out)", c_sendfile_out},
    {"splice(in)", c_splice_in},
    {"poll", c_poll},
    {"accept", c_accept},
    {"listen", c_listen},
    {"getsockopt", c_getsockopt},
    {"shutdown", c_shutdown},
    {"fgetxattr", c_fgetxattr},
    {"close", c_close},
};

static void fd_matrix(void)
{
	for (size_t c = 0; c < sizeof(fd_calls) / sizeof(fd_calls[0]); c++)
		for (int k = 0; k < K_N; k++) {
			int fd = make((enum kind)k);
			if (fd < 0) {
				if (k == K_DEVNULL)
					continue; /* a chroot without /dev */
				printf("%s %s setup-failed\n", fd_calls[c].name, kind_names[k]);
				continue;
			}
			errno = 0;
			long r = fd_calls[c].fn(fd);
			report(fd_calls[c].name, kind_names[k], r < 0 ? -1 : 0);
			if (fd_calls[c].fn != c_close)
				done(fd);
			else if (extra_fd >= 0)
				close(extra_fd);
			rmdir("dir/newdir");
			ftruncate(open("file", O_WRONLY), 0); /* the descriptor leaks: fine */
		}
}

static void path_cases(void)
{
	char longname[NAME_MAX + 2], longpath[PATH_MAX + 10];
	struct stat st;

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	memset(longpath, 'b', sizeof(longpath) - 1);
	for (size_t i = 100; i < sizeof(longpath) - 1; i += 100)
		longpath[i] = '/';
	longpath[sizeof(longpath) - 1] = 0;

	TRY("open", "missing", open("missing", O_RDONLY));
	TRY("open", "file-as-dir", open("file/x", O_RDONLY));
	TRY("open", "name-too-long", open(longname, O_RDONLY));
	TRY("open", "path-too-long", open(longpath, O_RDONLY));
	TRY("open", "loop", open("loop", O_RDONLY));
	TRY("open", "nofollow-link", open("link", O_RDONLY | O_NOFOLLOW));
	TRY("open", "dir-for-write", open("dir", O_WRONLY));
	TRY("open", "dir-creat", open("dir", O_RDONLY | O_CREAT, 0644));
	TRY("open", "excl-exists", open("file", O_RDONLY | O_CREAT | O_EXCL, 0644));
	TRY("open", "directory-on-file", open("file", O_RDONLY | O_DIRECTORY));
	TRY("open", "bad-path", syscall(SYS_openat, AT_FDCWD, BAD, O_RDONLY));
	TRY("open", "empty", open("", O_RDONLY));
	TRY("open", "tmpfile-bad-mode", open("dir", O_TMPFILE | O_RDONLY, 0600));
	TRY("open", "bad-dirfd", openat(987, "x", O_RDONLY));
	TRY("mkdir", "exists", mkdir("dir", 0755));
	TRY("mkdir", "missing-parent", mkdir("missing/x", 0755));
	TRY("mkdir", "under-file", mkdir("file/x", 0755));
	TRY("rmdir", "not-empty", rmdir("full"));
	TRY("rmdir", "file", rmdir("file"));
	TRY("rmdir", "dot", rmdir("dir/."));
	TRY("rmdir", "missing", rmdir("missing"));
	TRY("unlink", "dir", unlink("dir"));
	TRY("unlink", "missing", unlink("missing"));
	TRY("unlinkat", "bad-flags", unlinkat(AT_FDCWD, "file", 0x1));
	TRY("unlinkat", "removedir-file", unlinkat(AT_FDCWD, "file", AT_REMOVEDIR));
	TRY("rename", "dir-over-file", rename("dir", "file"));
	TRY("rename", "file-over-dir", rename("file", "dir"));
	TRY("rename", "into-itself", rename("full", "full/sub"));
	TRY("rename", "over-nonempty", rename("dir", "full"));
	TRY("renameat2", "noreplace-exists",
	    syscall(SYS_renameat2, AT_FDCWD, "file", AT_FDCWD, "file2", 1));
	TRY("renameat2", "bad-flags",
	    syscall(SYS_renameat2, AT_FDCWD, "file", AT_FDCWD, "x", 0x100));
	TRY("link", "dir", link("dir", "dirlink"));
	TRY("link", "exists", link("file", "file2"));
	TRY("symlink", "exists", symlink("x", "file"));
	TRY("symlink", "empty-target", symlink("", "newlink"));
	TRY("readlink", "not-link", readlink("file", buf, sizeof(buf)));
	TRY("readlink", "zero-size", readlink("link", buf, 0));
	TRY("stat", "missing", stat("missing", &st));
	TRY("stat", "bad-buf", syscall(SYS_newfstatat, AT_FDCWD, "file", BAD, 0));
	TRY("fstatat", "bad-flags", fstatat(AT_FDCWD, "file", &st, 0x4));
	TRY("chdir", "file", chdir("file"));
	TRY("chdir", "missing", chdir("missing"));
	TRY("truncate", "dir", truncate("dir", 0));
	TRY("truncate", "negative", truncate("file", -1));
	TRY("access", "bad-mode", access("file", 0x10));
	TRY("faccessat", "bad-flags", faccessat(AT_FDCWD, "file", F_OK, 0x4));
	TRY("utimensat", "bad-nsec",
	    utimensat(AT_FDCWD, "file", (struct timespec[]){{0, 2000000000}, {0, 0}}, 0));
	TRY("mknod", "exists", mknod("file", S_IFIFO | 0600, 0));
	TRY("mknod", "bad-type", mknod("newnode", 0170000 | 0600, 0));
	TRY("chmod", "missing", chmod("missing", 0644));
	TRY("getcwd", "small", syscall(SYS_getcwd, buf, 1));
	TRY("getcwd", "bad-buf", syscall(SYS_getcwd, BAD, sizeof(buf)));

	/* Calls without a path. */
	int p[2];
	TRY("pipe2", "bad-flags", pipe2(p, 0x1));
	TRY("pipe2", "bad-ptr", syscall(SYS_pipe2, BAD, 0));
	TRY("dup", "closed", dup(987));
	TRY("close", "negative", close(-1));
	TRY("mmap", "zero-len", mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	TRY("mmap", "no-type", mmap(NULL, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0));
	TRY("mmap", "unaligned-off",
	    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, open("file", O_RDONLY), 1));
	TRY("munmap", "unaligned", munmap((void *)0x10001, 4096));
	TRY("mprotect", "unaligned", mprotect((void *)0x10001, 4096, PROT_READ));
	TRY("mprotect", "unmapped", mprotect((void *)0x10000, 4096, PROT_READ));
	TRY("kill", "bad-signal", kill(getpid(), 99));
	TRY("kill", "missing", kill(999999, 0));
	TRY("wait4", "no-child", wait4(-1, NULL, WNOHANG, NULL));
	TRY("wait4", "bad-options", wait4(-1, NULL, 0x40000000, NULL));
	TRY("rt_sigaction", "sigkill", sigaction(SIGKILL, &(struct sigaction){0}, NULL));
	TRY("rt_sigaction", "bad-signal", sigaction(99, &(struct sigaction){0}, NULL));
	TRY("rt_sigprocmask", "bad-how", syscall(SYS_rt_sigprocmask, 99, NULL, NULL, 8));
	TRY("rt_sigprocmask", "bad-size", syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, NULL, 4));
	TRY("nanosleep", "bad-nsec", nanosleep(&(struct timespec){0, 2000000000}, NULL));
	TRY("clock_gettime", "bad-clock", clock_gettime(99, &(struct timespec){0}));
	TRY("setitimer", "bad-which", setitimer(99, &(struct itimerval){0}, NULL));
	TRY("getrlimit", "bad-resource", getrlimit(99, &(struct rlimit){0}));
	TRY("setrlimit", "cur-above-max", setrlimit(RLIMIT_NOFILE, &(struct rlimit){10, 5}));
	TRY("socket", "bad-family", socket(9999, SOCK_STREAM, 0));
	TRY("socket", "bad-type", socket(AF_UNIX, 99, 0));
	TRY("getpriority", "bad-which", getpriority(99, 0));
	TRY("sched_setaffinity", "empty", syscall(SYS_sched_setaffinity, 0, 8, &(uint64_t){0}));
	TRY("prctl", "bad-option", prctl(9999, 0, 0, 0, 0));
	TRY("prctl", "bad-seccomp-mode", prctl(PR_SET_SECCOMP, 9, 0, 0, 0));
	TRY("seccomp", "bad-op", syscall(SYS_seccomp, 99, 0, NULL));
	TRY("seccomp", "strict-flags", syscall(SYS_seccomp, 0, 1, NULL));
	TRY("seccomp", "bad-fprog", syscall(SYS_seccomp, 1, 0, BAD));
	TRY("seccomp", "action-bad-ptr", syscall(SYS_seccomp, 2, 0, BAD));
	TRY("seccomp", "bad-flags", syscall(SYS_seccomp, 1, 1u << 20, NULL));
	TRY("uname", "bad-buf", syscall(SYS_uname, BAD));
}

/* As an ordinary user, in a child. */
static void unprivileged_cases(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534)) {
			printf("unprivileged setup-failed\n");
			_exit(1);
		}
		TRY("open", "user:no-read", open("secret", O_RDONLY));
		TRY("open", "user:no-write", open("file", O_WRONLY));
		TRY("open", "user:no-search", open("locked/x", O_RDONLY));
		TRY("mkdir", "user:no-write-dir", mkdir("dir/x", 0755));
		TRY("unlink", "user:no-write-dir", unlink("full/sub"));
		TRY("chmod", "user:not-owner", chmod("file", 0600));
		TRY("chown", "user:not-root", chown("mine", 0, 0));
		TRY("utimensat", "user:not-owner",
		    utimensat(AT_FDCWD, "file", (struct timespec[]){{1, 0}, {1, 0}}, 0));
		TRY("utimensat", "user:now-no-write", utimensat(AT_FDCWD, "file", NULL, 0));
		TRY("kill", "user:root-process", kill(1, 0));
		TRY("setuid", "user:root", setuid(0));
		TRY("setgroups", "user", setgroups(0, NULL));
		TRY("setpriority", "user:lower", setpriority(PRIO_PROCESS, 0, -1));
		TRY("setrlimit", "user:raise-max",
		    setrlimit(RLIMIT_NOFILE, &(struct rlimit){RLIM_INFINITY, RLIM_INFINITY}));
		TRY("chroot", "user", chroot("dir"));
		TRY("mknod", "user:chr", mknod("newchr", S_IFCHR | 0600, makedev(1, 3)));
		TRY("link", "user:protected", link("secret", "dir2/hard"));
		TRY("rmdir", "user:sticky", rmdir("sticky/rootdir"));
		TRY("unlink", "user:sticky", unlink("sticky/rootfile"));
		TRY("access", "user:no-read", access("secret", R_OK));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

/* RLIMIT_NOFILE. */
static void limit_cases(void)
{
	struct rlimit old;
	getrlimit(RLIMIT_NOFILE, &old);
	setrlimit(RLIMIT_NOFILE, &(struct rlimit){16, old.rlim_max});
	TRY("dup2", "limit:above-nofile", dup2(0, 20));
	TRY("fcntl(F_DUPFD)", "limit:above-nofile", fcntl(0, F_DUPFD, 20));
	int fds[32], n = 0, fd;
	while (n < 32 && (fd = open("file", O_RDONLY)) >= 0)
		fds[n++] = fd;
	TRY("open", "limit:emfile", open("file", O_RDONLY));
	TRY("pipe", "limit:emfile", pipe((int[2]){0}));
	while (n)
		close(fds[--n]);
	setrlimit(RLIMIT_NOFILE, &old);
}

int main(int argc, char **argv)
{
	if (argc != 2 || chdir(argv[1]))
		return 2;
	umask(022);
	/* The scratch tree. */
	mkdir("dir", 0777);
	mkdir("dir2", 0777);
	mkdir("full", 0755);
	mkdir("full/sub", 0755);
	mkdir("locked", 0700);
	mkdir("sticky", 01777);
	mkdir("sticky/rootdir", 0755);
	close(open("sticky/rootfile", O_CREAT | O_WRONLY, 0666));
	close(open("file", O_CREAT | O_WRONLY, 0644));
	close(open("file2", O_CREAT | O_WRONLY, 0644));
	close(open("secret", O_CREAT | O_WRONLY, 0600));
	close(open("mine", O_CREAT | O_WRONLY, 0644));
	chown("mine", 65534, 65534);
	symlink("loop", "loop");
	symlink("file", "link");
	mkfifo("fifo", 0666);
	fd_matrix();
	path_cases();
	unprivileged_cases();
	limit_cases();
	return 0;
}
