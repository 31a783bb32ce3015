/*
 * t_sysv_sem: System V semaphores. semget's rules (nsems 0 or past SEMMSL, EEXIST, more
 * semaphores than the set has), semctl's values (SETVAL/GETVAL/SETALL/GETALL with ERANGE,
 * GETPID, IPC_STAT/IPC_SET, SEM_STAT, IPC_INFO/SEM_INFO), semop's all-or-nothing arrays with
 * IPC_NOWAIT, E2BIG/EFBIG/EINVAL, semtimedop's timeout, blocked waiters counted by
 * GETNCNT/GETZCNT and woken by semop and SETVAL, ended by a signal (EINTR, even with
 * SA_RESTART) and by IPC_RMID (EIDRM), SEM_UNDO applied when a process exits and voided by
 * SETVAL, and two processes taking turns on a shared segment under two semaphores.
 */
#include "check.h"
#include <signal.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *__buf;
};

static int op(int id, int num, int delta, int flg)
{
	struct sembuf sb = {
	    .sem_num = (unsigned short)num, .sem_op = (short)delta, .sem_flg = (short)flg};
	return semop(id, &sb, 1);
}

static int getval(int id, int n)
{
	return semctl(id, n, GETVAL);
}

static void setval(int id, int n, int v)
{
	CHECK_EQ(semctl(id, n, SETVAL, (union semun){.val = v}), 0);
}

static void sleep_ms(int ms)
{
	struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&d, NULL);
}

/* Waits until COUNT (GETNCNT or GETZCNT) of semaphore N reaches WANT. */
static void wait_count(int id, int n, int cmd, int want)
{
	for (int i = 0; i < 500 && semctl(id, n, cmd) != want; i++)
		sleep_ms(10);
	CHECK_EQ(semctl(id, n, cmd), want);
}

