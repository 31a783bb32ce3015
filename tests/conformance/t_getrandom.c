/*
 * t_getrandom: getrandom(2) fills the whole buffer, two draws differ, GRND_NONBLOCK and a zero
 * length are accepted, unknown flags give EINVAL and a bad buffer EFAULT. The two draws are
 * on either side of a save point: a restored sandbox (every sandbox restored from one golden
 * image alike) must not replay what it drew before, as a resumed VM snapshot can.
 */
#include "check.h"
#include <sys/random.h>

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

int main(void)
{
	unsigned char a[256], b[256], c[16];

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	CHECK_EQ(syscall(SYS_getrandom, a, sizeof(a), 0), sizeof(a));
	maybe_save();
	CHECK_EQ(syscall(SYS_getrandom, b, sizeof(b), 0), sizeof(b));
	CHECK(!all_zero(a, sizeof(a)));
	CHECK(memcmp(a, b, sizeof(a)) != 0);

	/* Every byte is written: the tail of a buffer preset to zero does not stay zero. */
	memset(a, 0, sizeof(a));
	CHECK_EQ(syscall(SYS_getrandom, a, sizeof(a), GRND_NONBLOCK), sizeof(a));
	CHECK(!all_zero(a + 192, 64));

	/* Only len bytes are written. */
	memset(c, 0xee, sizeof(c));
	CHECK_EQ(getrandom(c, 8, 0), 8);
	for (int i = 8; i < 16; i++)
		CHECK_EQ(c[i], 0xee);

	CHECK_EQ(syscall(SYS_getrandom, a, 0, 0), 0);
	CHECK_ERR(syscall(SYS_getrandom, a, sizeof(a), 0x80), EINVAL);
	CHECK_ERR(syscall(SYS_getrandom, a, sizeof(a), -1), EINVAL);
	CHECK_ERR(syscall(SYS_getrandom, BAD_PTR, 16, 0), EFAULT);
	return check_done();
}
