/* Unit tests for oci/spec.c: a bundle's config.json as the runtime takes it — runc's own
 * default config, every field minisentry maps, and what it must refuse — and the resources
 * object of `update`. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/resource.h>

#include "oci/json.h"
#include "oci/spec.h"

/* The config `runc spec` writes (runc 1.1), as engines' configs look. */
static const char runc_default[] =
    "{\"ociVersion\":\"1.0.2-dev\",\"process\":{\"terminal\":true,\"user\":{\"uid\":0,\"gid\":0},"
    "\"args\":[\"sh\"],\"env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:"
    "/bin\",\"TERM=xterm\"],\"cwd\":\"/\",\"capabilities\":{\"bounding\":[\"CAP_AUDIT_WRITE\","
    "\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"]},\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":"
    "1024,\"soft\":1024}],\"noNewPrivileges\":true},\"root\":{\"path\":\"rootfs\",\"readonly\":"
    "true},\"hostname\":\"runc\",\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\","
    "\"source\":\"proc\"},{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
    "\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=65536k\"]},{\"destination\":"
    "\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\"},{\"destination\":\"/dev/mqueue\","
    "\"type\":\"mqueue\",\"source\":\"mqueue\"},{\"destination\":\"/sys\",\"type\":\"sysfs\","
    "\"source\":\"sysfs\",\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"ro\"]},{\"destination\":"
    "\"/sys/fs/cgroup\",\"type\":\"cgroup\",\"source\":\"cgroup\"}],\"linux\":{\"resources\":"
    "{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]},\"namespaces\":[{\"type\":\"pid\"},"
    "{\"type\":\"network\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},{\"type\":\"mount\"}],"
    "\"maskedPaths\":[\"/proc/kcore\"]}}";

static int parse(const char *text, struct oci_spec *s, char *err)
{
	return oci_spec_parse(text, strlen(text), s, err, 256);
}

static void test_runc_default_config_is_taken_whole(void **state)
{
	struct oci_spec s;
	char err[256];
	(void)state;

	assert_int_equal(parse(runc_default, &s, err), 0);
	assert_string_equal(s.version, "1.0.2-dev");
	assert_true(s.has_process);
	assert_int_equal(s.nargs, 1);
	assert_string_equal(s.args[0], "sh");
	assert_null(s.args[1]);
	assert_int_equal(s.nenv, 2);
	assert_string_equal(s.env[1], "TERM=xterm");
	assert_true(s.terminal);
	assert_true(s.no_new_privileges);
	assert_true(s.has_caps);
	assert_int_equal(s.cap_bounding, (1u << 29) | (1u << 5) | (1u << 10));
	assert_int_equal(s.cap_effective | s.cap_permitted | s.cap_ambient, 0);
	assert_int_equal(s.nrlimits, 1);
	assert_int_equal(s.rlimits[0].resource, RLIMIT_NOFILE);
	assert_int_equal(s.rlimits[0].soft, 1024);
	assert_string_equal(s.root_path, "rootfs");
	assert_true(s.root_readonly);
	assert_string_equal(s.hostname, "runc");
	assert_int_equal(s.nmounts, 6);
	assert_int_equal(s.mounts[0].kind, OCI_MOUNT_PROC);
	assert_int_equal(s.mounts[1].kind, OCI_MOUNT_TMPFS);
	assert_int_equal(s.mounts[2].kind, OCI_MOUNT_IGNORED);
	assert_int_equal(s.mounts[4].kind, OCI_MOUNT_SYSFS);
	assert_true(s.mounts[4].ro);
	assert_int_equal(s.namespaces,
			 OCI_NS_PID | OCI_NS_NETWORK | OCI_NS_IPC | OCI_NS_UTS | OCI_NS_MOUNT);
	assert_false(s.network_path);
	assert_true(s.memory_limit == -1 && s.pids_limit == -1);
	oci_spec_free(&s);
}

