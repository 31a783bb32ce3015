/* t_proc_links: following /proc's magic links lands on the object itself, not on the text
 * readlink shows. stat through /proc/self/fd/N gives a pipe's, an unlinked file's and host
 * stdio's own attributes; /proc/self/exe and cwd can be opened and read; opening
 * /proc/self/fd/1 with O_CREAT|O_TRUNC (a shell's `> /dev/stdout`) reaches a pipe; and
 * /proc/PID/ns holds links "TYPE:[INODE]" to files with that inode, shared with a child,
 * that open but do not read. /proc/self/mountstats names every mount /proc/self/mounts does.
 * conformance: native-proc */
#include "check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int fd_path(char *buf, size_t size, int fd)
{
	return snprintf(buf, size, "/proc/self/fd/%d", fd);
}

static void test_fd_links_lead_to_the_objects(void)
{
	char path[64], tmp[64];
	struct stat via, direct;
	int p[2];

	CHECK_EQ(pipe(p), 0);
	fd_path(path, sizeof(path), p[0]);
	CHECK_EQ(stat(path, &via), 0);
	CHECK_EQ(fstat(p[0], &direct), 0);
	CHECK(S_ISFIFO(via.st_mode));
	CHECK_EQ(via.st_ino, direct.st_ino);
	CHECK_EQ(lstat(path, &via), 0);
	CHECK(S_ISLNK(via.st_mode));

	/* `echo > /dev/stdout` with stdout a pipe: O_CREAT|O_TRUNC through the link (named
	 * directly: the native run's chroot has no /dev). */
	int saved = dup(1);
	CHECK_EQ(dup2(p[1], 1), 1);
	int out = open("/proc/self/fd/1", O_WRONLY | O_CREAT | O_TRUNC, 0666);
	dup2(saved, 1);
	close(saved);
	CHECK(out >= 0);
	CHECK_EQ(write(out, "via", 3), 3);
	char buf[8] = {0};
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 3);
	CHECK(memcmp(buf, "via", 3) == 0);
	close(out);

	/* O_PATH through the link: a path descriptor of the pipe, not an end of it. */
	int path_fd = open(path, O_PATH);
	CHECK(path_fd >= 0);
	CHECK_ERR(read(path_fd, buf, 1), EBADF);
	CHECK_EQ(fstat(path_fd, &via), 0);
	CHECK(S_ISFIFO(via.st_mode));
	CHECK_EQ(via.st_ino, direct.st_ino);
	close(path_fd);
	close(p[0]);
	close(p[1]);

	snprintf(tmp, sizeof(tmp), "/tmp/t_proc_links.%d", getpid());
	int fd = open(tmp, O_CREAT | O_RDWR | O_TRUNC, 0640);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "12345", 5), 5);
	CHECK_EQ(unlink(tmp), 0);
	maybe_save();
	fd_path(path, sizeof(path), fd);
	CHECK_EQ(stat(path, &via), 0);
	CHECK_EQ(fstat(fd, &direct), 0);
	CHECK(S_ISREG(via.st_mode));
	CHECK_EQ(via.st_ino, direct.st_ino);
	CHECK_EQ(via.st_nlink, 0);
	CHECK_EQ(via.st_size, 5);
	CHECK_EQ(via.st_mode & 07777, 0640);
	close(fd);
}

static void test_exe_and_cwd_open(void)
{
	struct stat via, direct;
	char buf[4];

	int exe = open("/proc/self/exe", O_RDONLY);
	CHECK(exe >= 0);
	CHECK_EQ(read(exe, buf, 4), 4);
	CHECK(memcmp(buf, "\177ELF", 4) == 0);
	CHECK_EQ(fstat(exe, &via), 0);
	CHECK_EQ(stat("/proc/self/exe", &direct), 0);
	CHECK_EQ(via.st_ino, direct.st_ino);
	close(exe);

	CHECK_EQ(chdir("/tmp"), 0);
	DIR *d = opendir("/proc/self/cwd");
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ(fstat(dirfd(d), &via), 0);
		CHECK_EQ(stat("/tmp", &direct), 0);
		CHECK_EQ(via.st_ino, direct.st_ino);
		CHECK_EQ(via.st_dev, direct.st_dev);
		closedir(d);
	}
	CHECK_EQ(chdir("/"), 0);
}

