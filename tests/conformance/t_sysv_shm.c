/*
 * t_sysv_shm: System V shared memory. shmget's key rules (IPC_PRIVATE, IPC_CREAT/IPC_EXCL,
 * ENOENT, a size larger than the segment's), shmat at a chosen or given address (SHM_RND,
 * SHM_REMAP, SHM_RDONLY that mprotect cannot make writable), two attaches of one segment and a
 * forked child's inherited one sharing the same pages, shm_nattch following attach, fork, exit,
 * exec and shmdt, shm_cpid/lpid, IPC_RMID of an attached segment (SHM_DEST, key gone, memory
 * alive until the last detach), IPC_SET, IPC_STAT/SHM_STAT/IPC_INFO/SHM_INFO, and permissions
 * for an unprivileged user; /proc/sysvipc/shm.
 */
#include "check.h"
#include <signal.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>

static struct shmid_ds stat_of(int id)
{
	struct shmid_ds ds;

	memset(&ds, 0xa5, sizeof(ds));
	CHECK_EQ(shmctl(id, IPC_STAT, &ds), 0);
	return ds;
}

static key_t test_key(int n)
{
	/* Keys of our own: the host's namespace may hold others. */
	return (key_t)(0x5e000000 | ((getpid() & 0xffff) << 4) | n);
}

/* /proc/sysvipc/shm lists the segment with its key, id, mode and size (in the sandbox it must
 * be there; natively the chroot may have no /proc). */
static void check_proc(int id, key_t key)
{
	FILE *f = fopen("/proc/sysvipc/shm", "r");
	char line[512], want[64];
	int found = 0;

	if (!f) {
		CHECK(!in_sandbox());
		return;
	}
	CHECK(fgets(line, sizeof(line), f) != NULL);
	const char *head = "       key      shmid perms                  size  cpid";
	CHECK(strncmp(line, head, strlen(head)) == 0);
	snprintf(want, sizeof(want), "%10d %10d  %4o %21d", key, id, 0640, 10000);
	while (fgets(line, sizeof(line), f))
		found |= strncmp(line, want, strlen(want)) == 0;
	CHECK(found);
	fclose(f);
}

