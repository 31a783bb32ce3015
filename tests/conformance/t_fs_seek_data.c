/* t_fs_seek_data: SEEK_DATA and SEEK_HOLE on a sparse file under /tmp: data where it was
 * written (page-granular), holes in between, the end counts as a hole, and offsets at or past
 * the end are ENXIO. */
#include "check.h"

#include <fcntl.h>

int main(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/t_fs_seek_data.%d", getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(pwrite(fd, "x", 1, 1 << 20), 1); /* data at 1 MiB, a hole before it */
	CHECK_EQ(pwrite(fd, "y", 1, 0), 1);
	maybe_save(); /* a sparse file */
	CHECK_EQ(lseek(fd, 0, SEEK_DATA), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_HOLE), 4096);
	CHECK_EQ(lseek(fd, 8192, SEEK_DATA), 1 << 20);
	CHECK_EQ(lseek(fd, 8192, SEEK_HOLE), 8192);
	CHECK_EQ(lseek(fd, 1 << 20, SEEK_HOLE), (1 << 20) + 1); /* the end is a hole */
	CHECK_ERR(lseek(fd, (1 << 20) + 1, SEEK_DATA), ENXIO);
	CHECK_ERR(lseek(fd, (1 << 20) + 1, SEEK_HOLE), ENXIO);
	CHECK_ERR(lseek(fd, -1, SEEK_DATA), ENXIO);
	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_ERR(lseek(fd, 0, SEEK_DATA), ENXIO);
	close(fd);
	CHECK_EQ(unlink(path), 0);
	return check_done();
}