static void test_user_binds_limits_and_annotations_are_mapped(void **state)
{
	struct oci_spec s;
	char err[256];
	(void)state;

	assert_int_equal(
	    parse("{\"process\":{\"args\":[\"/bin/x\",\"a\"],\"cwd\":\"/w\",\"user\":{\"uid\":1000,"
		  "\"gid\":100,\"umask\":18,\"additionalGids\":[10,20]},\"rlimits\":[{\"type\":"
		  "\"RLIMIT_NOFILE\",\"soft\":1,\"hard\":18446744073709551615}]},"
		  "\"root\":{\"path\":\"/r\"},\"mounts\":[{\"destination\":\"/etc/hosts\",\"type\":"
		  "\"bind\",\"source\":\"/h\",\"options\":[\"rbind\",\"ro\"]},{\"destination\":\"/"
		  "d\","
		  "\"source\":\"/s\",\"options\":[\"bind\"]}],\"linux\":{\"namespaces\":[{\"type\":"
		  "\"network\",\"path\":\"/run/netns/x\"}],\"resources\":{\"memory\":{\"limit\":"
		  "1048576},\"pids\":{\"limit\":64}}},\"annotations\":{\"k\":\"v\"}}",
		  &s, err),
	    0);
	assert_int_equal(s.uid, 1000);
	assert_int_equal(s.gid, 100);
	assert_true(s.has_umask);
	assert_int_equal(s.umask, 022);
	assert_int_equal(s.ngids, 2);
	assert_int_equal(s.gids[1], 20);
	assert_true(s.rlimits[0].hard == (uint64_t)RLIM_INFINITY);
	assert_int_equal(s.mounts[0].kind, OCI_MOUNT_BIND);
	assert_true(s.mounts[0].ro);
	assert_int_equal(s.mounts[1].kind, OCI_MOUNT_BIND);
	assert_false(s.mounts[1].ro);
	assert_true(s.network_path);
	assert_true(s.memory_limit == 1048576);
	assert_true(s.pids_limit == 64);
	assert_string_equal(json_str(json_get(s.annotations, "k")), "v");
	oci_spec_free(&s);
}

/* TEXT is refused with a message containing WHAT. */
static void refused(const char *text, const char *what)
{
	struct oci_spec s;
	char err[256];

	if (parse(text, &s, err) == 0)
		fail_msg("accepted: %s", text);
	if (!strstr(err, what))
		fail_msg("message '%s' lacks '%s'", err, what);
	oci_spec_free(&s);
}

#define ROOT "\"root\":{\"path\":\"r\"}"
#define PROC(x) "{\"process\":{\"args\":[\"/x\"],\"cwd\":\"/\"" x "}," ROOT "}"

static void test_what_cannot_be_honoured_is_refused(void **state)
{
	(void)state;
	refused("[]", "not an object");
	refused("{\"process\":{\"args\":[\"/x\"],\"cwd\":\"/\"}}", "root.path");
	refused("{\"process\":{\"args\":[],\"cwd\":\"/\"}," ROOT "}", "must name a program");
	refused("{\"process\":{\"args\":[\"/x\"],\"cwd\":\"rel\"}," ROOT "}", "absolute");
	refused("{\"process\":{\"args\":[1],\"cwd\":\"/\"}," ROOT "}", "args[0]");
	refused(PROC(",\"env\":[\"NOEQUALS\"]"), "KEY=VALUE");
	refused(PROC(",\"user\":{\"uid\":-1,\"gid\":0}"), "uid");
	refused(PROC(",\"user\":{\"uid\":4294967295,\"gid\":0}"), "uid");
	refused(PROC(",\"user\":{\"uid\":0,\"gid\":0.5}"), "gid");
	refused(PROC(",\"rlimits\":[{\"type\":\"RLIMIT_BOGUS\",\"soft\":1,\"hard\":1}]"),
		"RLIMIT_");
	refused(PROC(",\"rlimits\":[{\"type\":\"RLIMIT_CPU\",\"soft\":2,\"hard\":1}]"),
		"soft above hard");
	refused(PROC(",\"terminal\":\"yes\""), "terminal");
	refused("{" ROOT ",\"mounts\":[{\"destination\":\"rel\",\"type\":\"tmpfs\"}]}",
		"destination");
	refused("{" ROOT ",\"mounts\":[{\"destination\":\"/x\",\"type\":\"nfs\"}]}",
		"type 'nfs' is not supported");
	refused("{" ROOT ",\"mounts\":[{\"destination\":\"/x\",\"type\":\"bind\"}]}",
		"needs a source");
	refused("{" ROOT ",\"linux\":{\"namespaces\":[{\"type\":\"ipc\",\"path\":\"/p\"}]}}",
		"joining the ipc namespace");
	refused("{" ROOT ",\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"pid\"}]}}",
		"twice");
	refused("{" ROOT ",\"linux\":{\"namespaces\":[{\"type\":\"bogus\"}]}}", "unknown type");
	refused("{" ROOT ",\"hostname\":\"" /* 65 bytes */
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
		"hostname");
	refused("{" ROOT ",\"annotations\":{\"k\":1}}", "annotations.k");
	refused("{" ROOT ",}", "config.json: expected a member name");
}

static int resources(const char *text, struct oci_resources *r, char *err)
{
	return oci_resources_parse(text, strlen(text), r, err, 256);
}

