/* linux.seccomp of config.json compiled into a classic BPF program with libseccomp, the way
 * runc builds the filter it installs before it starts a container's process. Checked member
 * by member (the profile comes with the bundle), exported through a memfd, and refused when
 * the program would be more than the kernel takes (BPF_MAXINSNS). */
#include "oci/seccomp.h"

#include <ctype.h>
#include <errno.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/json.h"

#define BPF_MAX_INSNS 4096

static int bad(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -1;
}

/* ERRNO_RET (an errnoRet member, or NULL) as an errno for SCMP_ACT_ERRNO/TRACE: EPERM when
 * absent, as runc. -1 when it is not an integer in 0..65535. */
static int errno_ret(const struct json *v)
{
	int64_t n;

	if (!v)
		return EPERM;
	if (!json_int(v, &n) || n < 0 || n > 0xffff)
		return -1;
	return (int)n;
}

/* The libseccomp action NAME asks for, with ERRNO for those that carry one: 0 and *ACT, or -1
 * with the reason in ERR. */
static int parse_action(const char *name, int err_no, const char *what, uint32_t *act, char *err,
			size_t size)
{
	if (!name)
		return bad(err, size, "%s must be a string", what);
	if (!strcmp(name, "SCMP_ACT_KILL") || !strcmp(name, "SCMP_ACT_KILL_THREAD"))
		*act = SCMP_ACT_KILL_THREAD;
	else if (!strcmp(name, "SCMP_ACT_KILL_PROCESS"))
		*act = SCMP_ACT_KILL_PROCESS;
	else if (!strcmp(name, "SCMP_ACT_TRAP"))
		*act = SCMP_ACT_TRAP;
	else if (!strcmp(name, "SCMP_ACT_ERRNO"))
		*act = SCMP_ACT_ERRNO((uint32_t)err_no);
	else if (!strcmp(name, "SCMP_ACT_TRACE"))
		*act = SCMP_ACT_TRACE((uint32_t)err_no);
	else if (!strcmp(name, "SCMP_ACT_ALLOW"))
		*act = SCMP_ACT_ALLOW;
	else if (!strcmp(name, "SCMP_ACT_LOG"))
		*act = SCMP_ACT_LOG;
	else if (!strcmp(name, "SCMP_ACT_NOTIFY"))
		return bad(err, size,
			   "%s: SCMP_ACT_NOTIFY is not supported (the sandbox has no seccomp "
			   "listener for an agent outside it)",
			   what);
	else
		return bad(err, size, "%s: unknown action %s", what, name);
	return 0;
}

