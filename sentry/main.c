/* The minisentry command line: `run` starts a sandbox, `checkpoint` freezes a named one into an
 * image, `restore` brings an image back, `list` and `inspect` show what there is. Every user
 * error is one line on stderr and a non-zero exit. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/limits.h"
#include "mem/memfile.h"
#include "sentry/checkpoint.h"
#include "sentry/control.h"
#include "sentry/kernel.h"
#include "sentry/marks.h"
#include "sentry/oci.h"
#include "sentry/syscall.h"
#include "sentry/warm.h"
#include "state/compress.h"
#include "state/mac.h"

#define VERSION "0.1.0"
/* MAX_CPUS as a string literal, for the texts below. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define MAX_CPUS_STR STR(MAX_CPUS)
#define DEFAULT_PIDS_STR STR(DEFAULT_PIDS)

/* Long options without a letter. */
enum {
	OPT_UNSAFE_NO_CONFINE = 0x100,
	OPT_DEBUG_HOST_SYSCALLS,
	OPT_SELFTEST_CONFINEMENT,
	OPT_MOUNT,
	OPT_USER,
	OPT_HOSTNAME,
	OPT_CLEAR_ENV,
	OPT_EXPORT_UPPER,
	OPT_UPPER,
	OPT_IMAGE_KEY,
	OPT_STRACE_APPEND,
};