/* What podman and Docker send (Docker's whole object, zeros for what it leaves alone). */
static void test_update_resources_of_engines_are_taken(void **state)
{
	struct oci_resources r;
	char err[256];

	(void)state;
	assert_int_equal(resources("{\"memory\":{\"limit\":67108864,\"swap\":134217728}}", &r, err),
			 0);
	assert_int_equal(r.memory, 67108864);
	assert_int_equal(r.swap, 134217728);
	assert_int_equal(r.pids, 0);
	assert_int_equal(
	    resources("{\"memory\":{\"limit\":100663296,\"reservation\":0,\"swap\":"
		      "201326592,\"kernel\":0},\"cpu\":{\"shares\":0,\"quota\":0,"
		      "\"period\":0},\"blockIO\":{\"weight\":0},\"devices\":[{\"allow\":"
		      "false,\"access\":\"rwm\"}],\"hugepageLimits\":[],\"pids\":"
		      "{\"limit\":-1},\"unknown\":{\"x\":1}}",
		      &r, err),
	    0);
	assert_int_equal(r.memory, 100663296);
	assert_int_equal(r.pids, -1);
	assert_int_equal(resources("{\"memory\":null,\"pids\":{\"limit\":null}}", &r, err), 0);
	assert_int_equal(r.memory, 0);
	assert_int_equal(r.pids, 0);
}

static void update_refused(const char *text, const char *why)
{
	struct oci_resources r;
	char err[256] = "";

	assert_int_equal(resources(text, &r, err), -1);
	if (!strstr(err, why))
		fail_msg("'%s': '%s' does not say '%s'", text, err, why);
}

static void test_update_resources_a_sandbox_cannot_honour_are_refused(void **state)
{
	(void)state;
	update_refused("{\"cpu\":{\"shares\":512}}", "cpu.shares cannot be changed");
	update_refused("{\"cpu\":{\"cpus\":\"0-1\"}}", "cpu.cpus cannot be changed");
	update_refused("{\"memory\":{\"reservation\":1048576}}", "soft memory limit");
	update_refused("{\"memory\":{\"disableOOMKiller\":true}}", "memory.disableOOMKiller");
	update_refused("{\"blockIO\":{\"weightDevice\":[{\"major\":8,\"minor\":0,\"weight\":"
		       "10}]}}",
		       "blockIO.weightDevice");
	update_refused("{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":1}]}",
		       "hugepageLimits cannot be changed");
	update_refused("{\"unified\":{\"memory.high\":\"1G\"}}", "unified");
	update_refused("{\"memory\":{\"limit\":\"64m\"}}", "memory.limit must be an integer");
	update_refused("{\"pids\":{\"limit\":1.5}}", "pids.limit must be an integer");
	update_refused("{\"memory\":7}", "must be objects");
	update_refused("[1]", "not an object");
	update_refused("{\"memory\":{\"limit\":1,}}", "resources: ");
}

static void test_capabilities_by_name_unknown_ones_left_out(void **state)
{
	struct oci_spec s;
	char err[256];
	(void)state;

	assert_int_equal(
	    parse("{\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"capabilities\":{"
		  "\"effective\":[\"CAP_CHOWN\",\"CAP_NO_SUCH\",\"CAP_CHECKPOINT_RESTORE\"],"
		  "\"ambient\":[]}},\"root\":{\"path\":\"r\"}}",
		  &s, err),
	    0);
	assert_true(s.has_caps);
	assert_int_equal(s.cap_effective, (UINT64_C(1) << 40) | 1);
	assert_int_equal(s.cap_bounding | s.cap_ambient, 0);
	oci_spec_free(&s);
	assert_int_equal(parse("{\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"capabilities\":{"
			       "\"permitted\":[3]}},\"root\":{\"path\":\"r\"}}",
			       &s, err),
			 -1);
	assert_non_null(strstr(err, "process.capabilities.permitted[0]"));
	oci_spec_free(&s);
	assert_int_equal(oci_cap_number("CAP_SYS_ADMIN"), 21);
	assert_int_equal(oci_cap_number("sys_admin"), 21);
	assert_int_equal(oci_cap_number("CAP_BOGUS"), -1);
	assert_string_equal(oci_cap_name(7), "CAP_SETUID");
	assert_null(oci_cap_name(41));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runc_default_config_is_taken_whole),
	    cmocka_unit_test(test_capabilities_by_name_unknown_ones_left_out),
	    cmocka_unit_test(test_user_binds_limits_and_annotations_are_mapped),
	    cmocka_unit_test(test_what_cannot_be_honoured_is_refused),
	    cmocka_unit_test(test_update_resources_of_engines_are_taken),
	    cmocka_unit_test(test_update_resources_a_sandbox_cannot_honour_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
