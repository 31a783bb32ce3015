/*
 * t_sysv_msg: System V message queues. msgget's key rules, msgsnd's checks (type < 1, size past
 * MSGMAX), msgrcv by type (0: the first, > 0: the first of that type, or of another with
 * MSG_EXCEPT, < 0: the first of the lowest type at most |type|), E2BIG and MSG_NOERROR,
 * ENOMSG/EAGAIN with IPC_NOWAIT, MSG_COPY, msqid_ds bookkeeping (qnum, cbytes, qbytes, lspid,
 * lrpid), IPC_SET of msg_qbytes, a sender blocked on a full queue and a receiver blocked on an
 * empty one (woken across a checkpoint), EINTR with SA_RESTART, EIDRM on IPC_RMID, and the
 * kernel.msgmax and msgmnb sysctls.
 */
#include "check.h"
#include <signal.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#ifndef MSG_COPY
#define MSG_COPY 040000 /* musl's headers lack it */
#endif

struct m {
	long type;
	char text[64];
};

static int snd(int id, long type, const char *text, int flg)
{
	struct m m = {.type = type};
	strncpy(m.text, text, sizeof(m.text) - 1);
	return msgsnd(id, &m, strlen(text) + 1, flg);
}

/* Receives into M; returns the size or -1. */
static long rcv(int id, struct m *m, long type, int flg)
{
	memset(m, 0, sizeof(*m));
	return msgrcv(id, m, sizeof(m->text), type, flg);
}

static struct msqid_ds stat_of(int id)
{
	struct msqid_ds ds;

	memset(&ds, 0, sizeof(ds));
	CHECK_EQ(msgctl(id, IPC_STAT, &ds), 0);
	return ds;
}

static void sleep_ms(int ms)
{
	struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&d, NULL);
}

