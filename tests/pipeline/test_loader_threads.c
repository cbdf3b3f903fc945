/* The worker pool: a worker that cannot start (pthread_create's EAGAIN, as
 * under ulimit -u) is one error line with the reason and the limit; workers
 * skipping corrupt records at once warn once.  pthread_create is wrapped at
 * link time to fail on demand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_util.h"

static atomic_int creates, fail_at; /* fail the fail_at-th call (1-based); 0: none */

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (atomic_fetch_add(&creates, 1) + 1 == atomic_load(&fail_at))
        return EAGAIN;
    return __real_pthread_create(t, a, fn, arg);
}

/* Four workers over d's files, in order; spec holds the data spec. */
static void cfg_for(dlg_loader_config *cfg, const pu_dataset *d, char *spec, size_t cap)
{
    snprintf(spec, cap, "files:%s", d->list);
    dlg_loader_config_defaults(cfg);
    cfg->data = spec;
    cfg->batch = 4;
    cfg->crop = 16;
    cfg->threads = 4;
    cfg->shuffle = false;
}

static void test_thread_limit(void **st)
{
    (void)st;
    pu_dataset d;
    pu_make_images(&d, "thr", 4, 2, 32, 24, 41);
    char spec[700];
    dlg_loader_config cfg;
    cfg_for(&cfg, &d, spec, sizeof spec);
    mock_host m;
    mock_host_init(&m);
    atomic_store(&creates, 0);
    atomic_store(&fail_at, 3);
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), -DLG_ENOMEM);
    assert_null(l);
    assert_int_equal(m.errors, 1);
    assert_non_null(strstr(m.last_error, "cannot start worker thread 3 of 4: "));
    assert_non_null(strstr(m.last_error, strerror(EAGAIN)));
    assert_non_null(strstr(m.last_error, "ulimit -u is"));
    assert_non_null(strstr(m.last_error, "lower threads (now 4)"));
    /* the two started workers were stopped: the next open works */
    atomic_store(&fail_at, 0);
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), 0);
    dlg_batch *b;
    assert_int_equal(dlg_loader_next(l, &b), 0);
    dlg_loader_release(l, b);
    dlg_loader_close(l);
    mock_host_fini(&m);
}

/* Three records in four are corrupt, so the four workers are mostly
 * skipping, at the same time: the warning is one line, however they
 * interleave (and no data race on the once-flag, for TSan). */
static void test_skip_warns_once(void **st)
{
    (void)st;
    enum { N = 32 };
    pu_dataset d;
    pu_make_images(&d, "skip1", N, 2, 32, 24, 42);
    for (int i = 0; i < N; i++) {
        if (i % 4 == 3)
            continue;
        FILE *f = fopen(d.paths[i], "wb");
        assert_non_null(f);
        fputs("not a jpeg", f);
        fclose(f);
    }
    char spec[700];
    dlg_loader_config cfg;
    cfg_for(&cfg, &d, spec, sizeof spec);
    cfg.skip_corrupt = true;
    mock_host m;
    mock_host_init(&m);
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), 0);
    for (int k = 0; k < 2 * N / 4; k++) { /* two epochs */
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        dlg_loader_release(l, b);
    }
    dlg_loader_stats s;
    dlg_loader_stats_get(l, &s);
    dlg_loader_close(l);
    assert_int_equal(s.skipped, 2 * (3 + 2 + 1) * N / 4); /* item 4k+j skips 3-j records */
    assert_int_equal(m.warnings, 1);
    assert_non_null(strstr(m.last_log, "skipping corrupt record"));
    mock_host_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_limit),
        cmocka_unit_test(test_skip_warns_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
