/* A stack overflow in one of the core's data loader workers, in a cell
 * run inside dlgauge's process (isolation = none), gets the crash guard's
 * one line before the process dies of SIGSEGV: each worker has its own
 * alternate signal stack.  Without one the handler cannot run on the
 * overflowed stack, and the process died with nothing said. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "loader.h"
#include "mock_host.h"
#include "rt_crash.h"

static const char who[] = "t.ini:3: [job train] workload mxnet";

/* In the child: a loader whose worker overflows. */
static void overflow_in_worker(void *arg)
{
    const char *dir = ((const rt_dir *)arg)->path;
    char list[600], img[600], spec[700];
    snprintf(list, sizeof list, "%s/list.txt", dir);
    snprintf(img, sizeof img, "%s/a.jpg", dir);
    FILE *f = fopen(list, "w");
    FILE *g = fopen(img, "w");
    if (!f || !g || fputs("a.jpg 0\n", f) < 0 || fputs("not read", g) < 0 || fclose(f) || fclose(g))
        _exit(2);
    mock_host m;
    mock_host_init(&m);
    if (mock_add_storage(&m, "deep", &rt_deep_ops, NULL) != 0)
        _exit(2);
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    snprintf(spec, sizeof spec, "files:%s", list);
    cfg.data = spec;
    cfg.batch = 1;
    cfg.threads = 1;
    cfg.crop = 8;
    dlg_loader *l;
    dlg_batch *b;
    if (dlg_loader_open(&l, &cfg, &m.host) != 0)
        _exit(3);
    dlg_loader_next(l, &b);
    _exit(4); /* not reached: the worker's read overflows */
}

static void worker_overflow_says_which_cell(void **state)
{
    rt_dies_with_line(*state, who, overflow_in_worker, *state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(worker_overflow_says_which_cell, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
