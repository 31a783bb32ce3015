/*
 * t_syslog: the kernel log's calls (klogctl). Opening and closing do nothing, the buffer has
 * a size, a read of the whole log fits the buffer given (an empty one reads nothing), a NULL
 * buffer, a negative length, a console level outside 1..8 and an unknown command are EINVAL.
 * In the sandbox the log is empty, and a read that waits for a message ends only by a
 * signal (EINTR). Not natively: that read would take the host's messages from its syslog.
 * conformance: no-save the kernel log keeps no state a checkpoint carries
 */
#include "check.h"
#include <signal.h>
#include <sys/klog.h>

static void on_alarm(int sig)
{
	(void)sig;
}

int main(void)
{
	static char buf[1 << 16];

	CHECK_EQ(klogctl(0, NULL, 0), 0); /* close */
	CHECK_EQ(klogctl(1, NULL, 0), 0); /* open */
	int size = klogctl(10, NULL, 0);
	CHECK(size > 0);
	CHECK_EQ(klogctl(3, buf, 0), 0);
	int n = klogctl(3, buf, sizeof(buf));
	CHECK(n >= 0 && n <= (int)sizeof(buf));
	CHECK_ERR(klogctl(3, NULL, 10), EINVAL);
	CHECK_ERR(klogctl(3, buf, -1), EINVAL);
	CHECK_ERR(klogctl(8, NULL, 9), EINVAL);
	CHECK_ERR(klogctl(8, NULL, 0), EINVAL);
	CHECK_ERR(klogctl(99, NULL, 0), EINVAL);
	CHECK_ERR(klogctl(2, NULL, 10), EINVAL);
	if (in_sandbox()) {
		CHECK_EQ(n, 0);
		CHECK_EQ(klogctl(9, NULL, 0), 0); /* nothing unread */
		struct sigaction sa = {.sa_handler = on_alarm};
		CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
		alarm(1);
		CHECK_ERR(klogctl(2, buf, sizeof(buf)), EINTR);
	}
	return check_done();
}
