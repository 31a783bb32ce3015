/*
 * t_pthreads: threads through libc. Eight threads share memory and a mutex-protected counter,
 * rendezvous at a barrier (one serial thread), ping-pong on a condition variable and return
 * values to pthread_join; each has its own tid and TLS but the process's pid. Signals: a
 * thread-directed one runs on that thread, a process-directed one on a thread not blocking it;
 * pthread_cancel interrupts a blocking read. Exit: a thread's exit_group ends the process
 * with its status; the main thread leaving with pthread_exit does not.
 */
#include "check.h"
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

#define NTHREADS 8
#define ITERS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static pthread_barrier_t barrier;
static __thread long tls_value = 11;
static pid_t tids[NTHREADS];
static int serial_count;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

struct worker {
	int index;
	pid_t pid_seen;
	long tls_seen_initial, tls_seen_after;
};

static void *worker(void *arg)
{
	struct worker *w = arg;

	w->pid_seen = getpid();
	tids[w->index] = gettid_();
	w->tls_seen_initial = tls_value;
	tls_value = 1000 + w->index;
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	int r = pthread_barrier_wait(&barrier);
	if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
		pthread_mutex_lock(&lock);
		serial_count++;
		pthread_mutex_unlock(&lock);
	}
	/* Everybody has written their TLS by now; ours is still ours. */
	w->tls_seen_after = tls_value;
	return (void *)(intptr_t)(w->index * 3 + 1);
}

static void test_workers(void)
{
	pthread_t th[NTHREADS];
	struct worker w[NTHREADS];

	CHECK_EQ(pthread_barrier_init(&barrier, NULL, NTHREADS), 0);
	tls_value = 5;
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){.index = i};
		CHECK_EQ(pthread_create(&th[i], NULL, worker, &w[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		void *ret = NULL;
		CHECK_EQ(pthread_join(th[i], &ret), 0);
		CHECK_EQ((intptr_t)ret, i * 3 + 1);
	}
	CHECK_EQ(counter, (long)NTHREADS * ITERS);
	CHECK_EQ(serial_count, 1);
	CHECK_EQ(tls_value, 5);
	for (int i = 0; i < NTHREADS; i++) {
		CHECK_EQ(w[i].pid_seen, getpid());
		CHECK_EQ(w[i].tls_seen_initial, 11); /* a new thread's TLS starts from the image */
		CHECK_EQ(w[i].tls_seen_after, 1000 + i);
		CHECK(tids[i] > 0);
		CHECK(tids[i] != getpid());
		for (int j = 0; j < i; j++)
			CHECK(tids[i] != tids[j]);
	}
	CHECK_EQ(gettid_(), getpid()); /* the main thread's tid is the pid */
	CHECK_EQ(pthread_barrier_destroy(&barrier), 0);
}

/* Ping-pong: the turn alternates strictly between two threads. */
static pthread_mutex_t pp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond = PTHREAD_COND_INITIALIZER;
static int pp_turn, pp_rounds, pp_errors;
#define PP_ROUNDS 2000

static void *ping_pong(void *arg)
{
	int me = (int)(intptr_t)arg;

	pthread_mutex_lock(&pp_lock);
	while (pp_rounds < PP_ROUNDS) {
		while (pp_turn != me && pp_rounds < PP_ROUNDS)
			pthread_cond_wait(&pp_cond, &pp_lock);
		if (pp_rounds >= PP_ROUNDS)
			break;
		if (pp_rounds % 2 != me)
			pp_errors++;
		pp_rounds++;
		pp_turn = !me;
		pthread_cond_broadcast(&pp_cond);
	}
	pthread_mutex_unlock(&pp_lock);
	return NULL;
}

static void test_condvar_ping_pong(void)
{
	pthread_t a, b;

	/* Both threads block on the mutex we hold until the save point has passed. */
	pthread_mutex_lock(&pp_lock);
	CHECK_EQ(pthread_create(&a, NULL, ping_pong, (void *)0), 0);
	CHECK_EQ(pthread_create(&b, NULL, ping_pong, (void *)1), 0);
	struct timespec d = {0, 20 * 1000 * 1000};
	nanosleep(&d, NULL);
	maybe_save(); /* threads blocked on a futex */
	pthread_mutex_unlock(&pp_lock);
	CHECK_EQ(pthread_join(a, NULL), 0);
	CHECK_EQ(pthread_join(b, NULL), 0);
	CHECK_EQ(pp_rounds, PP_ROUNDS);
	CHECK_EQ(pp_errors, 0);

	/* A timed wait with nobody signalling times out. */
	struct timespec abs;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 30 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&pp_lock);
	CHECK_EQ(pthread_cond_timedwait(&pp_cond, &pp_lock, &abs), ETIMEDOUT);
	pthread_mutex_unlock(&pp_lock);
}

/* Signals and threads. */
static volatile pid_t handler_tid;
static volatile int handler_runs;

/* Spins (yielding) until *flag is set, for at most two seconds. */
static int wait_for(volatile int *flag)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (*flag == 0) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 2)
			return 0;
	}
	return 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	handler_tid = gettid_();
	handler_runs++;
}

