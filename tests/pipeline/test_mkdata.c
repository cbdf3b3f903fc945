/* Dataset generators: same seed -> same bytes (any thread count), size
 * statistics like ImageNet's, lists that the list parsers accept, PTB-like
 * text statistics, and the CLI's argument errors (exit 2). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "data_source.h"
#include "jpeg.h"
#include "listfile.h"
#include "recordio.h"
#include "synth.h"
#include "pipe_util.h"

static void same_file(const char *a, const char *b, bool want_same)
{
    size_t na, nb;
    uint8_t *pa = pu_slurp(a, &na), *pb = pu_slurp(b, &nb);
    bool same = na == nb && memcmp(pa, pb, na) == 0;
    if (same != want_same)
        fail_msg("%s vs %s: expected %s", a, b, want_same ? "same bytes" : "different bytes");
    free(pa);
    free(pb);
}

static void test_images(void **st)
{
    (void)st;
    char d1[512], d2[512], d3[512];
    pu_tmpdir(d1, sizeof d1, "mk1");
    pu_tmpdir(d2, sizeof d2, "mk2");
    pu_tmpdir(d3, sizeof d3, "mk3");
    dlg_synth_images_cfg c = {d1, "train", 5, 120, 3, 90, 1};
    dlg_synth_images_result r1, r2, r3;
    assert_int_equal(dlg_synth_images_write(&c, &r1, NULL), 0);
    c.out = d2;
    c.threads = 3;
    assert_int_equal(dlg_synth_images_write(&c, &r2, NULL), 0);
    c.out = d3;
    c.seed = 4;
    assert_int_equal(dlg_synth_images_write(&c, &r3, NULL), 0);
    char a[700], b[700], e[700];
    for (int i = 0; i < 120; i += 17) {
        snprintf(a, sizeof a, "%s/train/n%08d/n%08d_%d.JPEG", d1, i % 5, i % 5, i / 5);
        snprintf(b, sizeof b, "%s/train/n%08d/n%08d_%d.JPEG", d2, i % 5, i % 5, i / 5);
        snprintf(e, sizeof e, "%s/train/n%08d/n%08d_%d.JPEG", d3, i % 5, i % 5, i / 5);
        same_file(a, b, true);
        same_file(a, e, false);
    }
    assert_int_equal(r1.bytes, r2.bytes);
    /* ImageNet-like: mean about 400x350 and ~110 KB at quality 90 */
    print_message("120 images: mean %.0fx%.0f, %.1f KB (%llu..%llu)\n", r1.mean_w, r1.mean_h,
                  r1.bytes / 1e3 / 120, (unsigned long long)r1.min_bytes,
                  (unsigned long long)r1.max_bytes);
    assert_true(r1.mean_w > 340 && r1.mean_w < 460);
    assert_true(r1.mean_h > 300 && r1.mean_h < 400);
    assert_true(r1.bytes / 120.0 > 80e3 && r1.bytes / 120.0 < 140e3);
    assert_true(r1.max_bytes > 2 * r1.min_bytes); /* a spread, not one size */
    /* every file decodes, at the size the generator says */
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    for (int i = 0; i < 120; i += 29) {
        snprintf(a, sizeof a, "%s/train/n%08d/n%08d_%d.JPEG", d1, i % 5, i % 5, i / 5);
        size_t n;
        uint8_t *p = pu_slurp(a, &n);
        dlg_jpeg_info info;
        assert_int_equal(dlg_jpeg_header(j, p, n, a, &info, NULL), 0);
        int w, h;
        dlg_synth_image_size(3, (uint64_t)i, &w, &h);
        assert_int_equal(info.width, w);
        assert_int_equal(info.height, h);
        free(p);
    }
    dlg_jpeg_free(j);
    /* both lists parse and agree with the folder scan */
    dlg_source src;
    dlg_filelist fl, scan;
    dlg_lst lst;
    snprintf(a, sizeof a, "%s/train.txt", d1);
    assert_int_equal(dlg_source_open_path(&src, a, NULL), 0);
    assert_int_equal(dlg_filelist_load(&fl, &src, NULL), 0);
    dlg_source_close_fd(&src);
    snprintf(a, sizeof a, "%s/train.lst", d1);
    assert_int_equal(dlg_source_open_path(&src, a, NULL), 0);
    assert_int_equal(dlg_lst_load(&lst, &src, NULL), 0);
    dlg_source_close_fd(&src);
    snprintf(a, sizeof a, "%s/train", d1);
    assert_int_equal(dlg_filelist_scan(&scan, a, NULL), 0);
    assert_int_equal(fl.n, 120);
    assert_int_equal(lst.n, 120);
    assert_int_equal(scan.n, 120);
    assert_int_equal(scan.nclasses, 5);
    for (size_t i = 0; i < 120; i++) {
        assert_int_equal(fl.entries[i].label, (int)(i % 5));
        assert_true(lst.items[i].labels[0] == (float)(i % 5));
        assert_string_equal(lst.items[i].path, fl.entries[i].path);
    }
    for (size_t i = 0; i < scan.n; i++) /* class folder order = label order */
        assert_int_equal(scan.entries[i].label, atoi(scan.entries[i].path + 1));
    dlg_filelist_free(&fl);
    dlg_filelist_free(&scan);
    dlg_lst_free(&lst);
}