static void test_get(void)
{
	key_t key = test_key(1);

	CHECK_ERR(shmget(key, 4096, 0600), ENOENT);
	CHECK_ERR(shmget(IPC_PRIVATE, 0, IPC_CREAT | 0600), EINVAL);
	int id = shmget(key, 10000, IPC_CREAT | IPC_EXCL | 0640);
	CHECK(id >= 0);
	CHECK_ERR(shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_EQ(shmget(key, 4096, 0), id);
	CHECK_EQ(shmget(key, 0, IPC_CREAT | 0600), id);
	CHECK_ERR(shmget(key, 10001, 0), EINVAL);
	int other = shmget(IPC_PRIVATE, 4096, 0600);
	CHECK(other >= 0 && other != id);

	struct shmid_ds ds = stat_of(id);
	CHECK_EQ(ds.shm_perm.__key, key);
	CHECK_EQ(ds.shm_perm.mode & 0777, 0640);
	CHECK_EQ(ds.shm_perm.uid, geteuid());
	CHECK_EQ(ds.shm_perm.cuid, geteuid());
	CHECK_EQ(ds.shm_perm.gid, getegid());
	CHECK_EQ(ds.shm_segsz, 10000);
	CHECK_EQ(ds.shm_nattch, 0);
	CHECK_EQ(ds.shm_cpid, getpid());
	CHECK_EQ(ds.shm_lpid, 0);
	CHECK_EQ(ds.shm_atime, 0);
	CHECK(ds.shm_ctime >= time(NULL) - 5 && ds.shm_ctime <= time(NULL));
	check_proc(id, key);

	/* IPC_SET changes the owner's bits and the owner, not the creator. */
	ds.shm_perm.mode = 0604;
	CHECK_EQ(shmctl(id, IPC_SET, &ds), 0);
	CHECK_EQ(stat_of(id).shm_perm.mode & 0777, 0604);

	/* SHM_STAT takes an index and answers the id; IPC_INFO and SHM_INFO the largest index. */
	int max = shmctl(0, IPC_INFO, (struct shmid_ds *)&(struct shminfo){0});
	CHECK(max >= 0);
	struct shm_info si;
	CHECK(shmctl(0, SHM_INFO, (struct shmid_ds *)&si) >= 0);
	CHECK(si.used_ids >= 2);
	CHECK_EQ(shmctl(id % 32768, SHM_STAT, &ds), id);
	CHECK_EQ(ds.shm_segsz, 10000);

	CHECK_ERR(shmctl(id, 12345, &ds), EINVAL);
	CHECK_ERR(shmctl(-1, IPC_STAT, &ds), EINVAL);
	CHECK_ERR(shmctl(id, IPC_STAT, BAD_PTR), EFAULT);
	CHECK_EQ(shmctl(id, IPC_RMID, NULL), 0);
	CHECK_EQ(shmctl(other, IPC_RMID, NULL), 0);
	CHECK_ERR(shmctl(id, IPC_STAT, &ds), EINVAL);
	CHECK_ERR(shmctl(id, IPC_RMID, NULL), EINVAL);
	CHECK_ERR(shmget(key, 4096, 0600), ENOENT);
}

static void test_attach(void)
{
	int id = shmget(IPC_PRIVATE, 3 * 4096 + 100, 0600);
	CHECK(id >= 0);

	char *a = shmat(id, NULL, 0);
	CHECK(a != (void *)-1);
	CHECK_EQ((uintptr_t)a % 4096, 0);
	/* A new segment is zero, and its last page is whole. */
	CHECK_EQ(a[0], 0);
	CHECK_EQ(a[4 * 4096 - 1], 0);
	strcpy(a, "hello");
	CHECK_EQ(stat_of(id).shm_nattch, 1);
	CHECK_EQ(stat_of(id).shm_lpid, getpid());
	CHECK(stat_of(id).shm_atime != 0);

	/* A second attach shows the same pages. */
	char *b = shmat(id, NULL, 0);
	CHECK(b != (void *)-1 && b != a);
	CHECK_STREQ(b, "hello");
	b[10] = 'x';
	CHECK_EQ(a[10], 'x');
	CHECK_EQ(stat_of(id).shm_nattch, 2);
	maybe_save(); /* two attaches of one segment */
	CHECK_STREQ(a, "hello");
	a[0] = 'H';
	CHECK_STREQ(b, "Hello");
	CHECK_EQ(stat_of(id).shm_nattch, 2);
	CHECK_EQ(shmdt(b), 0);
	CHECK_EQ(stat_of(id).shm_nattch, 1);
	CHECK(stat_of(id).shm_dtime != 0);
	CHECK_ERR(shmdt(b), EINVAL);
	CHECK_ERR(shmdt(a + 1), EINVAL);
	CHECK_ERR(shmdt(a + 4096), EINVAL);

	/* Read-only: mprotect cannot add write. */
	char *r = shmat(id, NULL, SHM_RDONLY);
	CHECK(r != (void *)-1);
	CHECK_STREQ(r, "Hello");
	CHECK_ERR(mprotect(r, 4096, PROT_READ | PROT_WRITE), EACCES);
	CHECK_EQ(shmdt(r), 0);

	/* A given address: page-aligned, or rounded down with SHM_RND; a taken one only with
	 * SHM_REMAP. */
	char *hole = mmap(NULL, 8 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(hole != MAP_FAILED);
	CHECK_ERR((long)shmat(id, hole, 0), EINVAL);
	CHECK_ERR((long)shmat(id, hole + 1, 0), EINVAL);
	CHECK_ERR((long)shmat(id, NULL, SHM_REMAP), EINVAL);
	char *at = shmat(id, hole + 100, SHM_RND | SHM_REMAP);
	CHECK(at == hole);
	CHECK_STREQ(at, "Hello");
	CHECK_EQ(shmdt(at), 0);
	CHECK_EQ(munmap(hole, 8 * 4096), 0);
	at = shmat(id, hole + 4096 + 7, SHM_RND);
	CHECK(at == hole + 4096);
	CHECK_STREQ(at, "Hello");
	CHECK_EQ(stat_of(id).shm_nattch, 2);
	CHECK_EQ(shmdt(at), 0);

	/* IPC_RMID of an attached segment: it lives on, unnamed and marked, until the last
	 * detach. */
	CHECK_EQ(shmctl(id, IPC_RMID, NULL), 0);
	struct shmid_ds ds = stat_of(id);
	CHECK(ds.shm_perm.mode & SHM_DEST);
	CHECK_EQ(ds.shm_perm.__key, IPC_PRIVATE);
	CHECK_EQ(ds.shm_nattch, 1);
	maybe_save(); /* a removed segment still attached */
	CHECK_STREQ(a, "Hello");
	CHECK_EQ(shmdt(a), 0);
	CHECK_ERR(shmctl(id, IPC_STAT, &ds), EINVAL);
}

static void test_fork(const char *self)
{
	int id = shmget(IPC_PRIVATE, 4096, 0600);
	int go[2], done[2];
	CHECK(id >= 0);
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(done), 0);
	volatile int *p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1);
	p[0] = 1;

	pid_t c = fork();
	if (c == 0) {
		char x;
		/* The attach is inherited: the same pages. */
		int bad = p[0] != 1;
		p[1] = 2;
		if (write(done[1], "r", 1) != 1 || read(go[0], &x, 1) != 1)
			_exit(3);
		bad |= p[2] != 3;
		p[3] = 4;
		_exit(bad);
	}
	char x;
	CHECK_EQ(read(done[0], &x, 1), 1);
	CHECK_EQ(p[1], 2);
	CHECK_EQ(stat_of(id).shm_nattch, 2);
	maybe_save(); /* attached in parent and child */
	CHECK_EQ(stat_of(id).shm_nattch, 2);
	p[2] = 3;
	CHECK_EQ(write(go[1], "g", 1), 1);
	int st;
	CHECK_EQ(waitpid(c, &st, 0), c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(p[3], 4);
	/* Exit detached the child's attach. */
	CHECK_EQ(stat_of(id).shm_nattch, 1);

	/* So does exec. */
	c = fork();
	if (c == 0) {
		char ids[16];
		snprintf(ids, sizeof(ids), "%d", id);
		char *argv[] = {(char *)self, "exec-child", ids, NULL};
		execv(self, argv);
		_exit(5);
	}
	CHECK_EQ(waitpid(c, &st, 0), c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(stat_of(id).shm_nattch, 1);
	CHECK_EQ(shmctl(id, IPC_RMID, NULL), 0);
	CHECK_EQ(stat_of(id).shm_nattch, 1);
	CHECK_EQ(shmdt((void *)p), 0);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

/* An unprivileged user against a segment of mode 0600 and one of 0644. */
static void test_perms(void)
{
	if (geteuid() != 0)
		return;
	int priv = shmget(IPC_PRIVATE, 4096, 0600), pub = shmget(IPC_PRIVATE, 4096, 0644);
	key_t key = test_key(2);
	int keyed = shmget(key, 4096, IPC_CREAT | 0600);
	CHECK(priv >= 0 && pub >= 0 && keyed >= 0);
	pid_t c = fork();
	if (c == 0) {
		struct shmid_ds ds;
		check_failures = 0;
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		CHECK_ERR((long)shmat(priv, NULL, 0), EACCES);
		CHECK_ERR(shmctl(priv, IPC_STAT, &ds), EACCES);
		CHECK_ERR(shmctl(priv, IPC_RMID, NULL), EPERM);
		/* shmget asks for the bits of its flag: none passes, 0600 does not. */
		CHECK_EQ(shmget(key, 0, 0), keyed);
		CHECK_ERR(shmget(key, 0, 0600), EACCES);
		CHECK_ERR((long)shmat(pub, NULL, 0), EACCES);
		void *r = shmat(pub, NULL, SHM_RDONLY);
		CHECK(r != (void *)-1);
		CHECK_EQ(shmctl(pub, IPC_STAT, &ds), 0);
		_exit(check_failures != 0);
	}
	int st;
	CHECK_EQ(waitpid(c, &st, 0), c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(shmctl(priv, IPC_RMID, NULL), 0);
	CHECK_EQ(shmctl(pub, IPC_RMID, NULL), 0);
	CHECK_EQ(shmctl(keyed, IPC_RMID, NULL), 0);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "exec-child")) {
		/* The exec detached this process: only the parent's attach is left. */
		struct shmid_ds ds;
		return shmctl(atoi(argv[2]), IPC_STAT, &ds) == 0 && ds.shm_nattch == 1 ? 0 : 1;
	}
	test_get();
	test_attach();
	test_fork(argv[0]);
	test_perms();
	return check_done();
}
