/* The loader's shards for data-parallel ranks (cfg.part, cfg.parts): part
 * p reads the run's stream items p, p + parts, ...  Known answers on a
 * small generated dataset: which records each part reads in dataset
 * order; that decoded, shuffled and augmented items are the whole
 * stream's items at those places; that the parts together read every
 * record once per epoch; synthetic labels; a bad part refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_util.h"

#define N 10    /* records */
#define PARTS 3
#define BATCH 2

static void cfg_parts(dlg_loader_config *cfg, const char *data, int part, int parts)
{
    dlg_loader_config_defaults(cfg);
    cfg->data = data;
    cfg->batch = BATCH;
    cfg->crop = 32;
    cfg->resize = 40;
    cfg->threads = 2;
    cfg->seed = 11;
    cfg->part = part;
    cfg->parts = parts;
}

/* The record (dataset order) whose file bytes a raw item holds, -1 if none. */
static int which_record(const pu_dataset *d, uint8_t *const *files, const size_t *lens,
                        const uint8_t *raw, size_t len)
{
    for (int r = 0; r < d->n; r++)
        if (lens[r] == len && memcmp(files[r], raw, len) == 0)
            return r;
    return -1;
}

/* Records of the first `items` items of a loader on cfg (decode off). */
static void records_read(mock_host *m, const dlg_loader_config *cfg, const pu_dataset *d,
                         uint8_t *const *files, const size_t *lens, int items, int *rec)
{
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, cfg, &m->host), 0);
    for (int k = 0; k < items; k += BATCH) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        for (int i = 0; i < BATCH && k + i < items; i++)
            rec[k + i] = which_record(d, files, lens, b->raw[i], b->raw_len[i]);
        dlg_loader_release(l, b);
    }
    dlg_loader_close(l);
}

typedef struct fixture {
    pu_dataset d;
    char spec[700];
    uint8_t *files[N];
    size_t lens[N];
    mock_host m;
} fixture;

static fixture *fixture_new(void)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    pu_make_images(&f->d, "parts", N, 4, 48, 40, 23);
    snprintf(f->spec, sizeof f->spec, "files:%s", f->d.list);
    for (int r = 0; r < N; r++)
        f->files[r] = pu_slurp(f->d.paths[r], &f->lens[r]);
    mock_host_init(&f->m);
    return f;
}

static void fixture_free(fixture *f)
{
    for (int r = 0; r < N; r++)
        free(f->files[r]);
    mock_host_fini(&f->m);
    free(f);
}

/* Dataset order: part p reads records (k * PARTS + p) mod N. */
static void test_dataset_order(void **st)
{
    (void)st;
    fixture *f = fixture_new();
    static const int want[PARTS][8] = {{0, 3, 6, 9, 2, 5, 8, 1},
                                       {1, 4, 7, 0, 3, 6, 9, 2},
                                       {2, 5, 8, 1, 4, 7, 0, 3}};
    for (int p = 0; p < PARTS; p++) {
        dlg_loader_config cfg;
        cfg_parts(&cfg, f->spec, p, PARTS);
        cfg.shuffle = false;
        cfg.decode = false;
        int rec[8];
        records_read(&f->m, &cfg, &f->d, f->files, f->lens, 8, rec);
        assert_memory_equal(rec, want[p], sizeof rec);
    }
    fixture_free(f);
}

/* Shuffled: in each of three epochs the parts' items together are every
 * record once (the run's items e*N .. e*N + N-1, item g being part g %
 * PARTS's item g / PARTS). */
