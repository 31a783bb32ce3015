/*
 * t_escape_rename: the escape corpus's rename races. In a tree D (under /tmp, and under every
 * directory RACE_DIRS names, colon-separated: tests/e2e/holes.sh adds a bind mount), threads
 * move directories up, down and sideways and exchange two symlinks (one naming a directory of D,
 * one climbing far past the root) while other threads resolve paths through them:
 * - a path that climbs with ".." far past where it starts ends at the root, or fails with
 *   ENOENT when a component had moved away (never anywhere else, never another error);
 * - from a descriptor of a directory that is being moved, the climb always ends at the root,
 *   and a name there is the root's own (the root's /etc/passwd; no "secret" at the root);
 * - a path through either symlink is what it names in this root or ENOENT;
 * - a file created by climbing from a moving directory lands in D, D's parent or the root,
 *   where it is found afterwards: every one of them, and nothing else changed at the root.
 * After the race the tree is whole. A directory is never moved beneath itself (EINVAL), even
 * through a descriptor of a directory that was moved into it first, nor ".." renamed (EBUSY);
 * between two mounts a rename is EXDEV. tests/e2e/holes.sh runs this with a bind mount and then
 * checks on the host that nothing outside the bound directory and nothing of the rootfs was
 * touched.
 */
#include "check.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#define CLIMB "../../../../../../../../../../../../../../../../"
#define RACE_NS 800000000L /* each race: 0.8 s */

static struct stat root, passwd;
static char D[256], base_dir[256];
static volatile int stop;
static int rounds[4]; /* each resolver's, so that the race lasts until both have run */
static int created;   /* files made by climbing, each found and removed afterwards */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int bad_result, bad_errno, bad_line;

static int same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* A resolver's finding: counted, and the first one printed by the main thread. */
static void wrong(int line, int result, int err)
{
	pthread_mutex_lock(&lock);
	if (!bad_line) {
		bad_line = line;
		bad_result = result;
		bad_errno = err;
	}
	pthread_mutex_unlock(&lock);
}

#define EXPECT(cond, result)                                                                       \
	do {                                                                                       \
		if (!(cond))                                                                       \
			wrong(__LINE__, (result), errno);                                          \
	} while (0)

static char *path(char *buf, const char *rel)
{
	snprintf(buf, 512, "%s/%s", D, rel);
	return buf;
}

static void *mover(void *arg)
{
	char a[512], b[512];
	long kind = (long)arg;

	while (!stop) {
		if (kind == 0) {
			rename(path(a, "a/b"), path(b, "x/b"));
			rename(path(a, "x/b"), path(b, "a/b"));
			syscall(SYS_renameat2, AT_FDCWD, path(a, "l"), AT_FDCWD, path(b, "m"),
				2 /* RENAME_EXCHANGE */);
		} else {
			rename(path(a, "a/b/c"), path(b, "c"));
			rename(path(a, "c"), path(b, "a/b/c"));
			rename(path(a, "a"), path(b, "x/a"));
			rename(path(a, "x/a"), path(b, "a"));
		}
	}
	return NULL;
}

