/*
 * t_caps: capabilities as root sees them: capget agrees with /proc/self/status and the
 * bounding set with PR_CAPBSET_READ; capget/capset's version handshake and errors; capset may
 * only shrink permitted, keeps effective within permitted and inheritable within what is
 * allowed, and trims the ambient set; PR_CAP_AMBIENT, PR_CAPBSET_DROP, keepcaps and
 * securebits; setuid away from root clears the sets (or keeps permitted with keepcaps) and
 * seteuid toggles effective; execve gives root inheritable|bounding, others their ambient set.
 * In the sandbox root starts with every capability up to cap_last_cap.
 * conformance: native-proc
 * conformance: no-musl (musl-gcc has no <linux/capability.h>)
 */
#include "check.h"
#include <linux/capability.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define V1 _LINUX_CAPABILITY_VERSION_1
#define V3 _LINUX_CAPABILITY_VERSION_3

struct sets {
	uint64_t eff, prm, inh;
};

static int last_cap;

static long capget_raw(uint32_t version, int pid, void *data)
{
	struct __user_cap_header_struct h = {version, pid};
	return syscall(SYS_capget, &h, data);
}

static struct sets get(int pid)
{
	struct __user_cap_data_struct d[2] = {{0}};
	struct sets s = {0};
	CHECK_EQ(capget_raw(V3, pid, d), 0);
	s.eff = d[0].effective | (uint64_t)d[1].effective << 32;
	s.prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	s.inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return s;
}

static long set(struct sets s)
{
	struct __user_cap_header_struct h = {V3, 0};
	struct __user_cap_data_struct d[2] = {
	    {(uint32_t)s.eff, (uint32_t)s.prm, (uint32_t)s.inh},
	    {(uint32_t)(s.eff >> 32), (uint32_t)(s.prm >> 32), (uint32_t)(s.inh >> 32)}};
	return syscall(SYS_capset, &h, d);
}

static uint64_t status_field(const char *name)
{
	char line[256];
	uint64_t v = UINT64_MAX;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)))
			v = strtoull(line + strlen(name) + 2, NULL, 16);
	if (f)
		fclose(f);
	return v;
}

static uint64_t bounding(void)
{
	uint64_t b = 0;
	for (int c = 0; c <= last_cap; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			b |= UINT64_C(1) << c;
	return b;
}

static void check_status(void)
{
	struct sets s = get(0);
	CHECK_EQ(status_field("CapEff"), s.eff);
	CHECK_EQ(status_field("CapPrm"), s.prm);
	CHECK_EQ(status_field("CapInh"), s.inh);
	CHECK_EQ(status_field("CapBnd"), bounding());
}

/* Runs FN in a child; its exit status is the number of the first failed step (0: all good). */
static void in_child(int (*fn)(void), const char *what)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn());
	int status;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		dprintf(1, "%s: step %d failed\n", what,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#define STEP(n, cond)                                                                              \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return (n);                                                                \
	} while (0)

static const uint64_t NET_RAW = UINT64_C(1) << CAP_NET_RAW, BIND = UINT64_C(1)
								   << CAP_NET_BIND_SERVICE;

static int capset_rules(void)
{
	struct sets s = get(0);
	STEP(1, s.prm & NET_RAW && s.prm & BIND);
	STEP(2, set((struct sets){s.eff & ~NET_RAW, s.prm, 0}) == 0);
	STEP(3, get(0).eff == (s.eff & ~NET_RAW) && get(0).prm == s.prm);
	STEP(4, set((struct sets){s.eff, s.prm, 0}) == 0); /* effective back: within permitted */
	STEP(5, set((struct sets){s.eff & ~NET_RAW, s.prm & ~NET_RAW, 0}) == 0);
	errno = 0;
	STEP(6, set((struct sets){s.eff & ~NET_RAW, s.prm, 0}) == -1 && errno == EPERM);
	STEP(7, set((struct sets){s.eff, s.prm & ~NET_RAW, 0}) == -1 && errno == EPERM);
	STEP(8, set((struct sets){0, s.prm & ~NET_RAW, BIND}) == 0);
	STEP(9, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) == 0);
	STEP(10, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE, 0, 0) == 1);
	STEP(11, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW, 0, 0) == 0);
	errno = 0;
	STEP(12, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) == -1 &&
		     errno == EPERM);
	errno = 0;
	STEP(13, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, last_cap + 1, 0, 0) == -1 &&
		     errno == EINVAL);
	errno = 0;
	STEP(14, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE, 1, 0) == -1 &&
		     errno == EINVAL);
	errno = 0;
	STEP(15, prctl(PR_CAP_AMBIENT, 99, CAP_NET_BIND_SERVICE, 0, 0) == -1 && errno == EINVAL);
	STEP(16, status_field("CapAmb") == BIND);
	/* Taking the capability out of inheritable takes it out of ambient. */
	STEP(17, set((struct sets){0, s.prm & ~NET_RAW, 0}) == 0);
	STEP(18, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE, 0, 0) == 0);
	errno = 0;
	STEP(19, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 1, 0, 0) == -1 && errno == EINVAL);
	STEP(20, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0);
	/* Another process's sets cannot be set. */
	struct __user_cap_header_struct h = {V3, getppid()};
	struct __user_cap_data_struct d[2] = {{0}};
	errno = 0;
	STEP(21, syscall(SYS_capset, &h, d) == -1 && errno == EPERM);
	return 0;
}

