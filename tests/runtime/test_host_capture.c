/* A close's failure that was only warned about (the ABI's void
 * file_close keeps it out of the error slot) does not count, once that
 * close is over, as the backend having said why a later call of the same
 * thread failed.  A backend's open that first closes another file (whose
 * close fails, with its own line) and then fails without a word must get
 * the host's "open failed" line in the slot, not nothing: the workload
 * would read an empty or stale error and blame itself.  The backend is
 * host_fixture's, without zero-copy or asynchronous I/O; its HFX_PATH is
 * the file whose close fails. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "host_fixture.h"

#define OPEN_FAILS "/data/train/shard-0002.bin"

/* The open fails silently after a warned-about close of HFX_PATH: the
 * slot says the open failed, naming its file, with the backend's code. */
static void warned_close_is_no_reason(void **state)
{
    hfx_fixture *fx = *state;
    fx->inst.close_fails = fx->inst.says_why = true;
    fx->inst.close_first = fx->f;
    fx->f = NULL; /* the open closes it */
    fx->inst.open_fails = true;
    dlg_file *f = NULL;
    assert_int_equal(fx->h->file_open(fx->h, NULL, OPEN_FAILS, &f), -DLG_EIO);
    assert_null(f);
    assert_null(fx->inst.close_first); /* the close did happen inside the open */
    char err[2048], want[256];
    int code = dlg_services_error_copy(&fx->svc, err, sizeof err);
    snprintf(want, sizeof want, "st.ini:8: [job checksum] [storage fake] fake: %s: open failed (DLG_EIO)", OPEN_FAILS);
    if (code != DLG_EIO || strcmp(err, want) != 0)
        fail_msg("the slot holds (code %d) \"%s\"; expected \"%s\"", code, err, want);
}

/* While the close runs, its own line is what the host judges by: the
 * warning names the backend's reason, not a generic "close failed". */
static void close_keeps_its_line(void **state)
{
    hfx_fixture *fx = *state;
    fx->inst.close_fails = fx->inst.says_why = true;
    uint64_t before = dlg_services_mark(&fx->svc);
    fx->h->file_close(fx->h, fx->f);
    fx->f = NULL;
    /* one error raised (the backend's, captured), none added by the host */
    assert_int_equal(dlg_services_mark(&fx->svc) - before, 1);
    char err[64];
    assert_int_equal(dlg_services_error_copy(&fx->svc, err, sizeof err), 0);
    assert_string_equal(err, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(warned_close_is_no_reason, hfx_setup_copying, hfx_teardown),
        cmocka_unit_test_setup_teardown(close_keeps_its_line, hfx_setup_copying, hfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