struct sig_thread {
	pid_t tid;
	int ready[2], done[2];
	int unblock; /* whether this thread leaves SIGUSR1 unblocked */
};

static void *sig_thread(void *arg)
{
	struct sig_thread *st = arg;
	sigset_t set;
	char c;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(st->unblock ? SIG_UNBLOCK : SIG_BLOCK, &set, NULL);
	st->tid = gettid_();
	if (write(st->ready[1], "r", 1) != 1)
		return NULL;
	/* The handler interrupts this read (EINTR: no SA_RESTART), then we wait for "done". */
	while (read(st->done[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void test_signals_and_threads(void)
{
	struct sigaction sa = {.sa_handler = on_usr1};
	sigset_t set, old;
	char c;

	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	struct sig_thread st = {.unblock = 1};
	CHECK_EQ(pipe(st.ready), 0);
	CHECK_EQ(pipe(st.done), 0);
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, sig_thread, &st), 0);
	CHECK_EQ(read(st.ready[0], &c, 1), 1);

	/* Thread-directed: pthread_kill (tgkill) runs the handler on that thread. */
	handler_runs = 0;
	CHECK_EQ(pthread_kill(t, SIGUSR1), 0);
	CHECK(wait_for(&handler_runs));
	CHECK_EQ(handler_tid, st.tid);

	/* Process-directed while the main thread blocks it: the other thread takes it. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
	handler_runs = 0;
	handler_tid = 0;
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK(wait_for(&handler_runs));
	CHECK_EQ(handler_tid, st.tid);
	CHECK_EQ(handler_runs, 1);

	/* tgkill to our own main thread while blocked: pending for that thread only. */
	CHECK_EQ(syscall(SYS_tgkill, getpid(), gettid_(), SIGUSR1), 0);
	sigset_t pending;
	CHECK_EQ(sigpending(&pending), 0);
	CHECK(sigismember(&pending, SIGUSR1));
	CHECK_EQ(handler_runs, 1);
	CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	CHECK_EQ(handler_runs, 2);
	CHECK_EQ(handler_tid, gettid_());

	CHECK_ERR(syscall(SYS_tgkill, getpid() + 0x7fffff, gettid_(), SIGUSR1), ESRCH);
	CHECK_ERR(syscall(SYS_tgkill, getpid(), st.tid, 65), EINVAL);
	CHECK_EQ(write(st.done[1], "d", 1), 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	signal(SIGUSR1, SIG_DFL);
	for (int i = 0; i < 2; i++) {
		close(st.ready[i]);
		close(st.done[i]);
	}
}

static void *blocked_reader(void *arg)
{
	char c;

	(void)read(*(int *)arg, &c, 1); /* a cancellation point */
	return (void *)1;
}

static void test_cancel_blocked_read(void)
{
	int p[2];
	pthread_t t;
	void *ret = NULL;

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pthread_create(&t, NULL, blocked_reader, &p[0]), 0);
	struct timespec d = {0, 20 * 1000 * 1000};
	nanosleep(&d, NULL);
	CHECK_EQ(pthread_cancel(t), 0);
	CHECK_EQ(pthread_join(t, &ret), 0);
	CHECK(ret == PTHREAD_CANCELED);
	close(p[0]);
	close(p[1]);
}

static void *exit_group_from_thread(void *arg)
{
	(void)arg;
	syscall(SYS_exit_group, 9);
	return NULL;
}

static void *exit_later(void *arg)
{
	struct timespec d = {0, 30 * 1000 * 1000};

	nanosleep(&d, NULL);
	/* The main thread is gone; getpid is still the process's. */
	exit(getpid() == *(pid_t *)arg ? 5 : 6);
}

static void test_process_exit_with_threads(void)
{
	int status;

	/* A non-main thread's exit_group ends all threads with its status. */
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, exit_group_from_thread, NULL) != 0)
			_exit(100);
		for (;;)
			pause();
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 9);

	/* The main thread exits alone (pthread_exit); the process lives on in the other. */
	pid = fork();
	if (pid == 0) {
		static pid_t me;
		pthread_t t;
		me = getpid();
		if (pthread_create(&t, NULL, exit_later, &me) != 0)
			_exit(100);
		pthread_exit(NULL);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 5);
}

static void *detached(void *arg)
{
	int fd = *(int *)arg;

	(void)write(fd, "x", 1);
	return NULL;
}

static void test_detached(void)
{
	int p[2];
	pthread_t t;
	pthread_attr_t attr;
	char c;

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pthread_attr_init(&attr), 0);
	CHECK_EQ(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED), 0);
	CHECK_EQ(pthread_attr_setstacksize(&attr, 128 * 1024), 0);
	CHECK_EQ(pthread_create(&t, &attr, detached, &p[1]), 0);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(pthread_attr_destroy(&attr), 0);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	test_workers();
	test_condvar_ping_pong();
	test_signals_and_threads();
	test_cancel_blocked_read();
	test_process_exit_with_threads();
	test_detached();
	return check_done();
}