static const struct {
	const char *name;
	enum scmp_compare op;
} ops[] = {
    {"SCMP_CMP_NE", SCMP_CMP_NE},
    {"SCMP_CMP_LT", SCMP_CMP_LT},
    {"SCMP_CMP_LE", SCMP_CMP_LE},
    {"SCMP_CMP_EQ", SCMP_CMP_EQ},
    {"SCMP_CMP_GE", SCMP_CMP_GE},
    {"SCMP_CMP_GT", SCMP_CMP_GT},
    {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
};

/* A rule's args into CMPS: how many, or -1 with the reason in ERR. *SAME_INDEX says whether
 * two of them compare the same argument. */
static int parse_args(const struct json *args, const char *what, struct scmp_arg_cmp *cmps,
		      bool *same_index, char *err, size_t size)
{
	unsigned seen = 0;

	*same_index = false;
	if (!args)
		return 0;
	if (!json_is(args, JSON_ARRAY) || args->len > 6)
		return bad(err, size, "%s.args must be an array of at most 6", what);
	for (size_t i = 0; i < args->len; i++) {
		const struct json *a = args->items[i], *v2 = json_get(a, "valueTwo");
		const char *op = json_str(json_get(a, "op"));
		int64_t index, value, value2 = 0;
		size_t k;
		if (!json_int(json_get(a, "index"), &index) || index < 0 || index > 5)
			return bad(err, size, "%s.args[%zu].index must be 0 to 5", what, i);
		if (!json_int(json_get(a, "value"), &value) || value < 0 ||
		    (v2 && (!json_int(v2, &value2) || value2 < 0)))
			return bad(err, size,
				   "%s.args[%zu]: value and valueTwo must be integers from 0 to "
				   "2^63-1",
				   what, i);
		for (k = 0; op && k < sizeof(ops) / sizeof(ops[0]); k++)
			if (!strcmp(op, ops[k].name))
				break;
		if (!op || k == sizeof(ops) / sizeof(ops[0]))
			return bad(err, size, "%s.args[%zu]: unknown op %s", what, i,
				   op ? op : "(none)");
		if (seen & (1u << index))
			*same_index = true;
		seen |= 1u << index;
		cmps[i] = (struct scmp_arg_cmp){(unsigned)index, ops[k].op, (uint64_t)value,
						(uint64_t)value2};
	}
	return (int)args->len;
}

/* Adds one entry of syscalls[] to CTX. */
static int add_rule(scmp_filter_ctx ctx, const struct json *r, size_t i, uint32_t def, char *err,
		    size_t size)
{
	const struct json *names = json_get(r, "names");
	struct scmp_arg_cmp cmps[6];
	char what[48];
	uint32_t act;
	bool same_index;
	int e = errno_ret(json_get(r, "errnoRet")), n;

	snprintf(what, sizeof(what), "linux.seccomp.syscalls[%zu]", i);
	if (e < 0)
		return bad(err, size, "%s.errnoRet must be an integer from 0 to 65535", what);
	if (parse_action(json_str(json_get(r, "action")), e, what, &act, err, size) ||
	    (n = parse_args(json_get(r, "args"), what, cmps, &same_index, err, size)) < 0)
		return -1;
	if (!json_is(names, JSON_ARRAY) || !names->len || names->len > OCI_SECCOMP_MAX_NAMES)
		return bad(err, size, "%s.names must be a non-empty array of syscall names", what);
	if (act == def)
		return 0; /* libseccomp refuses it; runc leaves it out */
	for (size_t k = 0; k < names->len; k++) {
		const char *name = json_str(names->items[k]);
		if (!name)
			return bad(err, size, "%s.names[%zu] must be a string", what, k);
		int nr = seccomp_syscall_resolve_name(name);
		if (nr == __NR_SCMP_ERROR)
			continue; /* not a syscall of this kernel: runc skips it too */
		int rc = 0;
		if (same_index)
			for (int c = 0; c < n && !rc; c++)
				rc = seccomp_rule_add_array(ctx, act, nr, 1, &cmps[c]);
		else
			rc = seccomp_rule_add_array(ctx, act, nr, (unsigned)n, cmps);
		if (rc)
			return bad(err, size, "%s: %s: %s", what, name, strerror(-rc));
	}
	return 0;
}

/* "SCMP_ARCH_X86_64" to libseccomp's token for "x86_64": 0 when unknown. */
static uint32_t arch_token(const char *name)
{
	char low[32];
	size_t i;

	if (!name || strncmp(name, "SCMP_ARCH_", 10) || strlen(name + 10) >= sizeof(low))
		return 0;
	for (i = 0; name[10 + i]; i++)
		low[i] = (char)tolower((unsigned char)name[10 + i]);
	low[i] = 0;
	return seccomp_arch_resolve_name(low);
}

static int parse_flags(const struct json *flags, struct oci_bpf *out, char *err, size_t size)
{
	if (!flags)
		return 0;
	if (!json_is(flags, JSON_ARRAY) || flags->len > 16)
		return bad(err, size, "linux.seccomp.flags must be an array of flag names");
	for (size_t i = 0; i < flags->len; i++) {
		const char *f = json_str(flags->items[i]);
		if (f && !strcmp(f, "SECCOMP_FILTER_FLAG_LOG"))
			out->log = true;
		/* TSYNC: a container's process is one thread when the filter goes on; SPEC_ALLOW
		 * and WAIT_KILLABLE_RECV change nothing a guest of the Sentry can observe. */
		else if (!f || (strcmp(f, "SECCOMP_FILTER_FLAG_TSYNC") &&
				strcmp(f, "SECCOMP_FILTER_FLAG_SPEC_ALLOW") &&
				strcmp(f, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")))
			return bad(err, size, "linux.seccomp.flags[%zu]: unknown flag %s", i,
				   f ? f : "(not a string)");
	}
	return 0;
}

/* CTX's program into OUT through a memfd (libseccomp 2.5 exports only to a descriptor). */
static int export(scmp_filter_ctx ctx, struct oci_bpf *out, char *err, size_t size)
{
	int fd = memfd_create("oci-seccomp", MFD_CLOEXEC), rc;
	struct stat st;

	if (fd < 0)
		return bad(err, size, "linux.seccomp: memfd_create: %s", strerror(errno));
	if ((rc = seccomp_export_bpf(ctx, fd))) {
		close(fd);
		return bad(err, size, "linux.seccomp: the filter cannot be built: %s",
			   strerror(-rc));
	}
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size % 8) {
		close(fd);
		return bad(err, size, "linux.seccomp: libseccomp exported no program");
	}
	if (st.st_size / 8 > BPF_MAX_INSNS) {
		close(fd);
		return bad(err, size,
			   "linux.seccomp: the filter is %lld instructions, more than the %d "
			   "the kernel takes",
			   (long long)st.st_size / 8, BPF_MAX_INSNS);
	}
	out->len = (unsigned)(st.st_size / 8);
	if (!(out->insns = malloc((size_t)st.st_size)) ||
	    pread(fd, out->insns, (size_t)st.st_size, 0) != st.st_size) {
		close(fd);
		oci_bpf_free(out);
		return bad(err, size, "linux.seccomp: cannot read the exported program");
	}
	close(fd);
	return 0;
}

int oci_seccomp_compile(const struct json *p, struct oci_bpf *out, char *err, size_t size)
{
	const struct json *rules = json_get(p, "syscalls"), *arches = json_get(p, "architectures");
	scmp_filter_ctx ctx = NULL;
	uint32_t def;
	int e = errno_ret(json_get(p, "defaultErrnoRet")), ret = -1;

	memset(out, 0, sizeof(*out));
	if (!json_is(p, JSON_OBJECT))
		return bad(err, size, "linux.seccomp must be an object");
	if (e < 0)
		return bad(err, size,
			   "linux.seccomp.defaultErrnoRet must be an integer from 0 to 65535");
	if (parse_action(json_str(json_get(p, "defaultAction")), e, "linux.seccomp.defaultAction",
			 &def, err, size) ||
	    parse_flags(json_get(p, "flags"), out, err, size))
		return -1;
	const struct json *listener = json_get(p, "listenerPath");
	if (listener && (!json_str(listener) || listener->str[0]))
		return bad(err, size, "linux.seccomp.listenerPath is not supported");
	if (arches && (!json_is(arches, JSON_ARRAY) || arches->len > 32))
		return bad(err, size, "linux.seccomp.architectures must be an array");
	if (rules && (!json_is(rules, JSON_ARRAY) || rules->len > OCI_SECCOMP_MAX_RULES))
		return bad(err, size, "linux.seccomp.syscalls must be an array of at most %d rules",
			   OCI_SECCOMP_MAX_RULES);
	if (!(ctx = seccomp_init(def)))
		return bad(err, size, "linux.seccomp: out of memory");
	/* A binary tree of syscall numbers rather than a list: Docker's default profile would
	 * otherwise run ~350 comparisons before the Sentry serves an allowed call. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) {
		bad(err, size, "linux.seccomp: libseccomp cannot optimise the filter");
		goto out;
	}
	for (size_t i = 0; arches && i < arches->len; i++) {
		const char *name = json_str(arches->items[i]);
		uint32_t token = arch_token(name);
		int rc;
		if (!token) {
			bad(err, size, "linux.seccomp.architectures[%zu]: unknown architecture %s",
			    i, name ? name : "(not a string)");
			goto out;
		}
		if ((rc = seccomp_arch_add(ctx, token)) && rc != -EEXIST) {
			bad(err, size, "linux.seccomp: architecture %s: %s", name, strerror(-rc));
			goto out;
		}
	}
	for (size_t i = 0; rules && i < rules->len; i++)
		if (add_rule(ctx, rules->items[i], i, def, err, size))
			goto out;
	ret = export(ctx, out, err, size);
out:
	seccomp_release(ctx);
	return ret;
}

void oci_bpf_free(struct oci_bpf *b)
{
	free(b->insns);
	b->insns = NULL;
	b->len = 0;
}