static const char usage[] =
    "usage: minisentry run [options] ROOTFS [--] [CMD [ARGS...]]\n"
    "       minisentry checkpoint [options] --image DIR NAME\n"
    "       minisentry restore [options] --image DIR\n"
    "       minisentry list\n"
    "       minisentry pause|resume NAME\n"
    "       minisentry update [--memory BYTES] [--pids-limit N] NAME\n"
    "       minisentry events [--stats] [--interval DURATION] NAME\n"
    "       minisentry inspect [--image-key FILE] DIR\n"
    "       minisentry slots --base GOLDEN --count N [--warm] DIR\n"
    "       minisentry slots --warm DIR\n"
    "       minisentry [--root DIR] [--log FILE] [--log-format json] [--systemd-cgroup]\n"
    "                  create|start|state|kill|delete|run|exec|ps|checkpoint|restore|pause|\n"
    "                  resume|update|events|features ... (an OCI runtime, as runc: docs/oci.md)\n"
    "       minisentry --help | --version\n"
    "\n"
    "Runs CMD (default /bin/sh) from the root filesystem directory ROOTFS in a sandbox whose\n"
    "every system call is served by minisentry.\n"
    "\n"
    "run options:\n"
    "  --strace              print every guest syscall and its result on stderr\n"
    "  -o, --strace-output FILE\n"
    "                        with --strace: write the trace to FILE (made or emptied)\n"
    "                        instead of stderr\n"
    "  --env K=V             set an environment variable for CMD (repeatable); CMD gets\n"
    "                        the caller's environment with these changes\n"
    "  --clear-env           start from a clean environment instead: PATH and HOME (and\n"
    "                        TERM on a terminal), then --env\n"
    "  --mount type=bind,src=HOST,dst=GUEST[,ro]\n"
    "  -v, --volume HOST:GUEST[:ro]\n"
    "                        the host directory or file HOST seen at GUEST, writable (its\n"
    "                        changes reach HOST) or read-only; repeatable\n"
    "  --user UID[:GID]      run CMD as this user and group (default 0:0)\n"
    "  --hostname NAME       the sandbox's host name (default minisentry)\n"
    "  -q, --quiet           do not name unimplemented syscalls on stderr\n"
    "  --export-upper DIR    at the end, write what the sandbox changed in its root into DIR\n"
    "                        (made if missing, else empty) as an OCI image layer (.wh. files\n"
    "                        for deletions)\n"
    "  --upper DIR           keep the writable layer in DIR: start from the layer it holds\n"
    "                        (made if missing) and write it back there at the end\n"
    "  --cwd DIR             working directory inside the sandbox (default /)\n"
    "  --cpus N              number of CPUs the guest sees, 1.." MAX_CPUS_STR
    " (default: the host's)\n"
    "  --placement P         where guest threads run: auto (default: on the Sentry's CPU while\n"
    "                        they make syscalls, on the other CPU on trial while that is\n"
    "                        faster (seccomp), on any CPU while they compute), same, other\n"
    "  --platform P          how guest syscalls are caught: seccomp (default where the CPU has\n"
    "                        FSGSBASE: a SIGSYS handled in the guest's address space, no\n"
    "                        ptrace stop) or ptrace (a ptrace stop per syscall)\n"
    "  --eager-kernfs        build /proc and /sys whole at start instead of on demand\n"
    "  --stats               at exit, print the inode and dentry counts of /proc and /sys;\n"
    "                        at each checkpoint, what eviction freed\n"
    "  --id NAME             name the sandbox, so that `checkpoint NAME` can reach it\n"
    "  --network MODE        loopback (default): a private network with its own lo;\n"
    "                        none: the same, nothing reachable beyond lo; host: the host's\n"
    "                        network through sockets the Sentry owns (not checkpointable)\n"
    "  --pids N              the most tasks (threads included) the sandbox may hold at once;\n"
    "                        fork and clone fail with EAGAIN past it (default " DEFAULT_PIDS_STR
    ")\n"
    "  --memory BYTES        the most memory all guest processes, tmpfs and the memory layer\n"
    "                        may hold (K, M, G suffixes; at least 16M); past it the OOM killer\n"
    "                        kills the largest process (default: half the host's RAM)\n"

    "  --save-restore-test[=lazy|=slots]\n"
    "                        the test syscall of tests/conformance/check.h checkpoints and\n"
    "                        restores the whole sandbox (=lazy: restores with --lazy;\n"
    "                        =slots: a golden image, then deltas, each through a slot)\n"
    "  --debug-host-syscalls[=log]\n"
    "                        a host syscall the Sentry's seccomp allowlist lacks is named on\n"
    "                        stderr and fails with ENOSYS (=log: runs, logged by the kernel)\n"
    "                        instead of killing the Sentry; also MINISENTRY_DEBUG_HOST_SYSCALLS\n"
    "  --unsafe-no-confine   UNSAFE, for measuring only: no namespaces, no seccomp allowlist,\n"
    "                        capabilities kept (docs/security.md)\n"
    "\n"
    "checkpoint writes the image of sandbox NAME to DIR (which must not exist or be empty,\n"
    "unless --force) and ends the sandbox, or keeps it running with --leave-running.\n"
    "checkpoint options:\n"
    "  --leave-running       keep the sandbox running\n"
    "  --force               replace an existing image at DIR\n"
    "  --parent IMAGE        save only the memory changed since IMAGE, this sandbox's last\n"
    "                        image (written or restored); restoring needs IMAGE too\n"
    "  --golden              write the memory in the mappable form a --base and slots use\n"
    "  --base IMAGE          save only the pages that differ from IMAGE (a full image,\n"
    "                        usually --golden), whatever this sandbox was started from\n"
    "  --codec zlib|zstd     how the image is compressed (default zlib; zstd is faster and\n"
    "                        smaller, and needs a minisentry built with it to restore)\n"
    "  --image-key FILE      sign the image with an HMAC-SHA-256 keyed by FILE's bytes (16 to\n"
    "                        4096); its memory is then kept inside the image's sections\n"
    "\n"
    "pause stops every guest thread of sandbox NAME (a `run --id` one, or a container) until\n"
    "resume; update changes its memory bound (not below what it uses) and its pids bound at\n"
    "once; events prints its statistics as JSON (--stats: once; else every --interval, 5s,\n"
    "and an oom event whenever its OOM killer kills, until it ends).\n"
    "\n"
    "restore options:\n"
    "  --id NAME             name the restored sandbox\n"
    "  --rootfs PATH         the root filesystem to use instead of the image's\n"
    "  --force               use a root filesystem that differs from the image's\n"
    "  --lazy                start the guest before its memory is loaded: pages arrive when\n"
    "                        first touched and in the background\n"
    "  --slots DIR           use a ready slot of DIR (minisentry slots) as the memory: the\n"
    "                        image is its golden image or a --base delta of it\n"
    "  --mount ..., -v HOST:GUEST[:ro]\n"
    "                        the host path for the image's bind mount on GUEST (an image's\n"
    "                        own host paths are never opened: each bind mount is named again)\n"
    "  --image-key FILE      refuse the image unless it carries a MAC made with this key\n"
    "  --strace, -o, --placement, --stats, --save-restore-test, --network, --pids, --quiet,\n"
    "  --memory,\n"
    "  --debug-host-syscalls, --unsafe-no-confine as for run\n";