static void test_text(void **st)
{
    (void)st;
    char dir[512], p1[600], p2[600], p3[600];
    pu_tmpdir(dir, sizeof dir, "txt");
    snprintf(p1, sizeof p1, "%s/a.txt", dir);
    snprintf(p2, sizeof p2, "%s/b.txt", dir);
    snprintf(p3, sizeof p3, "%s/ptb", dir);
    assert_int_equal(dlg_synth_text_files(p1, 200000, 10000, 5, 0, NULL), 0);
    assert_int_equal(dlg_synth_text_files(p2, 200000, 10000, 5, 0, NULL), 0);
    same_file(p1, p2, true);
    size_t n;
    char *t = (char *)pu_slurp(p1, &n);
    t[n] = 0;
    /* statistics: sentence length, <unk>, vocabulary size, Zipf slope */
    uint64_t tokens = 0, lines = 0, unk = 0;
    dlg_synth_text *g;
    assert_int_equal(dlg_synth_text_new(&g, 10000, 0, NULL), 0);
    const char *w0 = dlg_synth_text_word(g, 0), *w9 = dlg_synth_text_word(g, 9);
    uint64_t c0 = 0, c9 = 0;
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        lines++;
        assert_true(line[0] == ' ');
        for (char *s = line; *s;) {
            while (*s == ' ')
                s++;
            if (!*s)
                break;
            char *e = strchr(s, ' ');
            size_t k = e ? (size_t)(e - s) : strlen(s);
            tokens++;
            unk += k == 5 && !strncmp(s, "<unk>", 5);
            c0 += strlen(w0) == k && !strncmp(s, w0, k);
            c9 += strlen(w9) == k && !strncmp(s, w9, k);
            for (size_t i = 0; i < k; i++)
                assert_true((s[i] >= 'a' && s[i] <= 'z') || s[i] == '<' || s[i] == '>' || s[i] == 'N');
            s += k;
        }
    }
    double mean = (double)tokens / lines;
    print_message("text: %llu tokens, %llu sentences (mean %.1f), <unk> %.1f%%, f(1)/f(10) %.1f\n",
                  (unsigned long long)tokens, (unsigned long long)lines, mean,
                  100.0 * unk / tokens, (double)c0 / c9);
    assert_true(tokens >= 200000 && tokens < 200200);
    assert_true(mean > 19 && mean < 23);
    assert_true(unk > tokens / 40); /* PTB: ~4.5% */
    assert_true((double)c0 / c9 > 7 && (double)c0 / c9 < 13); /* Zipf(1): 10 */
    free(t);
    dlg_synth_text_free(g);
    /* PTB-style splits */
    assert_int_equal(dlg_synth_text_files(p3, 10000, 100, 1, 1, NULL), 0);
    const char *ext[] = {"train", "valid", "test"};
    size_t sizes[3];
    for (int k = 0; k < 3; k++) {
        snprintf(p2, sizeof p2, "%s.%s.txt", p3, ext[k]);
        free(pu_slurp(p2, &sizes[k]));
    }
    assert_true(sizes[0] > 8 * sizes[1] && sizes[1] > 0 && sizes[2] > 0);
}

static int cli(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' mkdata %s 2>/dev/null >/dev/null", DLG_CLI, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli(void **st)
{
    (void)st;
    char dir[512], args[1024];
    pu_tmpdir(dir, sizeof dir, "cli");
    assert_int_equal(cli(""), 2);
    assert_int_equal(cli("movies --out x"), 2);
    assert_int_equal(cli("images --out /tmp/x"), 2);           /* --classes missing */
    assert_int_equal(cli("images --out /tmp/x --classes 0 --images 3"), 2);
    assert_int_equal(cli("images --out /tmp/x --classes 2 --images -3"), 2);
    assert_int_equal(cli("images --out /tmp/x --classes 2 --images 3 --quality 101"), 2);
    assert_int_equal(cli("images --out /tmp/x --classes 2 --images 3 --bogus 1"), 2);
    assert_int_equal(cli("text --out /tmp/x"), 2);             /* --words missing */
    assert_int_equal(cli("text --out /tmp/x --words 10 --vocab 2"), 2);
    assert_int_equal(cli("text --out /tmp/x --words 10 --splits=1"), 2);
    snprintf(args, sizeof args, "images --out %s/img --classes 2 --images 4 --seed 9 --threads 2", dir);
    assert_int_equal(cli(args), 0);
    snprintf(args, sizeof args, "%s/img/train/n00000001/n00000001_1.JPEG", dir);
    size_t n;
    free(pu_slurp(args, &n));
    assert_true(n > 1000);
    snprintf(args, sizeof args, "text --out %s/t --words 100 --vocab 50 --splits", dir);
    assert_int_equal(cli(args), 0);
    snprintf(args, sizeof args, "images --out /proc/nope --classes 2 --images 4");
    assert_int_equal(cli(args), 1); /* cannot write: a failure, not a usage error */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_images),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
