/* An OCI bundle's config.json (runtime-spec 1.x) as plain data: what minisentry takes from it,
 * checked, with every refusal a one-line message. Strings point into the parsed document,
 * which the spec owns (oci_spec_free). This layer knows nothing of the sandbox: the Sentry
 * maps the result onto its own configuration (sentry/oci.c). */
#ifndef OCI_SPEC_H
#define OCI_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct json;

/* The most of each list a spec may have: bounded before anything is allocated for it. */
#define OCI_MAX_ARGS 4096
#define OCI_MAX_ENV 4096
#define OCI_MAX_MOUNTS 512
#define OCI_MAX_GIDS 64
#define OCI_MAX_RLIMITS 16

enum oci_mount_kind {
	OCI_MOUNT_BIND,	  /* a host directory or file (type "bind", or options bind/rbind) */
	OCI_MOUNT_PROC,	  /* "proc" */
	OCI_MOUNT_SYSFS,  /* "sysfs" */
	OCI_MOUNT_TMPFS,  /* "tmpfs" */
	OCI_MOUNT_IGNORED /* what the sandbox has its own way (devpts, mqueue, cgroup) */
};

struct oci_mount {
	enum oci_mount_kind kind;
	const char *type, *source, *destination;
	bool ro;
};

struct oci_rlimit {
	int resource; /* RLIMIT_* */
	uint64_t soft, hard;
};

/* Namespace types, as bits of oci_spec.namespaces. */
enum {
	OCI_NS_PID = 1,
	OCI_NS_NETWORK = 2,
	OCI_NS_MOUNT = 4,
	OCI_NS_IPC = 8,
	OCI_NS_UTS = 16,
	OCI_NS_USER = 32,
	OCI_NS_CGROUP = 64,
	OCI_NS_TIME = 128,
};

struct oci_spec {
	struct json *doc;
	const char *version;
	bool has_process;
	const char **args; /* NULL-terminated */
	size_t nargs;
	const char **env; /* NULL-terminated */
	size_t nenv;
	const char *cwd;
	uid_t uid;
	gid_t gid;
	gid_t *gids;
	size_t ngids;
	bool has_umask;
	mode_t umask;
	bool terminal;
	bool no_new_privileges;
	struct oci_rlimit rlimits[OCI_MAX_RLIMITS];
	size_t nrlimits;
	/* process.capabilities (has_caps when present): each set, bit N for capability N. */
	bool has_caps;
	uint64_t cap_bounding, cap_effective, cap_permitted, cap_inheritable, cap_ambient;
	const char *root_path;
	bool root_readonly;
	const char *hostname;
	struct oci_mount *mounts;
	size_t nmounts;
	unsigned namespaces;		/* OCI_NS_* present */
	bool network_path;		/* the network namespace names one to join */
	int64_t memory_limit;		/* bytes; -1 when none */
	int64_t pids_limit;		/* -1 when none */
	const struct json *annotations; /* an object of strings, or NULL */
	const struct json *seccomp;	/* linux.seccomp (oci/seccomp.h compiles it), or NULL */
};

/* Parses config.json text TEXT (LEN bytes) into S. 0, or -1 with the reason in ERR. */
int oci_spec_parse(const char *text, size_t len, struct oci_spec *s, char *err, size_t errsize);
/* Parses TEXT as a process object alone (an `exec --process` file) into S's process fields. */
int oci_process_parse(const char *text, size_t len, struct oci_spec *s, char *err, size_t errsize);
/* Reads BUNDLE/config.json. */
int oci_spec_load(const char *bundle, struct oci_spec *s, char *err, size_t errsize);
void oci_spec_free(struct oci_spec *s);

/* What `update` asks of a running container (a linux.resources object, runc's `update -r`):
 * 0 leaves a limit as it is, a negative value removes it, a positive one sets it. */
struct oci_resources {
	int64_t memory; /* memory.limit, bytes */
	int64_t swap;	/* memory.swap: memory and swap together, bytes */
	int64_t pids;	/* pids.limit */
};
/* Parses TEXT (LEN bytes) as a resources object into R. 0, or -1 with the reason in ERR: a
 * malformed member, or one asking for what a sandbox cannot change (CPU shares, quotas and
 * sets, block I/O weights, a soft memory limit...), named. Unknown members are ignored, and so
 * are devices (as in config.json). */
int oci_resources_parse(const char *text, size_t len, struct oci_resources *r, char *err,
			size_t errsize);

/* The number of capability NAME ("CAP_CHOWN", or "chown" as runc's --cap takes it), or -1;
 * and the name of capability CAP, or NULL. */
int oci_cap_number(const char *name);
const char *oci_cap_name(int cap);

/* The RLIMIT_* number of NAME ("RLIMIT_NOFILE"), or -1. */
int oci_rlimit_number(const char *name);

#endif