static void *resolver(void *arg)
{
	char p[512], name[64];
	struct stat st;
	int n = 0;

	while (!stop) {
		int fd = open(path(p, "a/b/c/d/" CLIMB), O_RDONLY | O_DIRECTORY);
		EXPECT(fd >= 0 ? fstat(fd, &st) == 0 && same(&st, &root) : errno == ENOENT, fd);
		if (fd >= 0)
			close(fd);

		/* c, wherever the movers have put it just now. */
		static const char *const where[] = {"a/b/c", "x/b/c", "c", "x/a/b/c"};
		int c = -1;
		for (int i = 0; i < 4 && c < 0; i++) {
			c = open(path(p, where[i]), O_RDONLY | O_DIRECTORY);
			EXPECT(c >= 0 || errno == ENOENT, c);
		}
		if (c >= 0) {
			fd = openat(c, CLIMB, O_RDONLY | O_DIRECTORY);
			EXPECT(fd >= 0 && fstat(fd, &st) == 0 && same(&st, &root), fd);
			if (fd >= 0)
				close(fd);
			EXPECT(fstatat(c, CLIMB "etc/passwd", &st, 0) == 0 && same(&st, &passwd),
			       -1);
			EXPECT(fstatat(c, CLIMB "secret", &st, 0) == -1 && errno == ENOENT, 0);
			/* Three levels up from c: D's parent, or the root once c sits in D. */
			snprintf(name, sizeof(name), "../../../race-esc-%d-%ld-%d", getpid(),
				 (long)arg, n++);
			fd = openat(c, name, O_CREAT | O_EXCL | O_WRONLY, 0600);
			EXPECT(fd >= 0, fd);
			if (fd >= 0) {
				__atomic_add_fetch(&created, 1, __ATOMIC_SEQ_CST);
				close(fd);
			}
			close(c);
		}

		int r = stat(path(p, "l/c/d/f"), &st);
		EXPECT(r == 0 || errno == ENOENT, r);
		r = stat(path(p, "m/etc/passwd"), &st);
		EXPECT(r == 0 ? same(&st, &passwd) : errno == ENOENT, r);
		r = stat(path(p, "l/etc/passwd"), &st);
		EXPECT(r == 0 ? same(&st, &passwd) : errno == ENOENT, r);
		__atomic_add_fetch(&rounds[(long)arg], 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/* Removes the files the resolvers made in DIR; how many. */
static int sweep(const char *dir)
{
	char prefix[64], p[1024];
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	snprintf(prefix, sizeof(prefix), "race-esc-%d-", getpid());
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix))) {
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			n += unlink(p) == 0;
		}
	if (d)
		closedir(d);
	return n;
}

/* Counts the directories named a, b, c, d and the file f anywhere in DIR, and sweeps. */
static void census(const char *dir, int count[5], int *found)
{
	DIR *d;
	struct dirent *de;
	char p[1024];

	*found += sweep(dir);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		const char *names = "abcdf";
		if (!de->d_name[1] && strchr(names, de->d_name[0]))
			count[strchr(names, de->d_name[0]) - names]++;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			census(p, count, found);
	}
	if (d)
		closedir(d);
}

static int rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[1024];

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rm_tree(p);
		else
			unlink(p);
	}
	if (d)
		closedir(d);
	return rmdir(dir);
}

/* The names at the root, as one sorted string. */
static char *root_names(void)
{
	static char out[2][8192];
	static int which;
	char *s = out[which ^= 1];
	struct dirent **list;
	int n = scandir("/", &list, NULL, alphasort);

	s[0] = 0;
	for (int i = 0; i < n; i++) {
		if (strlen(s) + strlen(list[i]->d_name) + 2 < sizeof(out[0])) {
			strcat(s, list[i]->d_name);
			strcat(s, " ");
		}
		free(list[i]);
	}
	free(list);
	return s;
}

