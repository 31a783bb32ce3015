/*
 * scratch.h: a private directory for the filesystem tests. scratch_enter("t_name") sets the
 * umask to 022 and makes and enters /tmp/t_name.PID (removing what an earlier failed run may
 * have left); scratch_leave() goes back to / and removes it, checking that it is gone.
 * Include after check.h.
 */
#ifndef CONFORMANCE_SCRATCH_H
#define CONFORMANCE_SCRATCH_H

#include <dirent.h>
#include <sys/stat.h>

static char scratch_dir[64];

/* Removes what the test made, whatever state a failed check left it in. */
static void rm_tree(const char *path)
{
	struct stat st;
	char sub[512];

	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		rm_tree(sub);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

static void scratch_enter(const char *name)
{
	umask(022);
	snprintf(scratch_dir, sizeof(scratch_dir), "/tmp/%s.%d", name, getpid());
	rm_tree(scratch_dir);
	CHECK_EQ(mkdir(scratch_dir, 0755), 0);
	CHECK_EQ(chdir(scratch_dir), 0);
}

static void scratch_leave(void)
{
	CHECK_EQ(chdir("/"), 0);
	rm_tree(scratch_dir);
	CHECK_ERR(access(scratch_dir, F_OK), ENOENT);
}

#endif