static int fail(const char *msg, const char *arg)
{
	fprintf(stderr, "minisentry: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
	return 2;
}

/* "minisentry: MSG 'ARG': WHY", a usage error. */
static int fail2(const char *msg, const char *arg, const char *why)
{
	fprintf(stderr, "minisentry: %s '%s': %s\n", msg, arg, why);
	return 2;
}

extern char **environ;

/* Entries in the caller's environment. */
static int environ_count(void)
{
	int n = 0;

	while (environ[n])
		n++;
	return n;
}

/* The guest environment, written into ENV (room for environ_count() + NEXTRA + 4 entries): the
 * caller's, as chroot, proot and `runsc do` pass it on; or with CLEAR a default PATH and HOME
 * (and the host's TERM when stdin is a terminal, for interactive shells); either overridden or
 * extended by --env. */
static void make_env(char **env, char **extra, int nextra, bool clear)
{
	static char term_buf[256];
	const char *term = isatty(0) ? getenv("TERM") : NULL;
	int n = 0;

	if (!clear) {
		for (char **e = environ; *e; e++)
			if (strchr(*e, '=') && **e != '=')
				env[n++] = *e;
	} else {
		env[n++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
		env[n++] = "HOME=/root";
		if (term && (size_t)snprintf(term_buf, sizeof(term_buf), "TERM=%s", term) <
				sizeof(term_buf))
			env[n++] = term_buf;
	}
	for (int i = 0; i < nextra; i++) {
		size_t klen = strchr(extra[i], '=') - extra[i] + 1;
		int j;
		for (j = 0; j < n && strncmp(env[j], extra[i], klen); j++)
			;
		env[j] = extra[i];
		if (j == n)
			n++;
	}
	env[n] = NULL;
}

/* The options run and restore share (the same letters in both tables): 0 when C was one and
 * is set in CFG, the usage error's exit status when its value is bad, -1 when C is another. */
static int common_option(int c, const char *cmd, struct kernel_config *cfg)
{
	char msg[64];

	switch (c) {
	case 's':
		cfg->strace = true;
		return 0;
	case 'o':
		if (!*optarg) {
			snprintf(msg, sizeof(msg), "%s: -o needs a FILE for --strace", cmd);
			return fail(msg, NULL);
		}
		cfg->strace_file = optarg;
		return 0;
	case OPT_STRACE_APPEND:
		cfg->strace_append = true;
		return 0;
	case 'p':
		if (!strcmp(optarg, "same")) {
			cfg->placement = PLACEMENT_SAME;
		} else if (!strcmp(optarg, "other")) {
			cfg->placement = PLACEMENT_OTHER;
		} else if (!strcmp(optarg, "auto")) {
			cfg->placement = PLACEMENT_AUTO;
		} else {
			snprintf(msg, sizeof(msg), "%s: --placement is same, other or auto, got",
				 cmd);
			return fail(msg, optarg);
		}
		return 0;
	case 'K':
		if (!strcmp(optarg, "ptrace")) {
			cfg->platform = PLATFORM_PTRACE;
		} else if (!strcmp(optarg, "seccomp")) {
			cfg->platform = PLATFORM_SECCOMP;
		} else {
			snprintf(msg, sizeof(msg), "%s: --platform is ptrace or seccomp, got", cmd);
			return fail(msg, optarg);
		}
		return 0;
	case 'S':
		cfg->stats = true;
		return 0;
	case 'q':
		cfg->quiet = true;
		return 0;
	case 'i':
		cfg->id = optarg;
		return 0;
	case 'T':
		cfg->save_restore_test = true;
		if (optarg && strcmp(optarg, "lazy") && strcmp(optarg, "slots")) {
			snprintf(msg, sizeof(msg),
				 "%s: --save-restore-test takes =lazy, =slots or nothing, got",
				 cmd);
			return fail(msg, optarg);
		}
		cfg->save_restore_lazy = optarg && !strcmp(optarg, "lazy");
		cfg->save_restore_slots = optarg && !strcmp(optarg, "slots");
		return 0;
	case 'P': {
		char *end;
		errno = 0;
		long n = strtol(optarg, &end, 10);
		if (errno || *end || end == optarg || n < 1 || n > PIDS_MAX) {
			snprintf(msg, sizeof(msg), "%s: --pids needs a number from 1 to %d, got",
				 cmd, PIDS_MAX);
			return fail(msg, optarg);
		}
		cfg->pids = (int)n;
		return 0;
	}
	case 'M': {
		/* BYTES, or with a K, M, G or T suffix (powers of 1024). */
		char *end;
		errno = 0;
		unsigned long long n = strtoull(optarg, &end, 10);
		int shift = !*end		 ? 0
			    : strchr("kK", *end) ? 10
			    : strchr("mM", *end) ? 20
			    : strchr("gG", *end) ? 30
			    : strchr("tT", *end) ? 40
						 : -1;
		if (errno || end == optarg || optarg[0] == '-' || shift < 0 || (*end && end[1]) ||
		    n > (~0ULL >> shift) || (n << shift) < MEMORY_MIN) {
			snprintf(msg, sizeof(msg), "%s: --memory needs at least 16M, got", cmd);
			return fail(msg, optarg);
		}
		cfg->memory = n << shift;
		return 0;
	}
	case 'N':
		if (!strcmp(optarg, "loopback")) {
			cfg->network = NETWORK_LOOPBACK;
		} else if (!strcmp(optarg, "none")) {
			cfg->network = NETWORK_NONE;
		} else if (!strcmp(optarg, "host")) {
			cfg->network = NETWORK_HOST;
		} else {
			snprintf(msg, sizeof(msg), "%s: --network is loopback, none or host, got",
				 cmd);
			return fail(msg, optarg);
		}
		return 0;
	case OPT_UNSAFE_NO_CONFINE:
		cfg->confine.unsafe_off = true;
		return 0;
	case OPT_DEBUG_HOST_SYSCALLS:
		if (!optarg || !strcmp(optarg, "trap")) {
			cfg->confine.debug = CONFINE_DEBUG_TRAP;
		} else if (!strcmp(optarg, "log")) {
			cfg->confine.debug = CONFINE_DEBUG_LOG;
		} else {
			snprintf(msg, sizeof(msg), "%s: --debug-host-syscalls is trap or log, got",
				 cmd);
			return fail(msg, optarg);
		}
		return 0;
	default:
		return -1;
	}
}

/* A bind mount's host path, which must exist: made absolute, the user's own links resolved (a
 * checkpoint records it, and a restore opens it again from anywhere). */
static int bind_source(const char *opt, const char *path, struct kernel_bind *b)
{
	char msg[4200];

	if (!(b->src = realpath(path, NULL))) {
		snprintf(msg, sizeof(msg), "%s source '%s':", opt, path);
		return fail(msg, strerror(errno));
	}
	return 0;
}

static int bind_target(const char *opt, const char *path, struct kernel_bind *b)
{
	char msg[64];

	if (path[0] != '/' || strlen(path) >= 4096) {
		snprintf(msg, sizeof(msg), "%s needs an absolute guest path, got", opt);
		return fail(msg, path);
	}
	b->dst = path;
	return 0;
}

/* --mount type=bind,src=HOST,dst=GUEST[,ro], as docker and podman spell it (source/target/
 * destination, readonly, ro=true|false; bind-propagation is accepted and has no effect: there
 * is no other mount to propagate to). SPEC is modified. */
static int parse_mount(char *spec, struct kernel_bind *b)
{
	const char *src = NULL, *dst = NULL;
	bool bind = false;
	char *save = NULL;

	b->ro = false;
	for (char *kv = strtok_r(spec, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		if (v)
			*v++ = 0;
		if (!strcmp(kv, "type") && v) {
			if (strcmp(v, "bind"))
				return fail("--mount: only type=bind is supported, got", v);
			bind = true;
		} else if ((!strcmp(kv, "src") || !strcmp(kv, "source")) && v) {
			src = v;
		} else if ((!strcmp(kv, "dst") || !strcmp(kv, "destination") ||
			    !strcmp(kv, "target")) &&
			   v) {
			dst = v;
		} else if (!strcmp(kv, "ro") || !strcmp(kv, "readonly")) {
			if (v && strcmp(v, "true") && strcmp(v, "1") && strcmp(v, "false") &&
			    strcmp(v, "0"))
				return fail("--mount: readonly is true or false, got", v);
			b->ro = !v || !strcmp(v, "true") || !strcmp(v, "1");
		} else if (!strcmp(kv, "rw") && !v) {
			b->ro = false;
		} else if (!strcmp(kv, "bind-propagation") && v) {
			/* nothing to propagate to */
		} else {
			return fail("--mount: unknown field", kv);
		}
	}
	if (!bind || !src || !dst)
		return fail("--mount needs type=bind,src=HOST,dst=GUEST", NULL);
	int r = bind_source("bind mount --mount", src, b);
	return r ? r : bind_target("bind mount --mount", dst, b);
}

/* -v HOST:GUEST[:OPTIONS], OPTIONS a comma-separated list of ro, rw and SELinux's z/Z (which
 * mean nothing here). SPEC is modified. */
static int parse_volume(char *spec, struct kernel_bind *b)
{
	char *dst = strchr(spec, ':'), *opts, *save = NULL;

	if (!dst || dst == spec)
		return fail("-v needs HOST:GUEST[:ro], got", spec);
	*dst++ = 0;
	if ((opts = strchr(dst, ':')))
		*opts++ = 0;
	b->ro = false;
	for (char *o = opts ? strtok_r(opts, ",", &save) : NULL; o;
	     o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "ro"))
			b->ro = true;
		else if (!strcmp(o, "rw"))
			b->ro = false;
		else if (strcmp(o, "z") && strcmp(o, "Z"))
			return fail("-v: unknown option", o);
	}
	int r = bind_source("bind mount -v", spec, b);
	return r ? r : bind_target("bind mount -v", dst, b);
}

/* --user UID[:GID], numeric (the group defaults to the uid, as with docker for an id that is
 * not in the image's passwd). */
static int parse_user(const char *spec, struct kernel_config *cfg)
{
	char *end;
	unsigned long uid, gid;

	errno = 0;
	uid = strtoul(spec, &end, 10);
	if (errno || end == spec || (*end && *end != ':') || uid > 0xfffffffeUL || spec[0] == '-')
		return fail("run: --user needs UID[:GID] (numbers), got", spec);
	gid = uid;
	if (*end == ':') {
		const char *g = end + 1;
		errno = 0;
		gid = strtoul(g, &end, 10);
		if (errno || end == g || *end || gid > 0xfffffffeUL || g[0] == '-')
			return fail("run: --user needs UID[:GID] (numbers), got", spec);
	}
	cfg->user_set = true;
	cfg->uid = (uid_t)uid;
	cfg->gid = (gid_t)gid;
	return 0;
}

/* --export-upper DIR: made if missing; it must be an empty directory (the layer is written
 * into it whole at the end). */
static int export_dir(const char *dir)
{
	struct dirent *de;
	DIR *d;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return fail2("run: --export-upper", dir, strerror(errno));
	if (!(d = opendir(dir)))
		return fail2("run: --export-upper", dir, strerror(errno));
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			closedir(d);
			return fail2("run: --export-upper", dir, "is not empty");
		}
	closedir(d);
	return 0;
}