static int bounding_and_securebits(void)
{
	STEP(1, prctl(PR_CAPBSET_READ, CAP_NET_RAW, 0, 0, 0) == 1);
	STEP(2, prctl(PR_CAPBSET_DROP, CAP_NET_RAW, 0, 0, 0) == 0);
	STEP(3, prctl(PR_CAPBSET_READ, CAP_NET_RAW, 0, 0, 0) == 0);
	STEP(4, get(0).prm & NET_RAW); /* the bounding set limits what execve gives, only */
	errno = 0;
	STEP(5, prctl(PR_CAPBSET_DROP, last_cap + 1, 0, 0, 0) == -1 && errno == EINVAL);
	STEP(6, prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) == 0);
	STEP(7, prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) == 0);
	STEP(8, prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0);
	STEP(9, prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) == 1);
	STEP(10, prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) == 0x10);
	errno = 0;
	STEP(11, prctl(PR_SET_KEEPCAPS, 2, 0, 0, 0) == -1 && errno == EINVAL);
	errno = 0;
	STEP(12, prctl(PR_SET_SECUREBITS, 1u << 30, 0, 0, 0) == -1 && errno == EPERM);
	STEP(13, prctl(PR_SET_SECUREBITS, 0x30, 0, 0, 0) == 0); /* keepcaps, locked */
	errno = 0;
	STEP(14, prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) == -1 && errno == EPERM);
	errno = 0;
	STEP(15, prctl(PR_SET_SECUREBITS, 0x20, 0, 0, 0) == -1 && errno == EPERM);
	/* Without CAP_SETPCAP neither bounding nor securebits change. */
	struct sets s = get(0);
	uint64_t setpcap = UINT64_C(1) << CAP_SETPCAP;
	STEP(16, set((struct sets){s.eff & ~setpcap, s.prm, s.inh}) == 0);
	errno = 0;
	STEP(17, prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) == -1 && errno == EPERM);
	errno = 0;
	STEP(18, prctl(PR_SET_SECUREBITS, 0x30, 0, 0, 0) == -1 && errno == EPERM);
	return 0;
}

static int setuid_drops(void)
{
	struct sets s = get(0);
	STEP(1, seteuid(65534) == 0);
	STEP(2, get(0).eff == 0 && get(0).prm == s.prm);
	STEP(3, seteuid(0) == 0);
	STEP(4, get(0).eff == s.prm);
	STEP(5, setresuid(65534, 65534, 65534) == 0);
	STEP(6, get(0).eff == 0 && get(0).prm == 0 && get(0).inh == 0);
	errno = 0;
	STEP(7, setuid(0) == -1 && errno == EPERM);
	return 0;
}

static int keepcaps_keeps_permitted(void)
{
	struct sets s = get(0);
	STEP(1, set((struct sets){s.eff, s.prm, BIND}) == 0);
	STEP(2, prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0);
	STEP(3, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) == 0);
	STEP(4, setresuid(65534, 65534, 65534) == 0);
	STEP(5, get(0).eff == 0 && get(0).prm == s.prm && get(0).inh == BIND);
	STEP(6, status_field("CapAmb") == 0); /* the ambient set goes anyway */
	STEP(7, prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) == 0);
	/* An ordinary user's exec: its ambient set becomes permitted and effective. */
	execl("/proc/self/exe", "t_caps", "after-exec-user", (char *)NULL);
	return 8;
}

static int root_exec(void)
{
	struct sets s = get(0);
	/* Root loses NET_RAW from its sets but not from the bounding set: exec gives it back. */
	STEP(1, set((struct sets){s.eff & ~NET_RAW, s.prm & ~NET_RAW, 0}) == 0);
	execl("/proc/self/exe", "t_caps", "after-exec-root", (char *)NULL);
	return 2;
}