static void test_cover_each_epoch(void **st)
{
    (void)st;
    fixture *f = fixture_new();
    enum { EPOCHS = 3, ITEMS = EPOCHS * N / PARTS + BATCH };
    int rec[PARTS][ITEMS];
    for (int p = 0; p < PARTS; p++) {
        dlg_loader_config cfg;
        cfg_parts(&cfg, f->spec, p, PARTS);
        cfg.decode = false;
        records_read(&f->m, &cfg, &f->d, f->files, f->lens, ITEMS, rec[p]);
    }
    int first_epoch[N];
    for (int e = 0; e < EPOCHS; e++) {
        int seen[N] = {0};
        for (int g = e * N; g < (e + 1) * N; g++) {
            int r = rec[g % PARTS][g / PARTS];
            assert_true(r >= 0 && r < N);
            seen[r]++;
            if (e == 0)
                first_epoch[g] = r;
        }
        for (int r = 0; r < N; r++)
            assert_int_equal(seen[r], 1);
    }
    /* and shuffled indeed: not dataset order */
    int in_order = 0;
    for (int g = 0; g < N; g++)
        in_order += first_epoch[g] == g;
    assert_true(in_order < N);
    fixture_free(f);
}

/* Decoded with random crops and mirrors: part p's item k is bit for bit
 * the whole stream's item k * PARTS + p, label too. */
static void test_same_items_as_whole(void **st)
{
    (void)st;
    fixture *f = fixture_new();
    enum { ITEMS = 8 };
    const size_t per = 3 * 32 * 32;
    float *whole = malloc(sizeof(float) * per * ITEMS * PARTS);
    int32_t lab[ITEMS * PARTS];
    assert_non_null(whole);
    dlg_loader_config cfg;
    cfg_parts(&cfg, f->spec, 0, 1);
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, &cfg, &f->m.host), 0);
    for (int k = 0; k < ITEMS * PARTS; k += BATCH) {
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        memcpy(whole + (size_t)k * per, b->data, sizeof(float) * per * BATCH);
        memcpy(lab + k, b->labels, sizeof(int32_t) * BATCH);
        dlg_loader_release(l, b);
    }
    dlg_loader_close(l);
    for (int p = 0; p < PARTS; p++) {
        cfg_parts(&cfg, f->spec, p, PARTS);
        assert_int_equal(dlg_loader_open(&l, &cfg, &f->m.host), 0);
        for (int k = 0; k < ITEMS; k += BATCH) {
            dlg_batch *b;
            assert_int_equal(dlg_loader_next(l, &b), 0);
            assert_int_equal(b->epoch, (uint32_t)((k * PARTS + p) / N));
            for (int i = 0; i < BATCH; i++) {
                int g = (k + i) * PARTS + p;
                assert_int_equal(b->labels[i], lab[g]);
                assert_memory_equal((float *)b->data + (size_t)i * per, whole + (size_t)g * per,
                                    sizeof(float) * per);
            }
            dlg_loader_release(l, b);
        }
        dlg_loader_close(l);
    }
    free(whole);
    fixture_free(f);
}

/* synthetic:N labels are the run's item mod N mod 1000; parts' noise differs. */
static void test_synthetic_parts(void **st)
{
    (void)st;
    mock_host m;
    mock_host_init(&m);
    float first[PARTS];
    for (int p = 0; p < PARTS; p++) {
        dlg_loader_config cfg;
        cfg_parts(&cfg, "synthetic:7", p, PARTS);
        cfg.crop = 16;
        dlg_loader *l;
        assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), 0);
        for (int k = 0; k < 6; k += BATCH) {
            dlg_batch *b;
            assert_int_equal(dlg_loader_next(l, &b), 0);
            for (int i = 0; i < BATCH; i++)
                assert_int_equal(b->labels[i], ((k + i) * PARTS + p) % 7);
            if (k == 0)
                first[p] = ((float *)b->data)[5];
            dlg_loader_release(l, b);
        }
        dlg_loader_close(l);
    }
    assert_true(first[0] != first[1] && first[1] != first[2]);
    mock_host_fini(&m);
}

static void test_bad_part(void **st)
{
    (void)st;
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    cfg_parts(&cfg, "synthetic:7", 3, 3);
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "part 3 of 3 parts"));
    cfg_parts(&cfg, "synthetic:7", 0, -2);
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), -DLG_EINVAL);
    mock_host_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dataset_order),
        cmocka_unit_test(test_cover_each_epoch),
        cmocka_unit_test(test_same_items_as_whole),
        cmocka_unit_test(test_synthetic_parts),
        cmocka_unit_test(test_bad_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