/* --image-key FILE into KEY: its length, or -1 when it was refused (said on stderr). */
static int read_key(const char *cmd, const char *file, uint8_t *key)
{
	char *err = NULL;
	int n = image_key_read(file, key, &err);

	if (n < 0) {
		fprintf(stderr, "minisentry: %s: %s\n", cmd, err ? err : "bad key file");
		free(err);
	}
	return n;
}

/* MINISENTRY_DEBUG_HOST_SYSCALLS: what tests set where they cannot add an option. */
static void debug_from_env(struct kernel_config *cfg)
{
	const char *v = getenv(CONFINE_DEBUG_ENV);

	if (!v || !*v || !strcmp(v, "0") || cfg->confine.debug != CONFINE_DEBUG_OFF)
		return;
	cfg->confine.debug = !strcmp(v, "log")	  ? CONFINE_DEBUG_LOG
			     : !strcmp(v, "none") ? CONFINE_DEBUG_NONE
						  : CONFINE_DEBUG_TRAP;
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"strace", no_argument, NULL, 's'},
	    {"strace-output", required_argument, NULL, 'o'},
	    /* The save-restore test's restarts: the trace goes on in the same file. */
	    {"strace-append", no_argument, NULL, OPT_STRACE_APPEND},
	    {"env", required_argument, NULL, 'e'},
	    {"cwd", required_argument, NULL, 'c'},
	    {"cpus", required_argument, NULL, 'n'},
	    {"placement", required_argument, NULL, 'p'},
	    {"platform", required_argument, NULL, 'K'},
	    {"help", no_argument, NULL, 'h'},
	    {"eager-kernfs", no_argument, NULL, 'E'},
	    {"stats", no_argument, NULL, 'S'},
	    {"id", required_argument, NULL, 'i'},
	    {"save-restore-test", optional_argument, NULL, 'T'},
	    {"network", required_argument, NULL, 'N'},
	    {"pids", required_argument, NULL, 'P'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"mount", required_argument, NULL, OPT_MOUNT},
	    {"volume", required_argument, NULL, 'v'},
	    {"user", required_argument, NULL, OPT_USER},
	    {"hostname", required_argument, NULL, OPT_HOSTNAME},
	    {"clear-env", no_argument, NULL, OPT_CLEAR_ENV},
	    {"export-upper", required_argument, NULL, OPT_EXPORT_UPPER},
	    {"upper", required_argument, NULL, OPT_UPPER},
	    {"memory", required_argument, NULL, 'M'},
	    {"unsafe-no-confine", no_argument, NULL, OPT_UNSAFE_NO_CONFINE},
	    {"debug-host-syscalls", optional_argument, NULL, OPT_DEBUG_HOST_SYSCALLS},
	    /* Tests only: the locked Sentry tries what a compromised one would. */
	    {"selftest-confinement", required_argument, NULL, OPT_SELFTEST_CONFINEMENT},
	    {NULL, 0, NULL, 0}};
	struct kernel_config cfg = {
	    .cpus = 0, .placement = PLACEMENT_AUTO, .platform = kernel_default_platform()};
	struct kernel_bind binds[argc];
	char *extra[argc], **env;
	int nextra = 0, c;
	bool clear_env = false;
	struct stat st;
	char *end;

	opterr = 0;
	cfg.binds = binds;
	/* '+': options stop at ROOTFS, so the guest command keeps its own options. */
	while ((c = getopt_long(argc, argv, "+qv:o:", opts, NULL)) != -1) {
		int r = common_option(c, "run", &cfg);
		if (r >= 0) {
			if (r)
				return r;
			continue;
		}
		switch (c) {
		case 'e':
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return fail("run: --env needs K=V, got", optarg);
			extra[nextra++] = optarg;
			break;
		case 'c':
			if (optarg[0] != '/')
				return fail("run: --cwd needs an absolute path, got", optarg);
			cfg.cwd = optarg;
			break;
		case 'n':
			errno = 0;
			long n = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || n < 1 || n > MAX_CPUS)
				return fail("run: --cpus needs a number from 1 to " MAX_CPUS_STR
					    ", got",
					    optarg);
			cfg.cpus = (int)n;
			break;
		case 'E':
			cfg.eager_kernfs = true;
			break;
		case OPT_MOUNT:
		case 'v': {
			int r = c == 'v' ? parse_volume(optarg, &binds[cfg.nbinds])
					 : parse_mount(optarg, &binds[cfg.nbinds]);
			if (r)
				return r;
			cfg.nbinds++;
			break;
		}
		case OPT_USER:
			if (parse_user(optarg, &cfg))
				return 2;
			break;
		case OPT_HOSTNAME:
			if (!*optarg || strlen(optarg) > KERNEL_HOSTNAME_MAX)
				return fail("run: --hostname needs 1 to 64 characters, got",
					    optarg);
			cfg.hostname = optarg;
			break;
		case OPT_CLEAR_ENV:
			clear_env = true;
			break;
		case OPT_EXPORT_UPPER:
			if ((c = export_dir(optarg)))
				return c;
			cfg.export_upper = optarg;
			break;
		case OPT_UPPER:
			if (mkdir(optarg, 0755) && errno != EEXIST)
				return fail2("run: --upper", optarg, strerror(errno));
			if (!(cfg.upper = realpath(optarg, NULL)) || stat(cfg.upper, &st) ||
			    !S_ISDIR(st.st_mode) || !strcmp(cfg.upper, "/"))
				return fail2("run: --upper", optarg,
					     cfg.upper ? "is not a directory (or is /)"
						       : strerror(errno));
			break;
		case OPT_SELFTEST_CONFINEMENT:
			cfg.confine.selftest = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			return fail("run: option needs a value:", argv[optind - 1]);
		default:
			return fail("run: unknown option", argv[optind - 1]);
		}
	}
	if (cfg.upper && cfg.export_upper)
		return fail("run: --upper and --export-upper are one or the other", NULL);
	if (cfg.strace_file && !cfg.strace)
		return fail("run: -o FILE is where --strace writes: add --strace", NULL);
	if (optind >= argc)
		return fail("run: missing ROOTFS (see minisentry --help)", NULL);
	cfg.rootfs = argv[optind++];
	/* What the user named wrongly is a usage error (2), not a command's 126 or 127. */
	if (stat(cfg.rootfs, &st))
		return fail2("run: rootfs", cfg.rootfs, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail2("run: rootfs", cfg.rootfs, "is not a directory");
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	static char *default_cmd[] = {"/bin/sh", NULL};
	cfg.argv = optind < argc ? &argv[optind] : default_cmd;
	if (!(env = calloc(environ_count() + nextra + 4, sizeof(*env))))
		return fail("run: out of memory", NULL);
	make_env(env, extra, nextra, clear_env);
	cfg.envp = env;
	debug_from_env(&cfg);
	if (cfg.cpus == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		cfg.cpus = n < 1 ? 1 : n > MAX_CPUS ? MAX_CPUS : (int)n;
	}
	int r = kernel_run(&cfg);
	if (r >= 0)
		return r;
	/* Like a shell: 127 when the command is missing, 126 when it cannot be run. */
	return r == -ENOENT ? 127 : 126;
}