int main(int argc, char **argv)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	CHECK(f && fscanf(f, "%d", &last_cap) == 1);
	if (f)
		fclose(f);
	CHECK(last_cap >= CAP_CHECKPOINT_RESTORE && last_cap < 63);
	if (argc == 2 && !strcmp(argv[1], "after-exec-user")) {
		struct sets s = get(0);
		return s.prm == BIND && s.eff == BIND && s.inh == BIND &&
			       status_field("CapAmb") == BIND
			   ? 0
			   : 30;
	}
	if (argc == 2 && !strcmp(argv[1], "after-exec-root")) {
		struct sets s = get(0);
		return s.prm == bounding() && s.eff == s.prm && s.inh == 0 ? 0 : 31;
	}

	uint64_t all = (UINT64_C(1) << (last_cap + 1)) - 1;
	struct sets s = get(0);
	CHECK_EQ(getuid(), 0);
	CHECK_EQ(s.inh, 0);
	CHECK((s.eff & ~s.prm) == 0);
	CHECK((s.prm & ~all) == 0);
	CHECK_EQ(bounding() & ~all, 0);
	if (in_sandbox()) {
		CHECK_EQ(s.eff, all);
		CHECK_EQ(s.prm, all);
		CHECK_EQ(bounding(), all);
	}
	check_status();
	CHECK_EQ(status_field("CapAmb"), 0);
	CHECK_ERR(prctl(PR_CAPBSET_READ, last_cap + 1, 0, 0, 0), EINVAL);
	CHECK_ERR(prctl(PR_CAPBSET_READ, -1, 0, 0, 0), EINVAL);

	/* The version handshake. */
	struct __user_cap_header_struct h = {0, 0};
	struct __user_cap_data_struct d[2];
	CHECK_ERR(syscall(SYS_capget, &h, d), EINVAL);
	CHECK_EQ(h.version, V3);
	h.version = 0;
	CHECK_EQ(syscall(SYS_capget, &h, NULL), 0);
	CHECK_EQ(h.version, V3);
	h.version = 0;
	CHECK_ERR(syscall(SYS_capset, &h, d), EINVAL);
	CHECK_EQ(h.version, V3);
	memset(d, 0xa5, sizeof(d));
	CHECK_EQ(capget_raw(V1, 0, d), 0);
	CHECK_EQ(d[0].effective, (uint32_t)s.eff);
	CHECK_EQ(d[1].effective, 0xa5a5a5a5u); /* version 1 moves one word */
	CHECK_EQ(capget_raw(V3, 0, NULL), 0);
	CHECK_ERR(capget_raw(V3, -1, d), EINVAL);
	CHECK_ERR(capget_raw(V3, 999999, d), ESRCH);
	CHECK_ERR(capget_raw(V3, 0, BAD_PTR), EFAULT);
	CHECK_ERR(syscall(SYS_capget, BAD_PTR, d), EFAULT);
	CHECK_ERR(syscall(SYS_capset, BAD_PTR, d), EFAULT);
	h = (struct __user_cap_header_struct){V3, 0};
	CHECK_ERR(syscall(SYS_capset, &h, BAD_PTR), EFAULT);
	/* Bits past cap_last_cap are dropped, not refused. */
	CHECK_EQ(set((struct sets){s.eff | (UINT64_C(1) << 62), s.prm | (UINT64_C(1) << 62), 0}),
		 0);
	CHECK_EQ(get(0).prm, s.prm);

	/* Another process's sets. */
	pid_t kid = fork();
	if (kid == 0) {
		pause();
		_exit(0);
	}
	CHECK_EQ(get(kid).prm, s.prm);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);

	/* This process drops something for good: it stays dropped across a checkpoint. */
	CHECK_EQ(prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT, 0, 0, 0), 0);
	CHECK_EQ(set((struct sets){s.eff & ~(UINT64_C(1) << CAP_SYS_BOOT), s.prm, BIND}), 0);
	CHECK_EQ(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0), 0);
	maybe_save(); /* the sets, the ambient set and the bounding set */
	CHECK_EQ(prctl(PR_CAPBSET_READ, CAP_SYS_BOOT, 0, 0, 0), 0);
	CHECK_EQ(get(0).eff, s.eff & ~(UINT64_C(1) << CAP_SYS_BOOT));
	CHECK_EQ(get(0).inh, BIND);
	CHECK_EQ(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE, 0, 0), 1);
	check_status();
	CHECK_EQ(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), 0);
	CHECK_EQ(set(s), 0);

	in_child(capset_rules, "capset rules");
	in_child(bounding_and_securebits, "bounding set and securebits");
	in_child(setuid_drops, "setuid");
	in_child(keepcaps_keeps_permitted, "keepcaps and an ordinary user's exec");
	in_child(root_exec, "root's exec");
	return check_done();
}
