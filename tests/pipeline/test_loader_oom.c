/* Opening a loader, and its first batch, when memory runs out: each
 * allocation fails in turn (rt_oom.h) over RecordIO with its .idx, RecordIO
 * without one (the source scans the file) and a JPEG list.  Each
 * failure must come back as an error saying "out of memory" and the loader
 * must close cleanly; a RecordIO scan whose reader could not be opened
 * freed a pointer never set (gcc's -fanalyzer led to it). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pipe_util.h"
#include "rt_oom.h"

/* Whether a failure's line says it ran out of memory, in one of the ways
 * the loader, libjpeg and strerror put it. */
static bool says_oom(const char *line)
{
    return strstr(line, "out of memory") || strstr(line, "Cannot allocate memory") ||
           strstr(line, "Memory allocation failure") || strstr(line, "Insufficient memory");
}

/* Fails each allocation of open + first batch in turn until one pass
 * makes no more than n allocations; returns how many failed the open. */
static int sweep(const char *spec, int threads)
{
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.data = spec;
    cfg.batch = 2;
    cfg.crop = 24;
    cfg.threads = threads;
    cfg.shuffle = false;
    int open_failures = 0;
    long n = 1;
    for (; n < 20000; n++) {
        m.last_error[0] = '\0';
        m.errors = 0; /* no line of an earlier pass is this one's */
        rt_oom_arm(n);
        dlg_loader *l = NULL;
        int rc = dlg_loader_open(&l, &cfg, &m.host);
        dlg_batch *b = NULL;
        int next = rc == 0 ? dlg_loader_next(l, &b) : 0;
        long made = rt_oom_disarm();
        char line[sizeof m.last_error];
        snprintf(line, sizeof line, "%s", m.last_error);
        if (rc == 0 && next == 0)
            dlg_loader_release(l, b);
        dlg_loader_close(l);
        if (rc < 0)
            open_failures++;
        int failed = rc < 0 ? rc : next;
        if (failed < 0 && (failed != -DLG_ENOMEM || !says_oom(line)))
            fail_msg("%s, allocation %ld failed: %s %d '%s'", spec, n, rc < 0 ? "open" : "next", failed, line);
        if (made < n)
            break; /* nothing failed: every allocation was seen */
    }
    mock_host_fini(&m);
    assert_true(n < 20000);
    fprintf(stderr, "%s: %ld allocations, %d failures of the open\n", spec, n, open_failures);
    return open_failures;
}

static void recordio_oom(void **st)
{
    (void)st;
    if (!rt_oom_possible())
        skip();
    pu_dataset d;
    pu_make_images(&d, "oomrec", 4, 2, 40, 36, 91);
    pu_make_rec(&d);
    char spec[700], idx[700];
    snprintf(spec, sizeof spec, "recordio:%s", d.rec);
    assert_true(sweep(spec, 2) > 3);
    snprintf(idx, sizeof idx, "%s/data.idx", d.dir);
    assert_int_equal(unlink(idx), 0); /* the source scans the .rec */
    assert_true(sweep(spec, 2) > 3);
}

static void files_oom(void **st)
{
    (void)st;
    if (!rt_oom_possible())
        skip();
    pu_dataset d;
    pu_make_images(&d, "oomfiles", 4, 2, 40, 36, 92);
    char spec[700];
    snprintf(spec, sizeof spec, "files:%s", d.list);
    assert_true(sweep(spec, 2) > 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recordio_oom),
        cmocka_unit_test(files_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
