/* t_fork_cow: after fork, parent and child each see their own private memory, whoever writes
 * first and however the write comes: a store (static data, heap, stack, a private mapping),
 * the kernel filling a buffer (read, readv from a pipe), mprotect taking write away and giving
 * it back, madvise(MADV_DONTNEED) and munmap in one of them, a grandchild, and a thread of the
 * parent writing all along while its process forks. MAP_SHARED memory stays shared, and a
 * private futex word is the process's own.
 * Each child reports by exit status: 0 when all it saw was right. */
#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#define FUTEX_WAIT 0 /* <linux/futex.h>, which musl-gcc cannot see */
#define FUTEX_WAKE 1

static int data_word = 1;
static char big[256 * 1024] = {1};

static int wait_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_stores_stay_private(void)
{
	int stack_word = 10;
	int *heap = malloc(sizeof(int) * 1024);
	char *priv = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(heap != NULL && priv != MAP_FAILED && shared != MAP_FAILED);
	heap[5] = 100;
	priv[4096] = 'p';
	*shared = 0;
	big[200000] = 7;
	int p[2];
	CHECK_EQ(pipe(p), 0);
	pid_t child = fork();
	if (child == 0) {
		char go;
		/* What the parent writes after the fork is not seen here. */
		if (read(p[0], &go, 1) != 1)
			_exit(10);
		int bad = data_word != 1 || stack_word != 10 || heap[5] != 100 ||
			  priv[4096] != 'p' || big[200000] != 7;
		data_word = 3, stack_word = 30, heap[5] = 300, priv[4096] = 'c';
		big[200000] = 9;
		*shared = 42;
		_exit(bad ? 11 : 0);
	}
	data_word = 2, stack_word = 20, heap[5] = 200, priv[4096] = 'P';
	big[200000] = 8;
	CHECK_EQ(write(p[1], "g", 1), 1);
	CHECK_EQ(wait_status(child), 0);
	/* Nor what the child wrote, except through the shared mapping. */
	CHECK_EQ(data_word, 2);
	CHECK_EQ(stack_word, 20);
	CHECK_EQ(heap[5], 200);
	CHECK_EQ(priv[4096], 'P');
	CHECK_EQ(big[200000], 8);
	CHECK_EQ(*shared, 42);
	close(p[0]);
	close(p[1]);
	free(heap);
	munmap(priv, 8192);
	munmap(shared, 4096);
}

static void test_kernel_writes_stay_private(void)
{
	static char buf[64] = "parent's";
	static char second[64] = "parent's too";
	int p[2];

	CHECK_EQ(pipe(p), 0);
	pid_t child = fork();
	if (child == 0) {
		/* The first write to these pages is the kernel's (read, readv). */
		struct iovec iov = {second, 5};
		if (read(p[0], buf, 5) != 5 || memcmp(buf, "child", 5) != 0)
			_exit(12);
		if (readv(p[0], &iov, 1) != 5 || memcmp(second, "again", 5) != 0)
			_exit(13);
		_exit(0);
	}
	CHECK_EQ(write(p[1], "childagain", 10), 10);
	CHECK_EQ(wait_status(child), 0);
	CHECK_STREQ(buf, "parent's");
	CHECK_STREQ(second, "parent's too");

	/* And the parent's own kernel writes after the fork do not reach a child. The child waits
	 * on a pipe of its own: on the parent's it could take a byte meant for the parent. */
	int go[2];
	CHECK_EQ(pipe(go), 0);
	child = fork();
	if (child == 0) {
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(14);
		_exit(strcmp(buf, "parent's") != 0 ? 15 : 0);
	}
	CHECK_EQ(write(p[1], "new!!", 5), 5);
	CHECK_EQ(read(p[0], buf, 5), 5);
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EQ(wait_status(child), 0);
	CHECK(memcmp(buf, "new!!", 5) == 0);
	close(p[0]);
	close(p[1]);
	close(go[0]);
	close(go[1]);
}

static void test_protect_advise_unmap_in_the_child(void)
{
	char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(m != MAP_FAILED);
	memset(m, 'x', 3 * 4096);
	pid_t child = fork();
	if (child == 0) {
		int bad = 0;
		bad |= mprotect(m, 4096, PROT_READ) != 0;
		bad |= m[0] != 'x';
		bad |= mprotect(m, 4096, PROT_READ | PROT_WRITE) != 0;
		m[0] = 'y';
		bad |= m[0] != 'y' || m[1] != 'x';
		bad |= madvise(m + 4096, 4096, MADV_DONTNEED) != 0;
		bad |= m[4096] != 0;
		bad |= munmap(m + 2 * 4096, 4096) != 0;
		_exit(bad ? 16 : 0);
	}
	CHECK_EQ(wait_status(child), 0);
	CHECK_EQ(m[0], 'x');
	CHECK_EQ(m[4096], 'x');
	CHECK_EQ(m[2 * 4096], 'x');
	munmap(m, 3 * 4096);
}

