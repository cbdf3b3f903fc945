/* A stack overflow on a thread a plugin started itself (the diag
 * workloads' pool, preprocess's workers), in a cell run inside dlgauge's
 * process, gets the crash guard's one line before the process dies of
 * SIGSEGV: each such thread takes an alternate signal stack from the
 * SDK's <dlgauge/sigstack.h>.  Without one the handler cannot run on the
 * overflowed stack, and the process died with nothing said. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mock_host.h"
#include "pool.h"
#include "prep_pool.h"
#include "rt_crash.h"

static const char who[] = "t.ini:7: [job pool] workload stream";

/* ---- diag's pool: worker 1 (a pthread) overflows, worker 0 waits --------- */
static void overflow_on_worker_1(void *arg, int tid, int nthreads, int cmd)
{
    (void)arg;
    (void)nthreads;
    (void)cmd;
    if (tid == 1)
        rt_recurse(NULL, 0);
}

static void overflow_in_diag_pool(void *arg)
{
    (void)arg;
    diag_pool *p;
    if (diag_pool_new(2, overflow_on_worker_1, NULL, &p) != 0)
        _exit(3);
    diag_pool_run(p, 0); /* waits at the barrier for worker 1 */
    _exit(4);            /* not reached */
}

static void diag_pool_overflow_says_which_cell(void **state)
{
    rt_dies_with_line(*state, who, overflow_in_diag_pool, NULL);
}

/* ---- preprocess's pool: the read of an image recurses without end -------- */
static void overflow_in_prep_pool(void *arg)
{
    char img[600];
    snprintf(img, sizeof img, "%s/a.jpg", ((const rt_dir *)arg)->path);
    FILE *f = fopen(img, "w");
    if (!f || fputs("not read", f) < 0 || fclose(f) != 0)
        _exit(2);
    mock_host m;
    mock_host_init(&m);
    if (mock_add_storage(&m, "deep", &rt_deep_ops, NULL) != 0)
        _exit(2);
    prep_item item = {.rel = "a.jpg", .path = img};
    prep_input in = {.items = &item, .n = 1};
    prep_params par = {.quality = 90};
    dlg_data_err err;
    dlg_data_err_clear(&err);
    prep_pool *p;
    uint64_t wait_ns;
    if (prep_pool_start(&p, &m.host, &in, &par, 1, &err) != 0)
        _exit(3);
    prep_pool_next(p, &wait_ns); /* waits for the worker's read */
    _exit(4);                    /* not reached */
}

static void prep_pool_overflow_says_which_cell(void **state)
{
    rt_dies_with_line(*state, who, overflow_in_prep_pool, *state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(diag_pool_overflow_says_which_cell, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(prep_pool_overflow_says_which_cell, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
