/* The influx sink's retry schedule: doubling from `backoff`, each wait
 * capped at a minute, so the most retries (20) cannot stall a write for days. */
#include "influx.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define S 1000000000ull

static void test_doubles_then_caps(void **state)
{
    (void)state;
    assert_int_equal(influx_retry_wait_ns(S / 2, 0), S / 2);
    assert_int_equal(influx_retry_wait_ns(S / 2, 1), S);
    assert_int_equal(influx_retry_wait_ns(S / 2, 6), 32 * S);
    assert_int_equal(influx_retry_wait_ns(S / 2, 7), 60 * S); /* 64 s, capped */
    assert_int_equal(influx_retry_wait_ns(S / 2, 19), 60 * S);
    assert_int_equal(influx_retry_wait_ns(60 * S, 5), 60 * S);
    assert_int_equal(influx_retry_wait_ns(0, 20), 0);
}

/* retries = 20 from the default 500 ms: 0.5 + 1 + ... + 32 s, then 13
 * waits of a minute: 63.5 + 780 s, not the uncapped 6 days. */
static void test_total_wait_bounded(void **state)
{
    (void)state;
    assert_int_equal(influx_retry_waits_ns(S / 2, 20), 843 * S + S / 2);
    assert_int_equal(influx_retry_waits_ns(S / 2, 0), 0);
    assert_int_equal(influx_retry_waits_ns(S / 2, 3), 3 * S + S / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doubles_then_caps),
        cmocka_unit_test(test_total_wait_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
