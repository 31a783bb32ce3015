/* An OCI bundle's linux.seccomp profile, compiled with libseccomp into the classic BPF program
 * a container's processes start filtered by, as runc compiles and installs it. The profile is
 * untrusted input: every member is checked, every refusal is one line. This layer knows
 * nothing of the sandbox: the Sentry installs the program as the guest's own filter
 * (sentry/seccomp.h), so the guest sees what it would see under runc. */
#ifndef OCI_SECCOMP_H
#define OCI_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json;

/* A compiled profile: LEN instructions of struct sock_filter's layout (8 bytes each). */
struct oci_bpf {
	uint64_t *insns; /* malloc'd */
	unsigned int len;
	bool log; /* flags has SECCOMP_FILTER_FLAG_LOG */
};

/* The most rules, and names in one rule, a profile may have (Docker's default has ~70 rules
 * and ~370 names in its largest). */
#define OCI_SECCOMP_MAX_RULES 4096
#define OCI_SECCOMP_MAX_NAMES 4096

/* Compiles PROFILE (the linux.seccomp object) into *OUT: 0, or -1 with the reason in ERR.
 * As runc: a syscall name this kernel does not know is skipped, a rule whose action is the
 * default one is dropped, and arguments of one rule that name the same index twice become
 * one rule each (OR) instead of one rule with all of them (AND). SCMP_ACT_NOTIFY (a listener
 * outside the sandbox) is refused. */
int oci_seccomp_compile(const struct json *profile, struct oci_bpf *out, char *err, size_t errsize);
void oci_bpf_free(struct oci_bpf *b);

#endif