static int cmd_checkpoint(int argc, char **argv)
{
	static const struct option opts[] = {{"leave-running", no_argument, NULL, 'l'},
					     {"force", no_argument, NULL, 'f'},
					     {"image", required_argument, NULL, 'i'},
					     {"codec", required_argument, NULL, 'c'},
					     {"parent", required_argument, NULL, 'P'},
					     {"image-key", required_argument, NULL, OPT_IMAGE_KEY},
					     {"base", required_argument, NULL, 'B'},
					     {"golden", no_argument, NULL, 'G'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct control_checkpoint_opts o = {0};
	const char *image = NULL, *keyfile = NULL;
	static uint8_t key[IMAGE_KEY_MAX];
	int key_len = 0;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.leave_running = true;
			break;
		case 'f':
			o.force = true;
			break;
		case 'i':
			image = optarg;
			break;
		case 'P':
			o.parent = optarg;
			break;
		case 'B':
			o.base = optarg;
			break;
		case 'G':
			o.golden = true;
			break;
		case 'c':
			if (!codec_by_name(optarg))
				return fail("checkpoint: --codec is zlib or zstd, got", optarg);
			if (!codec_available(codec_by_name(optarg)))
				return fail("checkpoint: this minisentry was built without",
					    optarg);
			o.codec = optarg;
			break;
		case OPT_IMAGE_KEY:
			keyfile = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			return fail("checkpoint: option needs a value:", argv[optind - 1]);
		default:
			return fail("checkpoint: unknown option", argv[optind - 1]);
		}
	}
	if (!image)
		return fail("checkpoint: missing --image DIR", NULL);
	if (optind != argc - 1)
		return fail("checkpoint: needs exactly one sandbox NAME", NULL);
	if ((o.parent != NULL) + (o.base != NULL) + o.golden > 1)
		return fail("checkpoint: --parent, --base and --golden exclude each other", NULL);
	if (keyfile && (key_len = read_key("checkpoint", keyfile, key)) < 0)
		return 1;
	if (keyfile) {
		o.key = key;
		o.key_len = (size_t)key_len;
	}
	return control_checkpoint(argv[optind], image, &o);
}

