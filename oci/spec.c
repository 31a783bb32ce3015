/* config.json into struct oci_spec (oci/spec.h): every field minisentry uses is checked for
 * its type and range here, so the Sentry's mapping never meets a surprise; fields it does not
 * use are ignored, as the spec asks of unknown properties. */
#include "oci/spec.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "oci/json.h"

static int bad(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -1;
}

static const struct {
	const char *name;
	int resource;
} rlimit_names[] = {
    {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_CORE", RLIMIT_CORE},
    {"RLIMIT_CPU", RLIMIT_CPU},
    {"RLIMIT_DATA", RLIMIT_DATA},
    {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE},
    {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_NPROC", RLIMIT_NPROC},
    {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
    {"RLIMIT_RTTIME", RLIMIT_RTTIME},
    {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_STACK", RLIMIT_STACK},
};

int oci_rlimit_number(const char *name)
{
	for (size_t i = 0; i < sizeof(rlimit_names) / sizeof(rlimit_names[0]); i++)
		if (!strcmp(rlimit_names[i].name, name))
			return rlimit_names[i].resource;
	return -1;
}

/* An id (uid or gid): 0 to 2^32-2 (the last is "no id"). */
/* Capability names in number order (capabilities(7); cap_last_cap 40). */
static const char *const cap_names[] = {
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
};

int oci_cap_number(const char *name)
{
	const char *bare = strncasecmp(name, "CAP_", 4) ? name : name + 4;

	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if (!strcasecmp(bare, cap_names[i] + 4))
			return (int)i;
	return -1;
}

const char *oci_cap_name(int cap)
{
	return cap >= 0 && cap < (int)(sizeof(cap_names) / sizeof(cap_names[0])) ? cap_names[cap]
										 : NULL;
}

/* One set of process.capabilities, an array of names, as bits in *OUT. Names this kernel does
 * not know are left out, as runc leaves them out (with a warning) for the host it runs on. */
static int get_caps(const struct json *v, const char *what, uint64_t *out, char *err, size_t size)
{
	*out = 0;
	if (!v)
		return 0;
	if (!json_is(v, JSON_ARRAY))
		return bad(err, size, "process.capabilities.%s must be an array", what);
	for (size_t i = 0; i < v->len; i++) {
		const char *name = json_str(v->items[i]);
		if (!name)
			return bad(err, size, "process.capabilities.%s[%zu] must be a string", what,
				   i);
		int cap = oci_cap_number(name);
		if (cap >= 0)
			*out |= UINT64_C(1) << cap;
	}
	return 0;
}

static int parse_caps(const struct json *c, struct oci_spec *s, char *err, size_t size)
{
	const struct {
		const char *name;
		uint64_t *set;
	} sets[] = {{"bounding", &s->cap_bounding},
		    {"effective", &s->cap_effective},
		    {"permitted", &s->cap_permitted},
		    {"inheritable", &s->cap_inheritable},
		    {"ambient", &s->cap_ambient}};

	if (!json_is(c, JSON_OBJECT))
		return bad(err, size, "process.capabilities must be an object");
	s->has_caps = true;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		if (get_caps(json_get(c, sets[i].name), sets[i].name, sets[i].set, err, size))
			return -1;
	return 0;
}

static bool get_id(const struct json *v, uint32_t *out)
{
	int64_t i;

	if (!json_int(v, &i) || i < 0 || i > 0xfffffffeLL)
		return false;
	*out = (uint32_t)i;
	return true;
}

/* A resource limit value: a non-negative integer; 2^64-1 (RLIM_INFINITY), which no int64
 * holds, is read from the number's double. */
static bool get_rlim(const struct json *v, uint64_t *out)
{
	int64_t i;

	if (json_int(v, &i)) {
		if (i < 0)
			return false;
		*out = (uint64_t)i;
		return true;
	}
	if (json_is(v, JSON_NUMBER) && v->num >= 9.2e18 && v->num <= 1.85e19) {
		*out = v->num >= 1.8e19 ? (uint64_t)RLIM_INFINITY : (uint64_t)v->num;
		return true;
	}
	return false;
}

/* An array of strings with at most MAX entries, as a NULL-terminated vector in *OUT. */
static int get_strings(const struct json *v, size_t max, const char ***out, size_t *n,
		       const char *what, char *err, size_t size)
{
	if (!json_is(v, JSON_ARRAY))
		return bad(err, size, "%s must be an array of strings", what);
	if (v->len > max)
		return bad(err, size, "%s has more than %zu entries", what, max);
	const char **vec = calloc(v->len + 1, sizeof(*vec));
	if (!vec)
		return bad(err, size, "out of memory");
	for (size_t i = 0; i < v->len; i++) {
		if (!(vec[i] = json_str(v->items[i]))) {
			free(vec);
			return bad(err, size, "%s[%zu] must be a string", what, i);
		}
	}
	*out = vec;
	*n = v->len;
	return 0;
}

static int parse_user(const struct json *u, struct oci_spec *s, char *err, size_t size)
{
	const struct json *v;

	if (!json_is(u, JSON_OBJECT))
		return bad(err, size, "process.user must be an object");
	uint32_t id;
	if (!get_id(json_get(u, "uid"), &id))
		return bad(err, size, "process.user.uid must be a number from 0 to 4294967294");
	s->uid = id;
	if (!get_id(json_get(u, "gid"), &id))
		return bad(err, size, "process.user.gid must be a number from 0 to 4294967294");
	s->gid = id;
	if ((v = json_get(u, "umask"))) {
		int64_t m;
		if (!json_int(v, &m) || m < 0 || m > 0777)
			return bad(err, size, "process.user.umask must be a number from 0 to 0777");
		s->has_umask = true;
		s->umask = (mode_t)m;
	}
	if ((v = json_get(u, "additionalGids"))) {
		if (!json_is(v, JSON_ARRAY) || v->len > OCI_MAX_GIDS)
			return bad(err, size,
				   "process.user.additionalGids must be an array of at most %d ids",
				   OCI_MAX_GIDS);
		if (v->len && !(s->gids = calloc(v->len, sizeof(*s->gids))))
			return bad(err, size, "out of memory");
		for (size_t i = 0; i < v->len; i++) {
			if (!get_id(v->items[i], &id))
				return bad(err, size,
					   "process.user.additionalGids[%zu] is not an id", i);
			s->gids[i] = id;
		}
		s->ngids = v->len;
	}
	if (json_get(u, "username"))
		return bad(err, size, "process.user.username is for Windows");
	return 0;
}

static int parse_rlimits(const struct json *r, struct oci_spec *s, char *err, size_t size)
{
	if (!json_is(r, JSON_ARRAY) || r->len > OCI_MAX_RLIMITS)
		return bad(err, size, "process.rlimits must be an array of at most %d limits",
			   OCI_MAX_RLIMITS);
	for (size_t i = 0; i < r->len; i++) {
		const struct json *l = r->items[i];
		const char *type = json_str(json_get(l, "type"));
		struct oci_rlimit *o = &s->rlimits[s->nrlimits];
		if (!type || (o->resource = oci_rlimit_number(type)) < 0)
			return bad(err, size,
				   "process.rlimits[%zu].type is not a known RLIMIT_ name", i);
		if (!get_rlim(json_get(l, "soft"), &o->soft) ||
		    !get_rlim(json_get(l, "hard"), &o->hard))
			return bad(err, size,
				   "process.rlimits[%zu] (%s) needs soft and hard numbers", i,
				   type);
		if (o->soft > o->hard)
			return bad(err, size, "process.rlimits[%zu] (%s): soft above hard", i,
				   type);
		for (size_t j = 0; j < s->nrlimits; j++)
			if (s->rlimits[j].resource == o->resource)
				return bad(err, size, "process.rlimits: %s twice", type);
		s->nrlimits++;
	}
	return 0;
}

static int parse_process(const struct json *p, struct oci_spec *s, char *err, size_t size)
{
	const struct json *v;

	if (!json_is(p, JSON_OBJECT))
		return bad(err, size, "process must be an object");
	s->has_process = true;
	if (get_strings(json_get(p, "args"), OCI_MAX_ARGS, &s->args, &s->nargs, "process.args", err,
			size))
		return -1;
	if (s->nargs == 0 || !s->args[0][0])
		return bad(err, size, "process.args must name a program");
	if ((v = json_get(p, "env"))) {
		if (get_strings(v, OCI_MAX_ENV, &s->env, &s->nenv, "process.env", err, size))
			return -1;
		for (size_t i = 0; i < s->nenv; i++)
			if (!strchr(s->env[i], '=') || s->env[i][0] == '=')
				return bad(err, size, "process.env[%zu] is not KEY=VALUE", i);
	}
	if (!(s->cwd = json_str(json_get(p, "cwd"))) || s->cwd[0] != '/')
		return bad(err, size, "process.cwd must be an absolute path");
	if ((v = json_get(p, "terminal"))) {
		if (!json_is(v, JSON_BOOL))
			return bad(err, size, "process.terminal must be true or false");
		s->terminal = v->b;
	}
	if ((v = json_get(p, "noNewPrivileges"))) {
		if (!json_is(v, JSON_BOOL))
			return bad(err, size, "process.noNewPrivileges must be true or false");
		s->no_new_privileges = v->b;
	}
	if ((v = json_get(p, "user")) && parse_user(v, s, err, size))
		return -1;
	if ((v = json_get(p, "rlimits")) && parse_rlimits(v, s, err, size))
		return -1;
	if ((v = json_get(p, "capabilities")) && parse_caps(v, s, err, size))
		return -1;
	return 0;
}

static bool has_option(const struct json *opts, const char *name)
{
	for (size_t i = 0; opts && i < opts->len; i++)
		if (!strcmp(opts->items[i]->str, name))
			return true;
	return false;
}

static int parse_mounts(const struct json *m, struct oci_spec *s, char *err, size_t size)
{
	if (!json_is(m, JSON_ARRAY) || m->len > OCI_MAX_MOUNTS)
		return bad(err, size, "mounts must be an array of at most %d mounts",
			   OCI_MAX_MOUNTS);
	if (m->len && !(s->mounts = calloc(m->len, sizeof(*s->mounts))))
		return bad(err, size, "out of memory");
	for (size_t i = 0; i < m->len; i++) {
		const struct json *e = m->items[i], *opts = json_get(e, "options");
		struct oci_mount *o = &s->mounts[i];
		if (!json_is(e, JSON_OBJECT))
			return bad(err, size, "mounts[%zu] must be an object", i);
		o->destination = json_str(json_get(e, "destination"));
		if (!o->destination || o->destination[0] != '/' ||
		    strlen(o->destination) >= PATH_MAX)
			return bad(err, size, "mounts[%zu].destination must be an absolute path",
				   i);
		o->type = json_str(json_get(e, "type"));
		o->source = json_str(json_get(e, "source"));
		if ((json_get(e, "type") && !o->type) || (json_get(e, "source") && !o->source))
			return bad(err, size, "mounts[%zu]: type and source must be strings", i);
		if (opts) {
			if (!json_is(opts, JSON_ARRAY))
				return bad(err, size, "mounts[%zu].options must be an array", i);
			for (size_t j = 0; j < opts->len; j++)
				if (!json_is(opts->items[j], JSON_STRING))
					return bad(err, size,
						   "mounts[%zu].options[%zu] is not a string", i,
						   j);
		}
		o->ro = has_option(opts, "ro");
		const char *t = o->type ? o->type : "";
		if (!strcmp(t, "bind") || has_option(opts, "bind") || has_option(opts, "rbind")) {
			o->kind = OCI_MOUNT_BIND;
			if (!o->source || !o->source[0])
				return bad(err, size,
					   "mounts[%zu] (%s): a bind mount needs a source", i,
					   o->destination);
		} else if (!strcmp(t, "proc")) {
			o->kind = OCI_MOUNT_PROC;
		} else if (!strcmp(t, "sysfs")) {
			o->kind = OCI_MOUNT_SYSFS;
		} else if (!strcmp(t, "tmpfs")) {
			o->kind = OCI_MOUNT_TMPFS;
		} else if (!strcmp(t, "devpts") || !strcmp(t, "mqueue") || !strcmp(t, "cgroup") ||
			   !strcmp(t, "cgroup2")) {
			o->kind = OCI_MOUNT_IGNORED;
		} else {
			return bad(err, size, "mounts[%zu] (%s): type '%s' is not supported", i,
				   o->destination, t);
		}
	}
	s->nmounts = m->len;
	return 0;
}

static const struct {
	const char *name;
	unsigned bit;
} ns_names[] = {
    {"pid", OCI_NS_PID},       {"network", OCI_NS_NETWORK}, {"mount", OCI_NS_MOUNT},
    {"ipc", OCI_NS_IPC},       {"uts", OCI_NS_UTS},	    {"user", OCI_NS_USER},
    {"cgroup", OCI_NS_CGROUP}, {"time", OCI_NS_TIME},
};

static int parse_linux(const struct json *l, struct oci_spec *s, char *err, size_t size)
{
	const struct json *ns = json_get(l, "namespaces"), *r = json_get(l, "resources"), *v;

	if (!json_is(l, JSON_OBJECT))
		return bad(err, size, "linux must be an object");
	if (ns && (!json_is(ns, JSON_ARRAY) || ns->len > 16))
		return bad(err, size, "linux.namespaces must be an array");
	for (size_t i = 0; ns && i < ns->len; i++) {
		const char *type = json_str(json_get(ns->items[i], "type"));
		const struct json *path = json_get(ns->items[i], "path");
		unsigned bit = 0;
		for (size_t k = 0; type && k < sizeof(ns_names) / sizeof(ns_names[0]); k++)
			if (!strcmp(type, ns_names[k].name))
				bit = ns_names[k].bit;
		if (!bit)
			return bad(err, size, "linux.namespaces[%zu]: unknown type", i);
		if (s->namespaces & bit)
			return bad(err, size, "linux.namespaces: %s twice", type);
		s->namespaces |= bit;
		if (path && !json_is(path, JSON_STRING))
			return bad(err, size, "linux.namespaces[%zu].path must be a string", i);
		/* A network namespace to join (an engine's bridge): the sandbox's network is its
		 * own, so the path is taken note of and not joined. Joining any other kind would
		 * share state the sandbox keeps to itself. */
		if (path && bit == OCI_NS_NETWORK)
			s->network_path = true;
		else if (path)
			return bad(err, size,
				   "linux.namespaces: joining the %s namespace %s is not possible: "
				   "the sandbox has its own",
				   type, path->str);
	}
	if ((v = json_get(l, "seccomp")) && !json_is(v, JSON_NULL)) {
		if (!json_is(v, JSON_OBJECT))
			return bad(err, size, "linux.seccomp must be an object");
		s->seccomp = v;
	}
	s->memory_limit = s->pids_limit = -1;
	if ((v = json_get(json_get(r, "memory"), "limit"))) {
		int64_t n;
		if (!json_int(v, &n))
			return bad(err, size, "linux.resources.memory.limit must be an integer");
		s->memory_limit = n > 0 ? n : -1;
	}
	if ((v = json_get(json_get(r, "pids"), "limit"))) {
		int64_t n;
		if (!json_int(v, &n))
			return bad(err, size, "linux.resources.pids.limit must be an integer");
		s->pids_limit = n > 0 ? n : -1;
	}
	return 0;
}

int oci_spec_parse(const char *text, size_t len, struct oci_spec *s, char *err, size_t size)
{
	char jerr[200];
	const struct json *v, *root;

	memset(s, 0, sizeof(*s));
	s->memory_limit = s->pids_limit = -1;
	if (!(s->doc = json_parse(text, len, jerr, sizeof(jerr))))
		return bad(err, size, "config.json: %s", jerr);
	if (!json_is(s->doc, JSON_OBJECT))
		return bad(err, size, "config.json is not an object");
	if ((v = json_get(s->doc, "ociVersion")) && !(s->version = json_str(v)))
		return bad(err, size, "ociVersion must be a string");
	if ((v = json_get(s->doc, "process")) && parse_process(v, s, err, size))
		return -1;
	root = json_get(s->doc, "root");
	if (!json_is(root, JSON_OBJECT) || !(s->root_path = json_str(json_get(root, "path"))) ||
	    !s->root_path[0])
		return bad(err, size, "root.path must name the root filesystem");
	if ((v = json_get(root, "readonly"))) {
		if (!json_is(v, JSON_BOOL))
			return bad(err, size, "root.readonly must be true or false");
		s->root_readonly = v->b;
	}
	if ((v = json_get(s->doc, "hostname"))) {
		if (!(s->hostname = json_str(v)) || strlen(s->hostname) > 64)
			return bad(err, size, "hostname must be a string of at most 64 bytes");
	}
	if ((v = json_get(s->doc, "mounts")) && parse_mounts(v, s, err, size))
		return -1;
	if ((v = json_get(s->doc, "linux")) && parse_linux(v, s, err, size))
		return -1;
	if ((v = json_get(s->doc, "annotations"))) {
		if (!json_is(v, JSON_OBJECT))
			return bad(err, size, "annotations must be an object");
		for (size_t i = 0; i < v->len; i++)
			if (!json_is(v->items[i], JSON_STRING))
				return bad(err, size, "annotations.%s must be a string",
					   v->keys[i]);
		s->annotations = v;
	}
	return 0;
}

int oci_process_parse(const char *text, size_t len, struct oci_spec *s, char *err, size_t size)
{
	char jerr[200];

	memset(s, 0, sizeof(*s));
	if (!(s->doc = json_parse(text, len, jerr, sizeof(jerr))))
		return bad(err, size, "process.json: %s", jerr);
	return parse_process(s->doc, s, err, size);
}

/* --- update's resources ------------------------------------------------------------------ */

/* Members of a resources object that a sandbox cannot honour: an integer other than 0, a
 * non-empty string, array or object, or true, asks for something; 0, "", [], {}, false and
 * null ask for nothing (engines send whole objects with zeros for what they leave alone). */
static const struct {
	const char *object, *member; /* member NULL: the object itself */
	const char *lacks;	     /* what the sandbox has none of */
} unsupported[] = {
    {"memory", "reservation", "soft memory limit"},
    {"memory", "kernel", "kernel memory accounting"},
    {"memory", "kernelTCP", "kernel memory accounting"},
    {"memory", "swappiness", "swap"},
    {"memory", "disableOOMKiller", "way to turn its OOM killer off"},
    {"cpu", "shares", "CPU controller"},
    {"cpu", "quota", "CPU controller"},
    {"cpu", "burst", "CPU controller"},
    {"cpu", "period", "CPU controller"},
    {"cpu", "realtimeRuntime", "CPU controller"},
    {"cpu", "realtimePeriod", "CPU controller"},
    {"cpu", "cpus", "CPU controller"},
    {"cpu", "mems", "CPU controller"},
    {"cpu", "idle", "CPU controller"},
    {"blockIO", "weight", "block devices"},
    {"blockIO", "leafWeight", "block devices"},
    {"blockIO", "weightDevice", "block devices"},
    {"blockIO", "throttleReadBpsDevice", "block devices"},
    {"blockIO", "throttleWriteBpsDevice", "block devices"},
    {"blockIO", "throttleReadIOPSDevice", "block devices"},
    {"blockIO", "throttleWriteIOPSDevice", "block devices"},
    {"network", "classID", "traffic classes"},
    {"network", "priorities", "traffic classes"},
    {"hugepageLimits", NULL, "huge pages"},
    {"rdma", NULL, "RDMA devices"},
    {"unified", NULL, "cgroup files"},
};

static bool asks_for_something(const struct json *v)
{
	switch (v->type) {
	case JSON_NULL:
		return false;
	case JSON_BOOL:
		return v->b;
	case JSON_NUMBER:
		return v->num != 0;
	case JSON_STRING:
	case JSON_ARRAY:
	case JSON_OBJECT:
		return v->len > 0;
	}
	return true;
}

/* Member KEY of OBJ (at NAME in messages), an integer or null, into *OUT (0 when absent). */
static int resource_int(const struct json *obj, const char *key, const char *name, int64_t *out,
			char *err, size_t size)
{
	const struct json *v = json_get(obj, key);

	*out = 0;
	if (!v || json_is(v, JSON_NULL))
		return 0;
	if (!json_int(v, out))
		return bad(err, size, "%s must be an integer", name);
	return 0;
}

int oci_resources_parse(const char *text, size_t len, struct oci_resources *r, char *err,
			size_t size)
{
	char jerr[200];
	struct json *doc = json_parse(text, len, jerr, sizeof(jerr));
	const struct json *mem, *pids;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (!doc)
		return bad(err, size, "resources: %s", jerr);
	if (!json_is(doc, JSON_OBJECT)) {
		bad(err, size, "resources: not an object");
		goto out;
	}
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		const struct json *v = json_get(doc, unsupported[i].object);
		if (v && unsupported[i].member)
			v = json_get(v, unsupported[i].member);
		if (v && asks_for_something(v)) {
			bad(err, size, "%s%s%s cannot be changed: the sandbox has no %s",
			    unsupported[i].object, unsupported[i].member ? "." : "",
			    unsupported[i].member ? unsupported[i].member : "",
			    unsupported[i].lacks);
			goto out;
		}
	}
	mem = json_get(doc, "memory");
	pids = json_get(doc, "pids");
	if ((mem && !json_is(mem, JSON_OBJECT) && !json_is(mem, JSON_NULL)) ||
	    (pids && !json_is(pids, JSON_OBJECT) && !json_is(pids, JSON_NULL))) {
		bad(err, size, "resources: memory and pids must be objects");
		goto out;
	}
	if (resource_int(mem, "limit", "memory.limit", &r->memory, err, size) ||
	    resource_int(mem, "swap", "memory.swap", &r->swap, err, size) ||
	    resource_int(pids, "limit", "pids.limit", &r->pids, err, size))
		goto out;
	ret = 0;
out:
	json_free(doc);
	return ret;
}

int oci_spec_load(const char *bundle, struct oci_spec *s, char *err, size_t size)
{
	char path[PATH_MAX], rerr[128];
	char *buf;
	size_t len;

	memset(s, 0, sizeof(*s));
	if ((size_t)snprintf(path, sizeof(path), "%s/config.json", bundle) >= sizeof(path))
		return bad(err, size, "bundle path too long");
	if (json_read_file(path, &buf, &len, rerr, sizeof(rerr)))
		return bad(err, size, "%s: %s", path, rerr);
	int r = oci_spec_parse(buf, len, s, err, size);
	free(buf);
	return r;
}

void oci_spec_free(struct oci_spec *s)
{
	free(s->args);
	free(s->env);
	free(s->gids);
	free(s->mounts);
	json_free(s->doc);
	memset(s, 0, sizeof(*s));
}