static int child_status(pid_t c)
{
	int st;
	CHECK_EQ(waitpid(c, &st, 0), c);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_get(void)
{
	key_t key = (key_t)(0x5e200000 | ((getpid() & 0xffff) << 4));

	CHECK_ERR(msgget(key, 0600), ENOENT);
	int id = msgget(key, IPC_CREAT | IPC_EXCL | 0640);
	CHECK(id >= 0);
	CHECK_ERR(msgget(key, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	CHECK_EQ(msgget(key, 0), id);
	struct msqid_ds ds = stat_of(id);
	CHECK_EQ(ds.msg_perm.__key, key);
	CHECK_EQ(ds.msg_perm.mode & 0777, 0640);
	CHECK_EQ(ds.msg_qnum, 0);
	CHECK_EQ(ds.__msg_cbytes, 0);
	CHECK_EQ(ds.msg_qbytes, 16384);
	CHECK_EQ(ds.msg_lspid, 0);
	CHECK(ds.msg_ctime != 0);

	struct msginfo mi;
	CHECK(msgctl(0, IPC_INFO, (struct msqid_ds *)&mi) >= 0);
	CHECK_EQ(mi.msgmax, 8192);
	CHECK_EQ(mi.msgmnb, 16384);
	CHECK(msgctl(0, MSG_INFO, (struct msqid_ds *)&mi) >= 0);
	CHECK(mi.msgpool >= 1);
	CHECK_EQ(msgctl(id % 32768, MSG_STAT, &ds), id);
	CHECK_ERR(msgctl(id, 999, &ds), EINVAL);
	CHECK_EQ(msgctl(id, IPC_RMID, NULL), 0);
	CHECK_ERR(msgctl(id, IPC_STAT, &ds), EINVAL);
	CHECK_ERR(snd(id, 1, "x", 0), EINVAL);
}

static void test_types(void)
{
	int id = msgget(IPC_PRIVATE, 0600);
	struct m m;
	CHECK(id >= 0);

	CHECK_ERR(snd(id, 0, "zero", 0), EINVAL);
	CHECK_ERR(snd(id, -3, "neg", 0), EINVAL);
	CHECK_ERR(msgsnd(id, &m, 8193, 0), EINVAL);
	CHECK_ERR(msgsnd(id, BAD_PTR, 4, 0), EFAULT);
	CHECK_ERR(rcv(id, &m, 0, IPC_NOWAIT), ENOMSG);

	CHECK_EQ(snd(id, 3, "three", 0), 0);
	CHECK_EQ(snd(id, 1, "one", 0), 0);
	CHECK_EQ(snd(id, 2, "two-a", 0), 0);
	CHECK_EQ(snd(id, 2, "two-b", 0), 0);
	CHECK_EQ(snd(id, 5, "five", 0), 0);
	CHECK_EQ(msgsnd(id, &(long){7}, 0, 0), 0); /* an empty message */
	struct msqid_ds ds = stat_of(id);
	CHECK_EQ(ds.msg_qnum, 6);
	CHECK_EQ(ds.__msg_cbytes, 6 + 4 + 6 + 6 + 5);
	CHECK_EQ(ds.msg_lspid, getpid());
	CHECK(ds.msg_stime != 0);
	maybe_save(); /* messages queued */

	/* MSG_COPY reads by position and takes nothing. */
	errno = 0;
	long r = msgrcv(id, &m, sizeof(m.text), 1, MSG_COPY | IPC_NOWAIT);
	if (!(r == -1 && errno == ENOSYS)) { /* a kernel without CONFIG_CHECKPOINT_RESTORE */
		CHECK_EQ(r, 4);
		CHECK_EQ(m.type, 1);
		CHECK_STREQ(m.text, "one");
		CHECK_ERR(msgrcv(id, &m, sizeof(m.text), 6, MSG_COPY | IPC_NOWAIT), ENOMSG);
		CHECK_ERR(msgrcv(id, &m, sizeof(m.text), -1, MSG_COPY | IPC_NOWAIT), ENOMSG);
		CHECK_ERR(msgrcv(id, &m, sizeof(m.text), 0, MSG_COPY), EINVAL);
		CHECK_EQ(stat_of(id).msg_qnum, 6);
	}

	/* Too small a buffer: E2BIG and the message stays; MSG_NOERROR cuts it. */
	CHECK_ERR(msgrcv(id, &m, 3, 3, IPC_NOWAIT), E2BIG);
	memset(&m, 0, sizeof(m));
	CHECK_EQ(msgrcv(id, &m, 3, 3, IPC_NOWAIT | MSG_NOERROR), 3);
	CHECK_EQ(m.type, 3);
	CHECK_EQ(memcmp(m.text, "thr", 3), 0);
	CHECK_EQ(m.text[3], 0);
	/* A positive type: the first of it; with MSG_EXCEPT, the first of another. */
	CHECK_EQ(rcv(id, &m, 2, IPC_NOWAIT), 6);
	CHECK_STREQ(m.text, "two-a");
	CHECK_EQ(rcv(id, &m, 1, IPC_NOWAIT | MSG_EXCEPT), 6);
	CHECK_STREQ(m.text, "two-b");
	CHECK_ERR(rcv(id, &m, 4, IPC_NOWAIT), ENOMSG);
	/* A negative type: the lowest type at most |type|. */
	CHECK_EQ(rcv(id, &m, -6, IPC_NOWAIT), 4);
	CHECK_STREQ(m.text, "one");
	CHECK_ERR(rcv(id, &m, -4, IPC_NOWAIT), ENOMSG);
	CHECK_EQ(rcv(id, &m, -6, IPC_NOWAIT), 5);
	CHECK_EQ(m.type, 5);
	/* Zero: the first. */
	CHECK_EQ(rcv(id, &m, 0, IPC_NOWAIT), 0);
	CHECK_EQ(m.type, 7);
	ds = stat_of(id);
	CHECK_EQ(ds.msg_qnum, 0);
	CHECK_EQ(ds.__msg_cbytes, 0);
	CHECK_EQ(ds.msg_lrpid, getpid());
	CHECK(ds.msg_rtime != 0);
	CHECK_ERR(msgrcv(id, &m, -1, 0, IPC_NOWAIT), EINVAL);
	CHECK_EQ(msgctl(id, IPC_RMID, NULL), 0);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void test_blocking(void)
{
	int id = msgget(IPC_PRIVATE, 0600);
	struct m m;
	CHECK(id >= 0);

	/* A receiver waits for its type; another type does not wake it for good. */
	pid_t c = fork();
	if (c == 0) {
		struct m in;
		if (rcv(id, &in, 5, 0) != 6 || strcmp(in.text, "hello"))
			_exit(1);
		_exit(0);
	}
	sleep_ms(50);
	maybe_save(); /* a receiver blocked */
	CHECK_EQ(snd(id, 4, "other", 0), 0);
	sleep_ms(30);
	CHECK_EQ(stat_of(id).msg_qnum, 1);
	CHECK_EQ(snd(id, 5, "hello", 0), 0);
	CHECK_EQ(child_status(c), 0);
	CHECK_EQ(rcv(id, &m, 0, IPC_NOWAIT), 6);
	CHECK_STREQ(m.text, "other");

	/* A full queue: IPC_NOWAIT is EAGAIN, a blocking sender waits for room. */
	struct msqid_ds ds = stat_of(id);
	ds.msg_qbytes = 20;
	CHECK_EQ(msgctl(id, IPC_SET, &ds), 0);
	CHECK_EQ(stat_of(id).msg_qbytes, 20);
	CHECK_EQ(snd(id, 1, "0123456789", 0), 0); /* 11 bytes */
	CHECK_ERR(snd(id, 1, "0123456789", IPC_NOWAIT), EAGAIN);
	c = fork();
	if (c == 0)
		_exit(snd(id, 2, "abcdefghi", 0) == 0 ? 0 : 1);
	sleep_ms(50);
	maybe_save(); /* a sender blocked on a full queue */
	CHECK_EQ(stat_of(id).msg_qnum, 1);
	CHECK_EQ(rcv(id, &m, 0, 0), 11);
	CHECK_EQ(child_status(c), 0);
	CHECK_EQ(rcv(id, &m, 0, IPC_NOWAIT), 10);
	CHECK_STREQ(m.text, "abcdefghi");

	/* A signal ends a wait with EINTR even with SA_RESTART. */
	c = fork();
	if (c == 0) {
		struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
		struct itimerval it = {.it_value = {0, 50000}};
		struct m in;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		_exit(rcv(id, &in, 0, 0) == -1 && errno == EINTR ? 0 : 1);
	}
	CHECK_EQ(child_status(c), 0);

	/* IPC_RMID ends every wait with EIDRM. */
	c = fork();
	if (c == 0) {
		struct m in;
		_exit(rcv(id, &in, 0, 0) == -1 && errno == EIDRM ? 0 : 1);
	}
	sleep_ms(50);
	CHECK_EQ(msgctl(id, IPC_RMID, NULL), 0);
	CHECK_EQ(child_status(c), 0);
}

static void test_perms(void)
{
	if (geteuid() != 0)
		return;
	int id = msgget(IPC_PRIVATE, 0620);
	CHECK(id >= 0);
	CHECK_EQ(snd(id, 1, "x", 0), 0);
	pid_t c = fork();
	if (c == 0) {
		struct m m;
		struct msqid_ds ds;
		check_failures = 0;
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		CHECK_ERR(rcv(id, &m, 0, IPC_NOWAIT), EACCES);
		CHECK_ERR(snd(id, 1, "y", IPC_NOWAIT), EACCES);
		CHECK_ERR(msgctl(id, IPC_STAT, &ds), EACCES);
		CHECK_ERR(msgctl(id, IPC_RMID, NULL), EPERM);
		_exit(check_failures != 0);
	}
	CHECK_EQ(child_status(c), 0);
	CHECK_EQ(msgctl(id, IPC_RMID, NULL), 0);
}

static void write_sysctl(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fputs(value, f) >= 0);
	CHECK_EQ(fclose(f), 0);
}

/* The limits are the sandbox's: a write of kernel.msgmax and msgmnb changes what msgsnd
 * accepts and what a new queue holds, and a checkpoint keeps them. (Natively that would change
 * the host's, so only in the sandbox.) */
static void test_limits(void)
{
	if (!in_sandbox())
		return;
	struct {
		long type;
		char text[200];
	} m = {.type = 1};
	write_sysctl("/proc/sys/kernel/msgmax", "100");
	write_sysctl("/proc/sys/kernel/msgmnb", "300");
	int id = msgget(IPC_PRIVATE, 0600);
	CHECK(id >= 0);
	CHECK_EQ(stat_of(id).msg_qbytes, 300);
	CHECK_ERR(msgsnd(id, &m, 101, 0), EINVAL);
	maybe_save(); /* changed limits */
	CHECK_ERR(msgsnd(id, &m, 101, 0), EINVAL);
	CHECK_EQ(msgsnd(id, &m, 100, 0), 0);
	struct msginfo mi;
	CHECK(msgctl(0, IPC_INFO, (struct msqid_ds *)&mi) >= 0);
	CHECK_EQ(mi.msgmax, 100);
	CHECK_EQ(mi.msgmnb, 300);
	FILE *f = fopen("/proc/sys/kernel/msgmax", "w");
	CHECK(f != NULL);
	if (f) {
		fputs("-5", f);
		CHECK(fclose(f) == EOF && errno == EINVAL);
	}
	write_sysctl("/proc/sys/kernel/msgmax", "8192");
	write_sysctl("/proc/sys/kernel/msgmnb", "16384");
	CHECK_EQ(msgsnd(id, &m, 150, IPC_NOWAIT), 0); /* past the old msgmax */
	CHECK_EQ(msgctl(id, IPC_RMID, NULL), 0);
}

int main(void)
{
	test_get();
	test_types();
	test_blocking();
	test_perms();
	test_limits();
	return check_done();
}