static int cmd_restore(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"image", required_argument, NULL, 'm'},
	    {"id", required_argument, NULL, 'i'},
	    {"rootfs", required_argument, NULL, 'r'},
	    {"force", no_argument, NULL, 'f'},
	    {"strace", no_argument, NULL, 's'},
	    {"strace-output", required_argument, NULL, 'o'},
	    {"strace-append", no_argument, NULL, OPT_STRACE_APPEND},
	    {"placement", required_argument, NULL, 'p'},
	    {"platform", required_argument, NULL, 'K'},
	    {"stats", no_argument, NULL, 'S'},
	    {"save-restore-test", optional_argument, NULL, 'T'},
	    {"delete-image", no_argument, NULL, 'D'},
	    {"image-key", required_argument, NULL, OPT_IMAGE_KEY},
	    {"network", required_argument, NULL, 'N'},
	    {"pids", required_argument, NULL, 'P'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"mount", required_argument, NULL, OPT_MOUNT},
	    {"volume", required_argument, NULL, 'v'},
	    {"memory", required_argument, NULL, 'M'},
	    {"unsafe-no-confine", no_argument, NULL, OPT_UNSAFE_NO_CONFINE},
	    {"debug-host-syscalls", optional_argument, NULL, OPT_DEBUG_HOST_SYSCALLS},
	    {"lazy", no_argument, NULL, 'L'},
	    {"slots", required_argument, NULL, 'O'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0}};
	struct kernel_config cfg = {.placement = PLACEMENT_AUTO,
				    .platform = kernel_default_platform()};
	struct kernel_restore_opts o = {0};
	struct kernel_bind binds[argc];
	static uint8_t key[IMAGE_KEY_MAX];
	const char *image = NULL;
	bool delete_image = false;
	int c;

	opterr = 0;
	o.binds = cfg.binds = binds;
	while ((c = getopt_long(argc, argv, "+qv:o:", opts, NULL)) != -1) {
		int r = common_option(c, "restore", &cfg);
		if (r >= 0) {
			if (r)
				return r;
			continue;
		}
		switch (c) {
		case 'm':
			image = optarg;
			break;
		case 'r':
			o.rootfs = optarg;
			break;
		case 'f':
			o.force = true;
			break;
		case 'D':
			delete_image = true;
			break;
		case 'L':
			o.lazy = true;
			break;
		case OPT_IMAGE_KEY: {
			int n = read_key("restore", optarg, key);
			if (n < 0)
				return 1;
			o.key = key;
			o.key_len = n;
			break;
		}
		case OPT_MOUNT:
		case 'v': {
			int r = c == 'v' ? parse_volume(optarg, &binds[cfg.nbinds])
					 : parse_mount(optarg, &binds[cfg.nbinds]);
			if (r)
				return r;
			o.nbinds = ++cfg.nbinds;
			break;
		}
		case 'O':
			o.slots = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			return fail("restore: option needs a value:", argv[optind - 1]);
		default:
			return fail("restore: unknown option", argv[optind - 1]);
		}
	}
	if (!image)
		return fail("restore: missing --image DIR", NULL);
	if (cfg.strace_file && !cfg.strace)
		return fail("restore: -o FILE is where --strace writes: add --strace", NULL);
	if (o.lazy && o.slots)
		return fail("restore: --lazy and --slots exclude each other", NULL);
	/* The save-restore test's slots variant: its pool, made for its golden image at the
	 * first restore, stays the one its later deltas are restored through. */
	if (cfg.save_restore_slots && o.slots) {
		if (control_srt_make_pool(image, o.slots))
			return 1;
		cfg.srt_slots = o.slots;
	}
	if (optind != argc)
		return fail("restore: unexpected argument", argv[optind]);
	debug_from_env(&cfg);
	/* A pool with waiting Sentries: one of them restores it, if these options let it. */
	int r = warm_restore(&cfg, &o, image, delete_image);
	if (r != WARM_COLD)
		return r;
	r = kernel_restore(&cfg, image, &o, delete_image);
	return r >= 0 ? r : 1;
}

