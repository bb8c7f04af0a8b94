/* SPDX-License-Identifier: BSD-2-Clause */
/* test_tcp.c - unet_tcp.h's error contract without a network: NULL and
 * bad arguments give -EINVAL / NULL with errno EINVAL, destructors take
 * NULL, queries on NULL answer 0.  The protocol itself is tested between
 * namespaces (tests/integration/t_tcp.sh). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>

static void test_null_arguments(void **state)
{
	struct unet_tcp_stats st;
	char buf[8];

	(void)state;
	errno = 0;
	assert_null(unet_tcp__listen(NULL, 1, 80, NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(unet_tcp__connect(NULL, 1, 2, 80, NULL, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(unet_tcp__accept(NULL, 0));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(unet_tcp__send(NULL, buf, 1, 0), -EINVAL);
	assert_int_equal(unet_tcp__recv(NULL, buf, sizeof(buf), 0), -EINVAL);
	assert_int_equal(unet_tcp__shutdown(NULL), -EINVAL);
	assert_int_equal(unet_tcp__error(NULL), -EINVAL);
	assert_int_equal(unet_tcp__events(NULL), 0);
	assert_int_equal(unet_tcp__unacked(NULL), 0);
	assert_int_equal(unet_tcp__local_port(NULL), 0);
	assert_int_equal(unet_tcp__remote_port(NULL), 0);
	assert_int_equal(unet_tcp__remote_addr(NULL), 0);
	assert_int_equal(unet_tcp__stats(NULL, &st), -EINVAL);
	assert_int_equal(unet_iface__tcp_del(NULL, 1, 80), -EINVAL);
	assert_int_equal(unet_iface__for_each_tcp(NULL, NULL, NULL), -EINVAL);
	unet_tcp__close(NULL);
	unet_tcp__abort(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
