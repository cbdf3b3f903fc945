/* Determinism: the same batches for any thread count and through every
 * storage backend (the real plugins); epoch wrap and per-epoch shuffle seen
 * through decode = false (raw record bytes). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_image.h"
#include "pipe_util.h"

static pu_dataset D;

static int setup(void **st)
{
    (void)st;
    pu_make_images(&D, "det", 11, 3, 60, 50, 21);
    pu_make_rec(&D);
    return 0;
}

static uint8_t *run(const dlg_host *h, const char *data, int threads, int prefetch, int nb,
                    size_t *bytes, uint64_t *io)
{
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.data = data;
    cfg.batch = 4;
    cfg.crop = 24;
    cfg.threads = threads;
    cfg.prefetch = prefetch;
    cfg.seed = 77;
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, &cfg, h), 0);
    size_t per = dlg_loader_batch_bytes(&cfg);
    uint8_t *out = malloc(per * (size_t)nb);
    for (int i = 0; i < nb; i++) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        memcpy(out + per * (size_t)i, b->data, per);
        dlg_loader_release(l, b);
    }
    dlg_loader_stats s;
    dlg_loader_stats_get(l, &s);
    *io = s.bytes_read;
    dlg_loader_close(l);
    *bytes = per * (size_t)nb;
    return out;
}

static void test_threads(void **st)
{
    (void)st;
    char spec[700];
    snprintf(spec, sizeof spec, "recordio:%s", D.rec);
    mock_host m;
    mock_host_init(&m);
    size_t n0, n;
    uint64_t io;
    uint8_t *ref = run(&m.host, spec, 1, 2, 9, &n0, &io); /* 36 items: 3+ epochs */
    int threads[] = {2, 3, 8}, prefetch[] = {3, 2, 6};
    for (int k = 0; k < 3; k++) {
        uint8_t *got = run(&m.host, spec, threads[k], prefetch[k], 9, &n, &io);
        assert_int_equal(n, n0);
        assert_memory_equal(ref, got, n);
        free(got);
    }
    free(ref);
    mock_host_fini(&m);
}

static void test_backends(void **st)
{
    (void)st;
    const char *names[] = {"posix", "mmap", "uring", "direct"};
    char spec_rec[700], spec_files[700];
    snprintf(spec_rec, sizeof spec_rec, "recordio:%s", D.rec);
    snprintf(spec_files, sizeof spec_files, "files:%s", D.list);
    uint8_t *ref[2] = {NULL, NULL};
    size_t n[2];
    int tested = 0;
    for (int k = 0; k < 4; k++) {
        mock_host m;
        mock_host_init(&m);
        if (!pu_add_storage(&m, names[k])) {
            pu_storages_fini(&m);
            continue;
        }
        for (int f = 0; f < 2; f++) {
            size_t nn;
            uint64_t io;
            uint8_t *got = run(&m.host, f ? spec_files : spec_rec, 2, 3, 6, &nn, &io);
            assert_true(io > 0);
            if (!ref[f]) {
                ref[f] = got;
                n[f] = nn;
            } else {
                assert_int_equal(nn, n[f]);
                if (memcmp(ref[f], got, nn) != 0)
                    fail_msg("%s: batches differ from posix's (%s)", names[k], f ? "files" : "recordio");
                free(got);
            }
        }
        print_message("storage %s: same batches\n", names[k]);
        tested++;
        pu_storages_fini(&m);
    }
    assert_true(tested >= 2); /* posix and mmap work everywhere */
    assert_memory_equal(ref[0], ref[1], n[0]); /* and recordio == files */
    free(ref[0]);
    free(ref[1]);
}

static int find_image(const uint8_t *p, size_t len)
{
    for (int k = 0; k < D.n; k++) {
        size_t n;
        uint8_t *img = pu_slurp(D.paths[k], &n);
        int same = n == len && memcmp(img, p, n) == 0;
        free(img);
        if (same)
            return k;
    }
    return -1;
}

static void order(mock_host *m, const char *spec, uint64_t seed, bool shuffle, int *out, int count)
{
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.data = spec;
    cfg.batch = 3;
    cfg.decode = false;
    cfg.seed = seed;
    cfg.shuffle = shuffle;
    cfg.threads = 2;
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, &cfg, &m->host), 0);
    for (int got = 0; got < count;) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        assert_null(b->data);
        for (int i = 0; i < b->n && got < count; i++)
            out[got++] = find_image(b->raw[i], b->raw_len[i]);
        dlg_loader_release(l, b);
    }
    dlg_loader_close(l);
}

static void test_epochs_and_shuffle(void **st)
{
    (void)st;
    char spec[700];
    snprintf(spec, sizeof spec, "recordio:%s", D.rec);
    mock_host m;
    mock_host_init(&m);
    enum { E = 3 };
    int a[11 * E], b[11 * E], c[11 * E], plain[11 * E];
    order(&m, spec, 1, true, a, 11 * E);
    order(&m, spec, 1, true, b, 11 * E);
    order(&m, spec, 2, true, c, 11 * E);
    order(&m, spec, 1, false, plain, 11 * E);
    assert_memory_equal(a, b, sizeof a); /* same seed, same stream */
    assert_memory_not_equal(a, c, sizeof a);
    for (int e = 0; e < E; e++) {
        int seen[11] = {0};
        for (int i = 0; i < 11; i++) {
            int k = a[e * 11 + i];
            assert_true(k >= 0);
            seen[k]++;
            /* the stream is exactly the documented permutation */
            assert_int_equal(k, (int)dlg_ld_permute((uint64_t)i, 11, 1, (uint64_t)e, true));
            assert_int_equal(plain[e * 11 + i], i); /* shuffle off: dataset order */
        }
        for (int k = 0; k < 11; k++)
            assert_int_equal(seen[k], 1); /* every record once per epoch */
    }
    assert_memory_not_equal(a, a + 11, 11 * sizeof a[0]); /* a new order per epoch */
    mock_host_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_backends),
        cmocka_unit_test(test_epochs_and_shuffle),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
