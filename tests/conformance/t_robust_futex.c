/*
 * t_robust_futex: robust mutexes (set_robust_list). A lock held by a thread that exits, or by
 * a process that dies, passes to the next locker with EOWNERDEAD, including one already
 * blocked waiting for it; pthread_mutex_consistent makes it usable again, and a lock left
 * unrecoverable is ENOTRECOVERABLE. The kernel does it by walking the dead thread's list:
 * the word gets FUTEX_OWNER_DIED. A lock held across a save point is released the same way
 * afterwards.
 */
#include "check.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

/* linux/futex.h's, which musl's headers do not have. */
#define FUTEX_WAITERS 0x80000000u
#define FUTEX_OWNER_DIED 0x40000000u
struct robust_list {
	struct robust_list *next;
};
struct robust_list_head {
	struct robust_list list;
	long futex_offset;
	struct robust_list *list_op_pending;
};

static pthread_mutex_t *new_robust(bool shared)
{
	pthread_mutexattr_t a;
	pthread_mutex_t *m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
				  MAP_ANONYMOUS | (shared ? MAP_SHARED : MAP_PRIVATE), -1, 0);

	CHECK(m != MAP_FAILED);
	CHECK_EQ(pthread_mutexattr_init(&a), 0);
	CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	if (shared)
		CHECK_EQ(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
	CHECK_EQ(pthread_mutex_init(m, &a), 0);
	pthread_mutexattr_destroy(&a);
	return m;
}

static void *lock_and_leave(void *arg)
{
	pthread_mutex_lock(arg);
	return NULL; /* the thread exits holding it */
}

static void test_thread_exit(void)
{
	pthread_mutex_t *m = new_robust(false);
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, lock_and_leave, m), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(pthread_mutex_lock(m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_consistent(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(pthread_mutex_lock(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);

	/* Left inconsistent, it cannot be taken again. */
	CHECK_EQ(pthread_create(&t, NULL, lock_and_leave, m), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(pthread_mutex_lock(m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(pthread_mutex_lock(m), ENOTRECOVERABLE);
}

/* A child process takes the shared lock and dies holding it (after a save point when SAVE);
 * the parent, blocked in pthread_mutex_lock meanwhile when WAIT, gets EOWNERDEAD. */
static void test_process_death(bool wait, bool save)
{
	pthread_mutex_t *m = new_robust(true);
	int ready[2], go[2];
	char c;

	CHECK_EQ(pipe(ready), 0);
	CHECK_EQ(pipe(go), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		if (pthread_mutex_lock(m) != 0)
			_exit(2);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		if (!wait) {
			struct timespec d = {0, 20 * 1000 * 1000};
			nanosleep(&d, NULL);
		}
		_exit(0); /* holding the lock */
	}
	close(ready[1]);
	close(go[0]);
	CHECK_EQ(read(ready[0], &c, 1), 1);
	if (save)
		maybe_save(); /* a robust lock held by another process */
	CHECK_EQ(pthread_mutex_trylock(m), EBUSY);
	CHECK_EQ(write(go[1], "g", 1), 1);
	if (!wait) {
		int status;
		CHECK_EQ(waitpid(pid, &status, 0), pid);
	}
	CHECK_EQ(pthread_mutex_lock(m), EOWNERDEAD); /* blocks until it dies when WAIT */
	CHECK_EQ(pthread_mutex_consistent(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	if (wait) {
		int status;
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	close(ready[0]);
	close(go[1]);
	munmap(m, sizeof(*m));
}

/* The word itself, with the list built by hand: the owner's tid gives way to OWNER_DIED and
 * the waiters bit stays. */
static void test_raw_word(void)
{
	struct robust_list_head *head;
	size_t len;
	uint32_t *word =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(word != MAP_FAILED);
	pid_t pid = fork();
	if (pid == 0) {
		/* The list's one entry is at word + 8; its lock word at offset -8. */
		static struct robust_list_head h;
		struct robust_list *entry = (struct robust_list *)(word + 2);
		h.list.next = entry;
		h.futex_offset = -8;
		h.list_op_pending = NULL;
		entry->next = &h.list;
		*word = (uint32_t)syscall(SYS_gettid) | FUTEX_WAITERS;
		if (syscall(SYS_set_robust_list, &h, sizeof(h)))
			_exit(2);
		if (syscall(SYS_get_robust_list, 0, &head, &len) || head != &h || len != sizeof(h))
			_exit(3);
		_exit(0);
	}
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(*word, FUTEX_OWNER_DIED | FUTEX_WAITERS);
	CHECK_ERR(syscall(SYS_set_robust_list, word, 23), EINVAL);
	munmap(word, 4096);
}

int main(void)
{
	test_thread_exit();
	test_process_death(false, true);
	test_process_death(true, false);
	test_raw_word();
	return check_done();
}