static int cmd_slots(int argc, char **argv)
{
	static const struct option opts[] = {{"base", required_argument, NULL, 'b'},
					     {"count", required_argument, NULL, 'n'},
					     {"warm", no_argument, NULL, 'w'},
					     /* Not in the usage: what --warm starts per slot. */
					     {"serve-slot", required_argument, NULL, 's'},
					     {NULL, 0, NULL, 0}};
	const char *base = NULL;
	unsigned long count = 0, serve = 0;
	bool warm = false, serving = false;
	char *end, *err = NULL;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (c == 'b') {
			base = optarg;
		} else if (c == 'n') {
			count = strtoul(optarg, &end, 10);
			if (*end || !*optarg)
				return fail("slots: --count takes a number, got", optarg);
		} else if (c == 'w') {
			warm = true;
		} else if (c == 's') {
			serve = strtoul(optarg, &end, 10);
			if (*end || !*optarg)
				return fail("slots: --serve-slot takes a number, got", optarg);
			serving = true;
		} else {
			return fail("slots: unknown option or missing value", argv[optind - 1]);
		}
	}
	if (serving && optind == argc - 1)
		return warm_serve(argv[optind], (unsigned)serve);
	if ((!base && !warm) || !!base != !!count || optind != argc - 1)
		return fail("slots: usage: minisentry slots --base GOLDEN --count N [--warm] DIR",
			    NULL);
	if (base && memfile_slots_create(base, count, argv[optind], &err)) {
		fprintf(stderr, "minisentry: slots: %s\n", err ? err : "cannot make the slots");
		free(err);
		return 1;
	}
	if (warm && warm_start_all(argv[optind]))
		return 1; /* said */
	if (base)
		printf("%lu slots of %s in %s%s\n", count, base, argv[optind],
		       warm ? ", each with a Sentry waiting" : "");
	return 0;
}