static const char *const ns_names[] = {
    "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time", "time_for_children",
    "user",   "uts"};

/* The inode number in NAME's link of process PID ("pid:[4026531836]"), or 0. */
static unsigned long ns_ino(pid_t pid, const char *name)
{
	char path[96], link[96], want[32];
	unsigned long ino = 0;
	ssize_t n;
	size_t len = strcspn(name, "_");

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	snprintf(want, sizeof(want), "%.*s:[%%lu]", (int)len, name);
	if (sscanf(link, want, &ino) != 1)
		return 0;
	return ino;
}

static void test_namespaces(void)
{
	pid_t self = getpid();
	struct stat st;
	char path[96], buf[8];

	for (size_t i = 0; i < sizeof(ns_names) / sizeof(ns_names[0]); i++) {
		unsigned long ino = ns_ino(self, ns_names[i]);

		CHECK(ino != 0);
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_names[i]);
		CHECK_EQ(lstat(path, &st), 0);
		CHECK(S_ISLNK(st.st_mode));
		CHECK_EQ(stat(path, &st), 0);
		CHECK(S_ISREG(st.st_mode));
		CHECK_EQ(st.st_mode & 07777, 0444);
		CHECK_EQ(st.st_ino, ino);
	}
	CHECK_EQ(ns_ino(self, "pid"), ns_ino(self, "pid_for_children"));

	int fd = open("/proc/self/ns/uts", O_RDONLY);
	CHECK(fd >= 0);
	CHECK_ERR(read(fd, buf, sizeof(buf)), EINVAL);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(st.st_ino, ns_ino(self, "uts"));
	close(fd);

	/* A child shares every namespace. */
	int p[2];
	CHECK_EQ(pipe(p), 0);
	pid_t child = fork();
	if (child == 0) {
		close(p[1]);
		read(p[0], buf, 1);
		_exit(0);
	}
	for (size_t i = 0; i < sizeof(ns_names) / sizeof(ns_names[0]); i++)
		CHECK_EQ(ns_ino(child, ns_names[i]), ns_ino(self, ns_names[i]));
	close(p[1]);
	close(p[0]);
	CHECK_EQ(waitpid(child, NULL, 0), child);

	snprintf(path, sizeof(path), "/proc/%d/ns", (int)self);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0511);
}

/* Every mount point of /proc/self/mounts appears in a mountstats line
 * "device SOURCE mounted on MOUNTPOINT with fstype TYPE", in the same order. */
static void test_mountstats(void)
{
	static char mounts[16384], stats[16384];
	int fd;
	ssize_t nm = 0, ns = 0;

	fd = open("/proc/self/mounts", O_RDONLY);
	CHECK(fd >= 0);
	nm = read(fd, mounts, sizeof(mounts) - 1);
	close(fd);
	fd = open("/proc/self/mountstats", O_RDONLY);
	CHECK(fd >= 0);
	ns = read(fd, stats, sizeof(stats) - 1);
	close(fd);
	CHECK(nm > 0 && ns > 0);
	if (nm <= 0 || ns <= 0)
		return;
	mounts[nm] = stats[ns] = '\0';

	char *ms = NULL, *ss = NULL;
	char *ml = strtok_r(mounts, "\n", &ms), *sl = strtok_r(stats, "\n", &ss);
	int lines = 0;
	for (; ml && sl; ml = strtok_r(NULL, "\n", &ms), sl = strtok_r(NULL, "\n", &ss)) {
		char src[256], mp[256], type[64], want[700];
		CHECK_EQ(sscanf(ml, "%255s %255s %63s", src, mp, type), 3);
		snprintf(want, sizeof(want), "device %s mounted on %s with fstype %s", src, mp,
			 type);
		CHECK(strncmp(sl, want, strlen(want)) == 0);
		lines++;
	}
	CHECK(ml == NULL && sl == NULL);
	CHECK(lines > 0);
}

int main(void)
{
	test_fd_links_lead_to_the_objects();
	test_exe_and_cwd_open();
	test_namespaces();
	test_mountstats();
	return check_done();
}
