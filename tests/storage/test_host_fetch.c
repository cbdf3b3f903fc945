/* The runtime host's fetch for a backend without zero-copy: it lends a
 * private copy, and a read that fails or comes back short must give one
 * error line naming the file and the offset (a workload reading many
 * shards cannot tell otherwise which one is bad).  The backend is
 * host_fixture.h's without zero-copy: 100 bytes of 'x', and reads at
 * offset 200 fail without a message of its own, as a third-party one may. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "host_fixture.h"

static void test_whole_fetch_lends_a_copy(void **state)
{
    hfx_fixture *fx = *state;
    const dlg_host *h = fx->h;
    const void *p = NULL;
    assert_int_equal(h->file_fetch(h, fx->f, 10, 50, &p), 0);
    assert_non_null(p);
    assert_int_equal(((const char *)p)[49], 'x');
    h->file_unfetch(h, fx->f, p, 50);
}

static void test_short_fetch_names_file_and_offset(void **state)
{
    hfx_fixture *fx = *state;
    const dlg_host *h = fx->h;
    const void *p = NULL;
    assert_int_equal(h->file_fetch(h, fx->f, 80, 50, &p), -DLG_EIO);
    const char *err = dlg_services_error(&fx->svc);
    assert_non_null(strstr(err, HFX_PATH));
    assert_non_null(strstr(err, "offset 80"));
    assert_null(strchr(err, '\n'));
}

static void test_failed_fetch_names_file_and_offset(void **state)
{
    hfx_fixture *fx = *state;
    const dlg_host *h = fx->h;
    const void *p = NULL;
    assert_int_equal(h->file_fetch(h, fx->f, 200, 8, &p), -DLG_EIO);
    const char *err = dlg_services_error(&fx->svc);
    assert_non_null(strstr(err, HFX_PATH));
    assert_non_null(strstr(err, "offset 200"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_whole_fetch_lends_a_copy, hfx_setup_copying, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_short_fetch_names_file_and_offset, hfx_setup_copying, hfx_teardown),
        cmocka_unit_test_setup_teardown(test_failed_fetch_names_file_and_offset, hfx_setup_copying, hfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