static int cmd_inspect(int argc, char **argv)
{
	static uint8_t key[IMAGE_KEY_MAX];
	int key_len = -1;
	char *err = NULL;

	if (argc == 4 && !strcmp(argv[1], "--image-key")) {
		if ((key_len = read_key("inspect", argv[2], key)) < 0)
			return 1;
		argc -= 2;
		argv += 2;
	}
	if (argc != 2)
		return fail("inspect: needs exactly one image DIR", NULL);
	if (checkpoint_inspect_signed(argv[1], key_len >= 0 ? key : NULL,
				      key_len >= 0 ? (size_t)key_len : 0, stdout, &err)) {
		fprintf(stderr, "minisentry: inspect: %s\n", err ? err : "cannot read the image");
		free(err);
		return 1;
	}
	return 0;
}

/* run and restore end with STATUS: a confined Sentry tells its launcher first. */
static int ended(int status)
{
	fflush(NULL);
	confine_exiting(status);
	return status;
}

int main(int argc, char **argv)
{
	clock_gettime(CLOCK_MONOTONIC, &kernel_main_start);
	marks_init();
	mark("main");
	if (argc < 2)
		return fail("missing command (see minisentry --help)", NULL);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("minisentry %s\n", VERSION);
		return 0;
	}
	if (!strcmp(argv[1],
		    "--syscall-table")) { /* not in the usage: it writes docs/syscalls.md */
		syscall_table_markdown(stdout);
		return 0;
	}
	if (oci_command_line(argc, argv))
		return oci_main(argc, argv);
	if (!strcmp(argv[1], "run"))
		return ended(cmd_run(argc - 1, argv + 1));
	if (!strcmp(argv[1], "checkpoint"))
		return cmd_checkpoint(argc - 1, argv + 1);
	if (!strcmp(argv[1], "restore"))
		return ended(cmd_restore(argc - 1, argv + 1));
	if (!strcmp(argv[1], "inspect"))
		return cmd_inspect(argc - 1, argv + 1);
	if (!strcmp(argv[1], "slots"))
		return ended(cmd_slots(argc - 1, argv + 1));
	if (!strcmp(argv[1], "list")) {
		if (argc != 2)
			return fail("list: takes no arguments", NULL);
		return control_list();
	}
	return fail("unknown command", argv[1]);
}
