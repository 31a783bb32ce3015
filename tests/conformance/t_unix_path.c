/* t_unix_path: Unix sockets bound to filesystem paths. bind makes an S_IFSOCK node (a second
 * bind is EADDRINUSE), connect reaches the listener by path (also relative to the cwd), the
 * node outlives the socket (connect is then ECONNREFUSED) and unlink removes the name
 * (ENOENT). The socket belongs to the node, not to the name: after a rename, connect reaches
 * it by the new name only; a hard link and a symlink to the node reach it too; a file that is
 * not a socket is ECONNREFUSED. Under /tmp. */
#include "check.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static struct sockaddr_un addr(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	return a;
}

int main(void)
{
	char dir[64], path[96];
	struct stat st;

	snprintf(dir, sizeof(dir), "/tmp/t_unix_path.%d", getpid());
	CHECK_EQ(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/sock", dir);
	struct sockaddr_un a = addr(path);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(bind(s, (void *)&a, sizeof(a)), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(listen(s, 4), 0);
	int s2 = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_ERR(bind(s2, (void *)&a, sizeof(a)), EADDRINUSE);

	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(connect(c, (void *)&a, sizeof(a)), 0);
	int acc = accept(s, NULL, NULL);
	CHECK(acc >= 0);
	maybe_save(); /* a connection through a path-bound listener */
	CHECK_EQ(write(c, "ping", 4), 4);
	char buf[8] = {0};
	CHECK_EQ(read(acc, buf, sizeof(buf)), 4);
	CHECK(memcmp(buf, "ping", 4) == 0);
	close(acc);
	close(c);

	/* Relative names resolve against the cwd. */
	CHECK_EQ(chdir(dir), 0);
	struct sockaddr_un rel = addr("sock");
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(connect(c, (void *)&rel, sizeof(rel)), 0);
	close(c);

	/* Rename carries the socket along; links reach it. */
	char moved[128], hard[128], soft[128], plain[128];
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	snprintf(hard, sizeof(hard), "%s/hard", dir);
	snprintf(soft, sizeof(soft), "%s/soft", dir);
	snprintf(plain, sizeof(plain), "%s/plain", dir);
	CHECK_EQ(rename(path, moved), 0);
	struct sockaddr_un am = addr(moved), ah = addr(hard), as = addr(soft), ap = addr(plain);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_ERR(connect(c, (void *)&a, sizeof(a)), ENOENT);
	CHECK_EQ(connect(c, (void *)&am, sizeof(am)), 0);
	close(c);
	close(accept(s, NULL, NULL));
	CHECK_EQ(link(moved, hard), 0);
	CHECK_EQ(symlink(moved, soft), 0);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(connect(c, (void *)&ah, sizeof(ah)), 0);
	close(c);
	close(accept(s, NULL, NULL));
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(connect(c, (void *)&as, sizeof(as)), 0);
	close(c);
	close(accept(s, NULL, NULL));
	int fd = open(plain, O_CREAT | O_WRONLY, 0666);
	CHECK(fd >= 0);
	close(fd);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_ERR(connect(c, (void *)&ap, sizeof(ap)), ECONNREFUSED);
	close(c);
	CHECK_EQ(unlink(hard), 0);
	CHECK_EQ(unlink(soft), 0);
	CHECK_EQ(unlink(plain), 0);
	CHECK_EQ(rename(moved, path), 0);

	/* The node stays after the socket goes; unlink removes the name. */
	close(s);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_ERR(connect(c, (void *)&a, sizeof(a)), ECONNREFUSED);
	CHECK_EQ(unlink(path), 0);
	CHECK_ERR(connect(c, (void *)&a, sizeof(a)), ENOENT);
	close(c);
	close(s2);
	CHECK_EQ(chdir("/"), 0);
	CHECK_EQ(rmdir(dir), 0);
	return check_done();
}