static int child_status(pid_t c)
{
	int st;
	CHECK_EQ(waitpid(c, &st, 0), c);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_get_and_values(void)
{
	key_t key = (key_t)(0x5e100000 | ((getpid() & 0xffff) << 4));

	CHECK_ERR(semget(IPC_PRIVATE, 0, 0600), EINVAL);
	CHECK_ERR(semget(IPC_PRIVATE, 32001, 0600), EINVAL);
	CHECK_ERR(semget(IPC_PRIVATE, -1, 0600), EINVAL);
	CHECK_ERR(semget(key, 3, 0600), ENOENT);
	int id = semget(key, 3, IPC_CREAT | IPC_EXCL | 0640);
	CHECK(id >= 0);
	CHECK_ERR(semget(key, 3, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_EQ(semget(key, 2, 0), id);
	CHECK_EQ(semget(key, 0, 0), id);
	CHECK_ERR(semget(key, 4, 0), EINVAL);

	/* New values are 0. */
	unsigned short all[3] = {9, 9, 9};
	CHECK_EQ(semctl(id, 0, GETALL, (union semun){.array = all}), 0);
	CHECK(all[0] == 0 && all[1] == 0 && all[2] == 0);
	setval(id, 1, 5);
	CHECK_EQ(getval(id, 1), 5);
	CHECK_EQ(semctl(id, 1, GETPID), getpid());
	CHECK_EQ(semctl(id, 0, GETPID), 0);
	CHECK_ERR(semctl(id, 1, SETVAL, (union semun){.val = 32768}), ERANGE);
	CHECK_ERR(semctl(id, 1, SETVAL, (union semun){.val = -1}), ERANGE);
	CHECK_EQ(semctl(id, 1, SETVAL, (union semun){.val = 32767}), 0);
	CHECK_ERR(semctl(id, 3, GETVAL), EINVAL);
	CHECK_ERR(semctl(id, -1, SETVAL, (union semun){.val = 1}), EINVAL);
	unsigned short set[3] = {1, 2, 3}, big[3] = {1, 40000, 3};
	CHECK_ERR(semctl(id, 0, SETALL, (union semun){.array = big}), ERANGE);
	CHECK_EQ(semctl(id, 0, SETALL, (union semun){.array = set}), 0);
	CHECK_EQ(semctl(id, 0, GETALL, (union semun){.array = all}), 0);
	CHECK(all[0] == 1 && all[1] == 2 && all[2] == 3);
	CHECK_ERR(semctl(id, 0, GETALL, (union semun){.array = BAD_PTR}), EFAULT);

	struct semid_ds ds;
	memset(&ds, 0, sizeof(ds));
	CHECK_EQ(semctl(id, 0, IPC_STAT, (union semun){.buf = &ds}), 0);
	CHECK_EQ(ds.sem_nsems, 3);
	CHECK_EQ(ds.sem_perm.__key, key);
	CHECK_EQ(ds.sem_perm.mode & 0777, 0640);
	CHECK_EQ(ds.sem_perm.uid, geteuid());
	CHECK_EQ(ds.sem_otime, 0);
	CHECK(ds.sem_ctime != 0);
	ds.sem_perm.mode = 0600;
	CHECK_EQ(semctl(id, 0, IPC_SET, (union semun){.buf = &ds}), 0);
	CHECK_EQ(semctl(id, 0, IPC_STAT, (union semun){.buf = &ds}), 0);
	CHECK_EQ(ds.sem_perm.mode & 0777, 0600);
	CHECK_EQ(semctl(id % 32768, 0, SEM_STAT, (union semun){.buf = &ds}), id);
	struct seminfo si;
	CHECK(semctl(0, 0, IPC_INFO, (union semun){.__buf = &si}) >= 0);
	CHECK_EQ(si.semmsl, 32000);
	CHECK_EQ(si.semopm, 500);
	CHECK_EQ(si.semvmx, 32767);
	CHECK(semctl(0, 0, SEM_INFO, (union semun){.__buf = &si}) >= 0);
	CHECK(si.semusz >= 1);
	CHECK_ERR(semctl(id, 0, 4242), EINVAL);

	maybe_save(); /* a set with values */
	CHECK_EQ(semctl(id, 0, GETALL, (union semun){.array = all}), 0);
	CHECK(all[0] == 1 && all[1] == 2 && all[2] == 3);
	CHECK_EQ(semctl(id, 2, GETPID), getpid());

	CHECK_EQ(semctl(id, 0, IPC_RMID), 0);
	CHECK_ERR(semctl(id, 0, GETVAL), EINVAL);
	CHECK_ERR(semctl(id, 0, IPC_RMID), EINVAL);
	CHECK_ERR(op(id, 0, 1, 0), EINVAL);
}

static void test_semop(void)
{
	int id = semget(IPC_PRIVATE, 2, 0600);
	CHECK(id >= 0);

	CHECK_ERR(op(id, 0, -1, IPC_NOWAIT), EAGAIN);
	CHECK_EQ(op(id, 0, 0, IPC_NOWAIT), 0);
	CHECK_EQ(op(id, 0, 2, 0), 0);
	CHECK_ERR(op(id, 0, 0, IPC_NOWAIT), EAGAIN);
	CHECK_EQ(op(id, 0, -1, 0), 0);
	CHECK_EQ(getval(id, 0), 1);
	struct semid_ds ds;
	CHECK_EQ(semctl(id, 0, IPC_STAT, (union semun){.buf = &ds}), 0);
	CHECK(ds.sem_otime != 0);

	/* All or nothing: the second operation cannot proceed, so the first does not happen. */
	struct sembuf two[2] = {{0, -1, 0}, {1, -1, IPC_NOWAIT}};
	CHECK_ERR(semop(id, two, 2), EAGAIN);
	CHECK_EQ(getval(id, 0), 1);
	/* Operations on one semaphore add up in order. */
	struct sembuf same[3] = {{0, 3, 0}, {0, -4, 0}, {1, 1, 0}};
	CHECK_EQ(semop(id, same, 3), 0);
	CHECK_EQ(getval(id, 0), 0);
	CHECK_EQ(getval(id, 1), 1);

	/* Past the largest value: ERANGE. */
	setval(id, 0, 32767);
	CHECK_ERR(op(id, 0, 1, 0), ERANGE);
	setval(id, 0, 0);

	struct sembuf many[501];
	memset(many, 0, sizeof(many));
	CHECK_ERR(semop(id, many, 501), E2BIG);
	CHECK_ERR(semop(id, many, 0), EINVAL);
	CHECK_ERR(op(id, 2, 1, 0), EFBIG);
	CHECK_ERR(semop(id, BAD_PTR, 1), EFAULT);
	CHECK_ERR(op(-1, 0, 1, 0), EINVAL);

	/* semtimedop's timeout is EAGAIN; a bad one EINVAL. */
	struct sembuf dec = {0, -1, 0};
	struct timespec t0, t1, to = {0, 50 * 1000 * 1000}, bad = {0, 1000000000};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_ERR(semtimedop(id, &dec, 1, &to), EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CHECK(ms >= 45);
	CHECK_ERR(semtimedop(id, &dec, 1, &bad), EINVAL);
	CHECK_EQ(semctl(id, 0, IPC_RMID), 0);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void test_blocking(void)
{
	int id = semget(IPC_PRIVATE, 2, 0600);
	CHECK(id >= 0);

	/* A waiter for an increase is counted by GETNCNT and woken by semop. */
	pid_t c = fork();
	if (c == 0)
		_exit(op(id, 0, -2, 0) == 0 ? 0 : 10 + errno);
	wait_count(id, 0, GETNCNT, 1);
	CHECK_EQ(semctl(id, 0, GETZCNT), 0);
	CHECK_EQ(semctl(id, 1, GETNCNT), 0);
	maybe_save(); /* a task blocked in semop */
	wait_count(id, 0, GETNCNT, 1);
	CHECK_EQ(op(id, 0, 1, 0), 0);
	sleep_ms(30);
	CHECK_EQ(semctl(id, 0, GETNCNT), 1); /* 1 is not enough */
	CHECK_EQ(op(id, 0, 1, 0), 0);
	CHECK_EQ(child_status(c), 0);
	CHECK_EQ(getval(id, 0), 0);
	CHECK_EQ(semctl(id, 0, GETPID), c);

	/* A waiter for zero, counted by GETZCNT, woken by SETVAL. */
	setval(id, 1, 3);
	c = fork();
	if (c == 0)
		_exit(op(id, 1, 0, 0) == 0 ? 0 : 10 + errno);
	wait_count(id, 1, GETZCNT, 1);
	setval(id, 1, 0);
	CHECK_EQ(child_status(c), 0);

	/* A signal ends the wait with EINTR, SA_RESTART or not; a timed wait too. */
	c = fork();
	if (c == 0) {
		struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = {.it_value = {0, 50000}};
		setitimer(ITIMER_REAL, &it, NULL);
		if (op(id, 0, -1, 0) != -1 || errno != EINTR)
			_exit(1);
		setitimer(ITIMER_REAL, &it, NULL);
		struct sembuf dec = {0, -1, 0};
		struct timespec to = {5, 0};
		if (semtimedop(id, &dec, 1, &to) != -1 || errno != EINTR)
			_exit(2);
		_exit(0);
	}
	CHECK_EQ(child_status(c), 0);

	/* IPC_RMID wakes every waiter with EIDRM. */
	c = fork();
	if (c == 0)
		_exit(op(id, 0, -1, 0) == -1 && errno == EIDRM ? 0 : 1);
	wait_count(id, 0, GETNCNT, 1);
	CHECK_EQ(semctl(id, 0, IPC_RMID), 0);
	CHECK_EQ(child_status(c), 0);
}

static void test_undo(void)
{
	int id = semget(IPC_PRIVATE, 2, 0600), go[2];
	CHECK(id >= 0);
	CHECK_EQ(pipe(go), 0);
	setval(id, 0, 3);

	/* A process's SEM_UNDO operations are reversed when it exits. */
	pid_t c = fork();
	if (c == 0) {
		char x;
		if (op(id, 0, -2, SEM_UNDO) || op(id, 1, 5, SEM_UNDO) || op(id, 1, -1, 0))
			_exit(1);
		if (read(go[0], &x, 1) != 1)
			_exit(2);
		_exit(0);
	}
	wait_count(id, 0, GETNCNT, 0);
	for (int i = 0; i < 500 && getval(id, 1) != 4; i++)
		sleep_ms(10);
	CHECK_EQ(getval(id, 0), 1);
	CHECK_EQ(getval(id, 1), 4);
	maybe_save(); /* adjustments of a live process */
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EQ(child_status(c), 0);
	CHECK_EQ(getval(id, 0), 3);
	CHECK_EQ(getval(id, 1), 0); /* 4 - 5, clamped at 0 */
	CHECK_EQ(semctl(id, 1, GETPID), c);

	/* SETVAL voids the adjustments of that semaphore. */
	c = fork();
	if (c == 0) {
		char x;
		if (op(id, 0, -1, SEM_UNDO) || read(go[0], &x, 1) != 1)
			_exit(1);
		_exit(0);
	}
	for (int i = 0; i < 500 && getval(id, 0) != 2; i++)
		sleep_ms(10);
	setval(id, 0, 10);
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EQ(child_status(c), 0);
	CHECK_EQ(getval(id, 0), 10);
	CHECK_EQ(semctl(id, 0, IPC_RMID), 0);
	close(go[0]);
	close(go[1]);
}

/* Two processes take turns on a shared counter: semaphore 0 is the parent's turn, 1 the
 * child's. */
static void test_ping_pong(void)
{
	enum { ROUNDS = 200 };
	int sem = semget(IPC_PRIVATE, 2, 0600), shm = shmget(IPC_PRIVATE, 4096, 0600);
	CHECK(sem >= 0 && shm >= 0);
	volatile int *n = shmat(shm, NULL, 0);
	CHECK(n != (void *)-1);
	setval(sem, 0, 1);

	pid_t c = fork();
	if (c == 0) {
		for (int i = 0; i < ROUNDS; i++) {
			if (op(sem, 1, -1, 0))
				_exit(1);
			if (*n != 2 * i + 1)
				_exit(2);
			(*n)++;
			if (op(sem, 0, 1, 0))
				_exit(3);
		}
		_exit(0);
	}
	for (int i = 0; i < ROUNDS; i++) {
		CHECK_EQ(op(sem, 0, -1, 0), 0);
		CHECK_EQ(*n, 2 * i);
		(*n)++;
		if (i == ROUNDS / 2)
			maybe_save(); /* mid-game: the child waits on its semaphore */
		CHECK_EQ(op(sem, 1, 1, 0), 0);
	}
	CHECK_EQ(child_status(c), 0);
	CHECK_EQ(op(sem, 0, -1, 0), 0);
	CHECK_EQ(*n, 2 * ROUNDS);
	CHECK_EQ(semctl(sem, 0, IPC_RMID), 0);
	CHECK_EQ(shmctl(shm, IPC_RMID, NULL), 0);
	CHECK_EQ(shmdt((void *)n), 0);
}

int main(void)
{
	test_get_and_values();
	test_semop();
	test_blocking();
	test_undo();
	test_ping_pong();
	return check_done();
}