static void build(void)
{
	char p[512];

	CHECK_EQ(mkdir(D, 0755), 0);
	CHECK_EQ(mkdir(path(p, "a"), 0755), 0);
	CHECK_EQ(mkdir(path(p, "a/b"), 0755), 0);
	CHECK_EQ(mkdir(path(p, "a/b/c"), 0755), 0);
	CHECK_EQ(mkdir(path(p, "a/b/c/d"), 0755), 0);
	CHECK_EQ(mkdir(path(p, "x"), 0755), 0);
	int fd = open(path(p, "a/b/c/d/f"), O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(symlink("a/b", path(p, "l")), 0);
	CHECK_EQ(symlink(CLIMB, path(p, "m")), 0);
}

static void race(void)
{
	pthread_t th[4];
	struct timespec t0, t;

	stop = 0;
	created = 0;
	memset(rounds, 0, sizeof(rounds));
	for (long i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, i < 2 ? mover : resolver, (void *)i), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		usleep(20000);
		clock_gettime(CLOCK_MONOTONIC, &t);
		long ns = (t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec;
		/* Long enough, and both resolvers had their turns (a loaded host may start them
		 * late); a bound either way. */
		if (ns >= RACE_NS && __atomic_load_n(&rounds[2], __ATOMIC_SEQ_CST) >= 100 &&
		    __atomic_load_n(&rounds[3], __ATOMIC_SEQ_CST) >= 100)
			break;
		if (ns >= 8 * RACE_NS)
			break;
	}
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	if (bad_line)
		dprintf(1, "%s:%d: a resolution during the race returned %d, errno %d (%s)\n",
			__FILE__, bad_line, bad_result, bad_errno, strerror(bad_errno));
	CHECK_EQ(bad_line, 0);
	bad_line = 0;
}

/* After a race: every part of the tree once, every file the resolvers made found. */
static void whole(void)
{
	int count[5] = {0}, found = 0;
	char parent[512];

	census(D, count, &found);
	found += sweep(base_dir);
	snprintf(parent, sizeof(parent), "%s/..", base_dir);
	found += sweep(parent);
	found += sweep("/");
	for (int i = 0; i < 5; i++)
		CHECK_EQ(count[i], 1);
	CHECK_EQ(found, created);
	CHECK(created > 0);
}

/* A directory never goes beneath itself, even through a descriptor of one that went there. */
static void no_cycles(void)
{
	char p[512], q[512], pq[512];
	int dd = open(D, O_RDONLY | O_DIRECTORY);

	CHECK_EQ(mkdir(path(p, "p"), 0755), 0);
	CHECK_EQ(mkdir(path(q, "q"), 0755), 0);
	int dq = open(q, O_RDONLY | O_DIRECTORY);
	CHECK_EQ(rename(q, path(pq, "p/q")), 0);
	CHECK_ERR(renameat(dd, "p", dq, "p"), EINVAL);
	CHECK_ERR(renameat(dq, "..", dd, "z"), EBUSY);
	CHECK_ERR(rename(p, path(q, "p/q/p")), EINVAL);
	CHECK_ERR(rename(p, pq), EINVAL);
	struct stat st;
	CHECK(fstatat(dq, CLIMB, &st, 0) == 0 && same(&st, &root));
	CHECK_EQ(rmdir(pq), 0);
	CHECK_EQ(rmdir(p), 0);
	close(dq);
	close(dd);
}

static void in_dir(const char *base)
{
	snprintf(base_dir, sizeof(base_dir), "%s", base);
	snprintf(D, sizeof(D), "%s/race.%d", base, getpid());
	rm_tree(D);
	char *before = root_names();
	build();
	no_cycles();
	race();
	whole();
	maybe_save();
	race();
	whole();
	CHECK_STREQ(root_names(), before);
	CHECK_EQ(rm_tree(D), 0);
}

int main(void)
{
	const char *dirs = getenv("RACE_DIRS");
	char list[512];

	CHECK_EQ(stat("/", &root), 0);
	CHECK_EQ(stat("/etc/passwd", &passwd), 0);
	snprintf(list, sizeof(list), "%s", dirs ? dirs : "/tmp");
	for (char *save, *b = strtok_r(list, ":", &save); b; b = strtok_r(NULL, ":", &save))
		in_dir(b);
	/* Between two mounts (the e2e run's bind mount and /tmp): EXDEV. */
	if (dirs && strchr(dirs, ':')) {
		char a[512], b[512];
		snprintf(list, sizeof(list), "%s", dirs);
		char *save, *first = strtok_r(list, ":", &save),
			    *second = strtok_r(NULL, ":", &save);
		snprintf(a, sizeof(a), "%s/xdev.%d", first, getpid());
		snprintf(b, sizeof(b), "%s/xdev.%d", second, getpid());
		CHECK_EQ(mkdir(a, 0755), 0);
		CHECK_ERR(rename(a, b), EXDEV);
		CHECK_EQ(rmdir(a), 0);
	}
	return check_done();
}
