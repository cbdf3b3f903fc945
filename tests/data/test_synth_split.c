/* mkdata's splits tell the truth: a val image tree is not train's copy
 * (train's images stay what they were: render(seed, i), encoded); a PTB
 * corpus has a sentence in every split however few words are asked for,
 * and valid/test use only words train holds; the result counts what the
 * files hold. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jpeg.h"
#include "synth.h"
#include "tmpdir.h"

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: cannot open", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)len + 1);
    assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    p[len] = 0;
    *n = (size_t)len;
    return p;
}

static void image_path(char *buf, size_t cap, const char *dir, const char *split, int i, int classes)
{
    snprintf(buf, cap, "%s/%s/n%08d/n%08d_%d.JPEG", dir, split, i % classes, i % classes, i / classes);
}

static void test_val_is_not_train(void **st)
{
    (void)st;
    char dir[64];
    tmpdir_make(dir, "split");
    dlg_synth_images_cfg c = {dir, "train", 2, 4, 7, 90, 1};
    dlg_synth_images_result r;
    assert_int_equal(dlg_synth_images_write(&c, &r, NULL), 0);
    c.split = "val";
    assert_int_equal(dlg_synth_images_write(&c, &r, NULL), 0);
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    uint8_t *rgb = malloc((size_t)DLG_SYNTH_MAX_SIDE * DLG_SYNTH_MAX_SIDE * 3);
    for (int i = 0; i < 4; i++) {
        char tp[200], vp[200];
        image_path(tp, sizeof tp, dir, "train", i, 2);
        image_path(vp, sizeof vp, dir, "val", i, 2);
        size_t nt, nv;
        uint8_t *t = slurp(tp, &nt), *v = slurp(vp, &nv);
        if (nt == nv && memcmp(t, v, nt) == 0)
            fail_msg("val image %d is train's", i);
        /* train's bytes are the ones mkdata always wrote for this seed */
        int w, h;
        dlg_synth_image_size(7, (uint64_t)i, &w, &h);
        dlg_synth_image_render(7, (uint64_t)i, i % 2, w, h, rgb);
        const uint8_t *jpg;
        size_t len;
        assert_int_equal(dlg_jpeg_encode(j, rgb, w, h, 90, &jpg, &len, NULL), 0);
        assert_int_equal(len, nt);
        assert_memory_equal(jpg, t, len);
        free(t);
        free(v);
    }
    free(rgb);
    dlg_jpeg_free(j);
    tmpdir_rmrf(dir);
}

/* The tokens of a corpus file: counted, and added to train's sorted,
 * distinct words (train) or looked up in them (valid, test: every one must
 * be train's). */
typedef struct words {
    char **w;
    size_t n, cap;
} words;

static int cmp_word(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint64_t scan(const char *path, words *train, bool add, size_t *bytes, int *missing)
{
    char *t = (char *)slurp(path, bytes);
    uint64_t n = 0;
    for (char *w = strtok(t, " \n"); w; w = strtok(NULL, " \n"), n++) {
        if (add) {
            if (train->n == train->cap) {
                train->cap = train->cap ? 2 * train->cap : 256;
                train->w = realloc(train->w, train->cap * sizeof *train->w);
            }
            train->w[train->n++] = strdup(w);
        } else if (!bsearch(&w, train->w, train->n, sizeof *train->w, cmp_word) && (*missing)++ == 0) {
            print_message("%s: '%s' is not in train\n", path, w);
        }
    }
    free(t);
    if (add) { /* sorted and distinct */
        qsort(train->w, train->n, sizeof *train->w, cmp_word);
        size_t k = 0;
        for (size_t i = 0; i < train->n; i++) {
            if (k > 0 && strcmp(train->w[k - 1], train->w[i]) == 0)
                free(train->w[i]);
            else
                train->w[k++] = train->w[i];
        }
        train->n = k;
    }
    return n;
}

static void check_corpus(const char *dir, uint64_t words_asked, int vocab)
{
    char base[128], path[160];
    snprintf(base, sizeof base, "%s/ptb", dir);
    dlg_synth_text_result res;
    assert_int_equal(dlg_synth_text_files_res(base, words_asked, vocab, 3, 1, &res, NULL), 0);
    static const char *const ext[3] = {"train", "valid", "test"};
    words train = {0};
    int missing = 0;
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s.%s.txt", base, ext[k]);
        size_t bytes;
        uint64_t n = scan(path, &train, k == 0, &bytes, &missing);
        print_message("--words %llu: %s %llu words, %zu bytes\n", (unsigned long long)words_asked,
                      ext[k], (unsigned long long)n, bytes);
        assert_true(n > 0);
        assert_int_equal(res.words[k], n);
        assert_int_equal(res.bytes[k], bytes);
        if (k == 0)
            assert_int_equal(res.vocab_used, train.n);
    }
    assert_int_equal(missing, 0);
    for (size_t i = 0; i < train.n; i++)
        free(train.w[i]);
    free(train.w);
}

static void test_text_splits(void **st)
{
    (void)st;
    char dir[64];
    tmpdir_make(dir, "split");
    check_corpus(dir, 1, 10000);      /* a sentence in each split */
    check_corpus(dir, 100000, 10000); /* rare words: not in valid/test unless in train */
    /* without splits: what was written, counted */
    char one[128];
    snprintf(one, sizeof one, "%s/one.txt", dir);
    dlg_synth_text_result res;
    assert_int_equal(dlg_synth_text_files_res(one, 1, 50, 3, 0, &res, NULL), 0);
    size_t bytes;
    words seen = {0};
    int missing = 0;
    assert_int_equal(scan(one, &seen, true, &bytes, &missing), res.words[0]);
    assert_true(res.words[0] >= 1);
    assert_int_equal(res.bytes[0], bytes);
    assert_int_equal(res.vocab_used, seen.n);
    for (size_t i = 0; i < seen.n; i++)
        free(seen.w[i]);
    free(seen.w);
    tmpdir_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_val_is_not_train),
        cmocka_unit_test(test_text_splits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