static void test_grandchild(void)
{
	int *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(word != MAP_FAILED);
	*word = 1;
	pid_t child = fork();
	if (child == 0) {
		pid_t grandchild = fork();
		if (grandchild == 0) {
			int ok = *word == 1;
			*word = 3;
			_exit(ok ? 0 : 17);
		}
		int st = wait_status(grandchild);
		int ok = st == 0 && *word == 1;
		*word = 2;
		_exit(ok ? 0 : 18);
	}
	CHECK_EQ(wait_status(child), 0);
	CHECK_EQ(*word, 1);
	munmap(word, 4096);
}

static atomic_long counter;
static atomic_int stop;

static void *count(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		atomic_fetch_add(&counter, 1);
	return NULL;
}

/* A thread of the parent writes all along; each child sees one value that does not move. */
static void test_fork_while_a_thread_writes(void)
{
	pthread_t th;

	CHECK_EQ(pthread_create(&th, NULL, count, NULL), 0);
	while (atomic_load(&counter) == 0)
		sched_yield();
	for (int i = 0; i < 5; i++) {
		pid_t child = fork();
		if (child == 0) {
			long seen = atomic_load(&counter);
			for (volatile int spin = 0; spin < 100000; spin++)
				;
			_exit(atomic_load(&counter) == seen ? 0 : 19);
		}
		CHECK_EQ(wait_status(child), 0);
	}
	/* The parent's thread goes on counting (given up to two seconds to show it). */
	long before = atomic_load(&counter);
	time_t deadline = time(NULL) + 2;
	while (atomic_load(&counter) == before && time(NULL) <= deadline)
		sched_yield();
	CHECK(atomic_load(&counter) > before);
	atomic_store(&stop, 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
}

/* A checkpoint while parent and child still share memory: after the restore each still sees
 * the values of the fork, and each one's writes stay its own. */
static void test_shared_across_a_checkpoint(void)
{
	static char page[3 * 4096];
	int p[2], q[2];

	memset(page, 'f', sizeof(page));
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);
	pid_t child = fork();
	if (child == 0) {
		char go;
		if (read(p[0], &go, 1) != 1)
			_exit(20);
		int bad = page[0] != 'f' || page[sizeof(page) - 1] != 'f';
		memset(page, 'c', sizeof(page));
		if (write(q[1], "d", 1) != 1)
			_exit(21);
		if (read(p[0], &go, 1) != 1)
			_exit(22);
		_exit(bad || page[4096] != 'c' ? 23 : 0);
	}
	maybe_save(); /* the child waits in read, sharing PAGE with us */
	CHECK_EQ(page[4096], 'f');
	CHECK_EQ(write(p[1], "g", 1), 1);
	char done;
	CHECK_EQ(read(q[0], &done, 1), 1);
	CHECK_EQ(page[4096], 'f'); /* the child's writes are its own */
	page[4096] = 'p';
	CHECK_EQ(write(p[1], "g", 1), 1);
	CHECK_EQ(wait_status(child), 0);
	CHECK_EQ(page[4096], 'p');
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/* A futex word in private memory is the address space's own: a child waking the word at
 * the same address (even without FUTEX_PRIVATE_FLAG) wakes nobody in the parent. */
static atomic_int word;
static long wait_result, wait_errno;

static void *wait_on_word(void *arg)
{
	struct timespec ts = {0, 300 * 1000 * 1000};

	(void)arg;
	errno = 0;
	wait_result = syscall(SYS_futex, &word, FUTEX_WAIT, 0, &ts, NULL, 0);
	wait_errno = errno;
	return NULL;
}

static void test_private_futex_words_are_per_process(void)
{
	pthread_t th;

	CHECK_EQ(pthread_create(&th, NULL, wait_on_word, NULL), 0);
	usleep(50 * 1000); /* let it wait */
	pid_t child = fork();
	if (child == 0)
		_exit((int)syscall(SYS_futex, &word, FUTEX_WAKE, 1000, NULL, NULL, 0));
	CHECK_EQ(wait_status(child), 0); /* nobody woken in the child's memory */
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(wait_result, -1);
	CHECK_EQ(wait_errno, ETIMEDOUT); /* nor in ours */
}

int main(void)
{
	test_stores_stay_private();
	test_kernel_writes_stay_private();
	maybe_save(); /* memory shared by nobody now, some of it never written since a fork */
	test_protect_advise_unmap_in_the_child();
	test_grandchild();
	test_fork_while_a_thread_writes();
	test_private_futex_words_are_per_process();
	test_shared_across_a_checkpoint();
	return check_done();
}
