/* mxnet.so through the mock host: lstm-ptb learns a generated Zipf corpus
 * (training perplexity well below the corpus's unigram perplexity,
 * computed here from the corpus counts), evaluates held-out perplexity,
 * caps the vocabulary; inception-v3 runs on synthetic data and RecordIO;
 * bad input gives one clear error. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jpeg.h"
#include "workload_run.h"
#include "recordio.h"
#include "synth.h"

static char dir[256];

static int setup_dir(void **st)
{
    snprintf(dir, sizeof dir, "/tmp/dlg_mx_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int rm_dir(void **st)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Unigram perplexity of a PTB-format file: words plus one <eos> a line. */
static double unigram_ppl(const char *path, int *distinct)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192], words[4096][32];
    long counts[4096] = {0}, total = 0;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        for (char *s = strtok(line, " \t\r\n");; s = strtok(NULL, " \t\r\n")) {
            const char *w = s ? s : "<eos>";
            int k = 0;
            while (k < n && strcmp(words[k], w) != 0)
                k++;
            if (k == n) {
                assert_true(n < 4096 && strlen(w) < 32);
                strcpy(words[n++], w);
            }
            counts[k]++;
            total++;
            if (!s)
                break;
        }
    }
    fclose(f);
    double h = 0;
    for (int k = 0; k < n; k++)
        h -= (double)counts[k] / (double)total * log((double)counts[k] / (double)total);
    *distinct = n;
    return exp(h);
}

static void corpus(const char *name, uint64_t words, int vocab, char *spec, size_t n)
{
    char path[300];
    dlg_data_err err = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (dlg_synth_text_files(path, words, vocab, 3, 1, &err) < 0)
        fail_msg("corpus: %s", err.msg);
    snprintf(spec, n, "data=text:%s.train.txt", path); /* its held-out twin: .valid.txt */
}

/* A small LSTM memorises a few thousand Zipf tokens: the training
 * perplexity must fall well below what any unigram model achieves on the
 * same text (the i.i.d. tokens have no structure beyond the unigram and
 * sentence lengths, so only learning the sequence gets there). */
static void test_learns_zipf(void **st)
{
    char spec[400], train[400];
    corpus("zipf", 800, 30, spec, sizeof spec);
    snprintf(train, sizeof train, "%s/zipf.train.txt", dir);
    int distinct = 0;
    double uni = unigram_ppl(train, &distinct);
    const char *o[] = {spec, "hidden=64", "layers=1", "bptt=20", "batch=4", "dropout=0", NULL};
    wr_result r;
    wr_run("mxnet.so", "lstm-ptb", o, 400, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("lstm-ptb: %s", r.error);
    double last = exp(wr_double(&r, "last_loss"));
    printf("  unigram perplexity %.2f (%d distinct tokens, workload says %.2f); "
           "training perplexity after %d steps %.2f, mean over the run %.2f\n",
           uni, distinct, wr_double(&r, "unigram_perplexity"), r.steps_done, last,
           wr_double(&r, "perplexity"));
    assert_true(fabs(wr_double(&r, "unigram_perplexity") / uni - 1) < 1e-6);
    assert_int_equal((int)wr_double(&r, "vocab_size"), distinct);
    assert_true(last < 0.6 * uni);
    assert_true(wr_double(&r, "epochs") >= 1);
    assert_int_equal(r.items, (uint64_t)400 * 20 * 4);
}

static void test_infer_heldout(void **st)
{
    char spec[400];
    corpus("held", 4000, 50, spec, sizeof spec);
    const char *o[] = {spec, "mode=infer", "hidden=32", "bptt=10", "batch=4", NULL};
    wr_result r;
    wr_run("mxnet.so", "lstm-ptb", o, 5, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("lstm-ptb infer: %s", r.error);
    double ppl = wr_double(&r, "perplexity"), V = wr_double(&r, "vocab_size");
    printf("  untrained held-out perplexity %.2f (vocabulary %.0f)\n", ppl, V);
    /* an untrained model is near uniform over the vocabulary */
    assert_true(ppl > 0.7 * V && ppl < 1.5 * V);
    int d;
    char valid[400];
    snprintf(valid, sizeof valid, "%s/held.valid.txt", dir);
    unigram_ppl(valid, &d);
    assert_true(wr_double(&r, "split_tokens") > 0);
}

/* epochs counts completed passes: a pass is complete once its last
 * segment has run (it was counted only when the next pass started). */
static void test_epochs(void **st)
{
    char spec[400];
    corpus("epochs", 2000, 30, spec, sizeof spec);
    const char *o[] = {spec, "mode=infer", "hidden=8", "layers=1", "bptt=10", "batch=2", NULL};
    wr_result r;
    wr_run("mxnet.so", "lstm-ptb", o, 1, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("lstm-ptb: %s", r.error);
    int seg = (int)wr_int(&r, "segments");
    assert_true(seg >= 2 && seg <= 100);
    assert_int_equal(wr_int(&r, "epochs"), 0);
    const int steps[] = {seg - 1, seg, 2 * seg - 1, 2 * seg, 2 * seg + 1};
    const int want[] = {0, 1, 1, 2, 2};
    for (int i = 0; i < 5; i++) {
        wr_run("mxnet.so", "lstm-ptb", o, steps[i], &r);
        printf("  %d segments per pass: %d steps -> epochs %lld\n", seg, steps[i],
               wr_int(&r, "epochs"));
        assert_int_equal(wr_int(&r, "epochs"), want[i]);
    }
}

/* size picks Zaremba et al.'s whole preset: small unrolls 20 steps without
 * dropout, medium 35 with 0.5, large 35 with 0.65 (bptt stayed 35 and
 * dropout 0.2 whatever the size); bptt and dropout given win. */
static void test_size_presets(void **st)
{
    char spec[400];
    corpus("sizes", 4000, 40, spec, sizeof spec);
    static const struct {
        const char *size, *bptt, *dropout;
        int want_bptt;
        double want_dropout;
    } c[] = {{"size=small", NULL, NULL, 20, 0},
             {"size=medium", NULL, NULL, 35, 0.5},
             {"size=large", NULL, NULL, 35, 0.65},
             {"size=small", "bptt=7", "dropout=0.1", 7, 0.1}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *o[] = {spec, "hidden=8", "layers=1", "batch=2", c[i].size, c[i].bptt,
                           c[i].dropout, NULL};
        wr_result r;
        wr_run("mxnet.so", "lstm-ptb", o, 2, &r);
        if (r.setup_rc || r.step_rc)
            fail_msg("lstm-ptb %s: %s", c[i].size, r.error);
        printf("  %s %s: %llu tokens in 2 steps, bptt %lld, dropout %g\n", c[i].size,
               c[i].bptt ? c[i].bptt : "", (unsigned long long)r.items, wr_int(&r, "bptt"),
               wr_double(&r, "dropout"));
        assert_int_equal(r.items, (uint64_t)2 * 2 * c[i].want_bptt);
        assert_int_equal(wr_int(&r, "bptt"), c[i].want_bptt);
        assert_true(fabs(wr_double(&r, "dropout") - c[i].want_dropout) < 1e-12);
    }
}

/* Held-out perplexity averages each held-out token once: the weights are
 * fixed and every pass starts from a zero state, so steps past the first
 * pass repeat it and must not weigh its first segments twice (they did:
 * the mean ran over all steps). */
static void test_infer_each_token_once(void **st)
{
    char spec[400];
    corpus("once", 3000, 40, spec, sizeof spec);
    const char *o[] = {spec, "mode=infer", "hidden=16", "layers=1", "bptt=5", "batch=2", NULL};
    wr_result one, more;
    wr_run("mxnet.so", "lstm-ptb", o, 1, &one);
    if (one.setup_rc || one.step_rc)
        fail_msg("lstm-ptb: %s", one.error);
    int seg = (int)wr_int(&one, "segments");
    assert_true(seg >= 4);
    wr_run("mxnet.so", "lstm-ptb", o, seg, &one);
    wr_run("mxnet.so", "lstm-ptb", o, seg + seg / 2, &more);
    printf("  %d segments: loss %.9f after one pass, %.9f after 1.5 passes; %lld, %lld tokens\n",
           seg, wr_double(&one, "loss"), wr_double(&more, "loss"), wr_int(&one, "loss_tokens"),
           wr_int(&more, "loss_tokens"));
    assert_true(fabs(wr_double(&more, "loss") / wr_double(&one, "loss") - 1) < 1e-12);
    /* every token but each of the 2 streams' first, the short last segment too */
    long long want = (wr_int(&one, "split_tokens") / 2 - 1) * 2;
    assert_int_equal(wr_int(&one, "loss_tokens"), want);
    assert_int_equal(wr_int(&more, "loss_tokens"), want);
}

static void test_vocab_cap(void **st)
{
    char spec[400];
    corpus("cap", 3000, 40, spec, sizeof spec);
    const char *o[] = {spec, "vocab=12", "hidden=16", "bptt=5", "batch=2", NULL};
    wr_result r;
    wr_run("mxnet.so", "lstm-ptb", o, 2, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("lstm-ptb: %s", r.error);
    printf("  warning: %s\n", r.warning);
    assert_int_equal((int)wr_double(&r, "vocab_size"), 12);
    assert_true(wr_double(&r, "unk_words") > 0);
    assert_non_null(strstr(r.warning, "map to <unk>"));
    assert_true(r.warnings > 0); /* said at the default log level, not only with -v */
}

/* profile = true: the layer kinds in falling share (LSTM, decoder, loss,
 * embedding all timed), the slowest layers logged; absent without it */
static void test_lm_profile(void **st)
{
    char spec[400];
    corpus("prof", 3000, 40, spec, sizeof spec);
    const char *o[] = {spec, "hidden=32", "bptt=8", "batch=4", "profile=true", NULL};
    wr_result r;
    wr_run("mxnet.so", "lstm-ptb", o, 4, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("lstm-ptb profile: %s", r.error);
    assert_true(wr_double(&r, "layers_ms") > 0);
    const char *p = wr_field(&r, "layer_profile");
    assert_non_null(p);
    printf("  layer_profile: %.300s\n", p);
    static const char *const kinds[] = {"lstm ", "fc ", "softmax_loss ", "embedding "};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strstr(p, kinds[i]))
            fail_msg("no '%s' in the profile", kinds[i]);
    double prev = 101, share;
    for (const char *q = p; (q = strstr(q, ": ")) && sscanf(q + 2, "%lf%%", &share) == 1; q += 2) {
        assert_true(share <= prev && share >= 0);
        prev = share;
    }
    assert_non_null(strstr(r.log, "profile: "));
    const char *off[] = {spec, "hidden=32", "bptt=8", "batch=4", NULL};
    wr_run("mxnet.so", "lstm-ptb", off, 2, &r);
    assert_null(wr_field(&r, "layer_profile"));
}

static void expect_error(const char *name, const char *const *o, const char *needle)
{
    wr_result r;
    wr_run("mxnet.so", name, o, 1, &r);
    printf("  error: %s\n", r.error);
    assert_true(r.setup_rc < 0);
    assert_non_null(strstr(r.error, needle));
    assert_null(strchr(r.error, '\n'));
}

/* Cross-entropy of the one segment after `steps` training steps: every
 * step is the same batch from a zero state (one segment per stream). */
static double fixed_batch_loss(const char *spec, const char *bptt, const char *precision, int steps,
                               wr_result *r)
{
    const char *o[] = {spec, "hidden=32", "layers=1", "batch=4", bptt, "dropout=0", "clip=0", "lr=2",
                       precision, "device=cpu", NULL};
    wr_run("mxnet.so", "lstm-ptb", o, steps, r);
    if (r->setup_rc || r->step_rc)
        fail_msg("lstm-ptb %s: %s", precision, r->error);
    assert_int_equal(wr_int(r, "segments"), 1);
    return wr_double(r, "last_loss");
}

/* precision = bf16 on the cpu: the cpu-bf16 backend (below AVX-512, one
 * line saying so), its peak the bf16 rate; training with fp32 masters
 * learns a fixed batch as fp32 does; other precisions, and bf16 on the
 * reference backend, are refused in one line. */
static void test_lm_bf16(void **st)
{
    char spec[400], bptt[32];
    corpus("bf16", 100, 30, spec, sizeof spec);
    wr_result r;
    const char *probe[] = {spec, "hidden=8", "layers=1", "batch=4", "bptt=2", "precision=bf16",
                           "device=cpu", NULL};
    wr_run("mxnet.so", "lstm-ptb", probe, 1, &r);
    if (r.setup_rc < 0 && !wr_cpu_has("avx512f")) {
        printf("  below AVX-512: %s\n", r.error);
        assert_non_null(strstr(r.error, "needs AVX-512"));
        return;
    }
    assert_int_equal(r.setup_rc, 0);
    assert_string_equal(wr_field(&r, "backend"), "cpu-bf16");
    const char *src = wr_field(&r, "peak_source");
    printf("  peak_source: %s\n", src);
    assert_true(strstr(src, "BF16") || strstr(src, "bf16"));
    /* one segment per stream: bptt = tokens per stream - 1 */
    snprintf(bptt, sizeof bptt, "bptt=%lld", wr_int(&r, "split_tokens") / 4 - 1);
    double l0 = fixed_batch_loss(spec, bptt, "precision=bf16", 1, &r);
    double bf = fixed_batch_loss(spec, bptt, "precision=bf16", 100, &r);
    assert_string_equal(wr_field(&r, "backend"), "cpu-bf16");
    double f32 = fixed_batch_loss(spec, bptt, "precision=fp32", 100, &r);
    printf("  %s x 4 streams: perplexity %.2f at the first step; after 100: bf16 %.2f, fp32 %.2f\n",
           bptt, exp(l0), exp(bf), exp(f32));
    assert_true(exp(bf) < 0.5 * exp(l0));
    assert_true(fabs(bf - f32) < 0.1 * f32);
    /* inference (oneDNN's forward-inference LSTM): the held-out loss of
     * the same untrained weights, within bf16's rounding of fp32's */
    double held[2];
    for (int k = 0; k < 2; k++) {
        const char *o[] = {spec, "mode=infer", "hidden=32", "layers=1", "batch=2", "bptt=8",
                           k ? "precision=fp32" : "precision=bf16", "device=cpu", NULL};
        wr_run("mxnet.so", "lstm-ptb", o, 2, &r);
        if (r.setup_rc || r.step_rc)
            fail_msg("lstm-ptb infer: %s", r.error);
        held[k] = wr_double(&r, "loss");
    }
    printf("  held-out loss, untrained: bf16 %.5f, fp32 %.5f\n", held[0], held[1]);
    assert_true(fabs(held[0] - held[1]) < 1e-2 * held[1]);
    const char *fp16[] = {spec, "precision=fp16", NULL}; /* not one of fp32|bf16 */
    wr_run("mxnet.so", "lstm-ptb", fp16, 1, &r);
    assert_true(r.setup_rc < 0);
    const char *ref[] = {spec, "precision=bf16", "backend=ref", "device=cpu", NULL};
    expect_error("lstm-ptb", ref, "runs fp32 only");
}

static void test_bad_text(void **st)
{
    char path[300], spec[400];
    snprintf(path, sizeof path, "%s/empty.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("  \n\t\n\n", f); /* lines, no words */
    fclose(f);
    snprintf(spec, sizeof spec, "data=text:%s", path);
    const char *o1[] = {spec, NULL};
    expect_error("lstm-ptb", o1, "no words");
    f = fopen(path, "w");
    fputs("<unk> <unk>\n<unk>\n", f); /* words, none known: a model of one token */
    fclose(f);
    expect_error("lstm-ptb", o1, "no word but <unk> and <eos> (3 words): nothing to model");
    char small[400];
    corpus("tiny", 100, 20, small, sizeof small);
    const char *o2[] = {small, "bptt=35", "batch=20", NULL};
    expect_error("lstm-ptb", o2, "needs at least 36 per stream");
    const char *o3[] = {small, "bptt=0", NULL};
    expect_error("lstm-ptb", o3, "bptt = 0");
    const char *o4[] = {small, "batch=0", NULL};
    expect_error("lstm-ptb", o4, "batch = 0");
    const char *o5[] = {"data=recordio:/x.rec", NULL};
    expect_error("lstm-ptb", o5, "text:FILE");
}

/* A RecordIO file of w x h JPEGs (im2rec layout, no .idx). */
static void write_rec(const char *path, int n, int w, int h)
{
    dlg_data_err err = {0};
    dlg_jpeg *j = NULL;
    dlg_rec_writer *wr = NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(dlg_jpeg_new(&j, &err), 0);
    assert_int_equal(dlg_rec_writer_open_fd(&wr, fd, path, &err), 0);
    uint8_t *rgb = malloc((size_t)w * h * 3), *rec = malloc((size_t)w * h * 3 + 64);
    for (int i = 0; i < n; i++) {
        for (int p = 0; p < w * h * 3; p++)
            rgb[p] = (uint8_t)(p * 7 + i * 31);
        const uint8_t *jpg;
        size_t len;
        assert_int_equal(dlg_jpeg_encode(j, rgb, w, h, 90, &jpg, &len, &err), 0);
        dlg_im2rec_header hd = {0, (float)(i % 3), (uint64_t)i, 0};
        int64_t sz = dlg_im2rec_pack(rec, (size_t)w * h * 3 + 64, &hd, NULL, jpg, len, &err);
        assert_true(sz > 0);
        assert_int_equal(dlg_rec_write(wr, rec, (size_t)sz, NULL, &err), 0);
    }
    assert_int_equal(dlg_rec_writer_close(wr, &err), 0);
    close(fd);
    dlg_jpeg_free(j);
    free(rgb);
    free(rec);
}

static void test_inception_recordio(void **st)
{
    char rec[300], spec[400];
    snprintf(rec, sizeof rec, "%s/small.rec", dir);
    write_rec(rec, 4, 64, 48);
    snprintf(spec, sizeof spec, "data=recordio:%s", rec);
    /* Caffe crops the image as stored: too small (auto too, when it
     * resolves to caffe); torchvision resizes it first (it was refused) */
    const char *bad[] = {spec, "batch=2", "transform=caffe", NULL};
    expect_error("inception-v3", bad, "smaller than the 299x299 crop");
    const char *bgr[] = {spec, "batch=2", "crop=75", "channel_order=bgr", "pixel_range=255", NULL};
    expect_error("inception-v3", bgr, "smaller than the 75x75 crop");
    const char *tv[] = {spec, "batch=2", "crop=75", "classes=3", "transform=torchvision", NULL};
    wr_result r;
    wr_run("mxnet.so", "inception-v3", tv, 1, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("inception-v3, transform = torchvision, 64x48 images, crop 75: %s", r.error);
    const char *au[] = {spec, "batch=2", "crop=75", "classes=3", NULL};
    wr_run("mxnet.so", "inception-v3", au, 1, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("inception-v3, transform = auto (torchvision), 64x48 images, crop 75: %s", r.error);
    /* transform = mxnet enlarges them (MXNet 1.3+): no error at setup; a
     * max_crop_size window larger than them it refuses, as MXNet does */
    const char *win[] = {spec, "batch=2", "crop=75", "transform=mxnet", "min_crop_size=60",
                         "max_crop_size=70", NULL};
    expect_error("inception-v3", win, "is 64x48, smaller than max_crop_size = 70");
    const char *mx[] = {spec, "batch=2", "crop=75", "classes=3", "transform=mxnet", NULL};
    wr_run("mxnet.so", "inception-v3", mx, 1, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("inception-v3, transform = mxnet, 64x48 images, crop 75: %s", r.error);
    snprintf(rec, sizeof rec, "%s/ok.rec", dir);
    write_rec(rec, 4, 96, 80);
    snprintf(spec, sizeof spec, "data=recordio:%s", rec);
    const char *ok[] = {spec, "batch=2", "crop=75", "classes=3", NULL};
    wr_run("mxnet.so", "inception-v3", ok, 2, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("inception-v3 on RecordIO: %s", r.error);
    printf("  recordio train: loss %s, data %s, %s params\n", wr_field(&r, "loss"),
           wr_field(&r, "data_source"), wr_field(&r, "params"));
    assert_string_equal(wr_field(&r, "data_source"), "recordio");
    assert_true(isfinite(wr_double(&r, "loss")));
}

/* A binary file given as text (here a RecordIO of JPEGs; an LMDB alike)
 * is refused in one line naming the first NUL byte, for the training file
 * and for its held-out twin: tokenised, it used to train on byte strings. */
static void test_binary_text(void **st)
{
    char path[300], spec[400];
    snprintf(path, sizeof path, "%s/images.train.txt", dir);
    write_rec(path, 2, 32, 32);
    snprintf(spec, sizeof spec, "data=text:%s", path);
    const char *o[] = {spec, "size=small", "batch=1", NULL};
    expect_error("lstm-ptb", o, "is a NUL byte: not a text corpus");
    corpus("bin", 2000, 50, spec, sizeof spec); /* bin.train.txt, bin.valid.txt */
    snprintf(path, sizeof path, "%s/bin.valid.txt", dir);
    FILE *f = fopen(path, "wb");
    fwrite("a b\nc\0d\n", 1, 8, f);
    fclose(f);
    const char *v[] = {spec, "mode=infer", "size=small", "batch=1", NULL};
    expect_error("lstm-ptb", v, "valid.txt: byte offset 5 is a NUL byte");
}

static void test_inception_synthetic(void **st)
{
    const char *o[] = {"mode=infer", "batch=1", "crop=75", NULL};
    wr_result r;
    wr_run("mxnet.so", "inception-v3", o, 2, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("inception-v3: %s", r.error);
    assert_int_equal(r.items, 2);
    /* 23.8 M parameters without the aux head; FLOPs scale with crop^2 */
    assert_int_equal((long long)wr_double(&r, "params"), 23834568);
    assert_true(wr_double(&r, "flops_per_item") > 0);
    const char *small[] = {"mode=train", "batch=1", "crop=260", "aux=true", NULL};
    expect_error("inception-v3", small, "aux = true needs crop >= ");
    /* any crop is torchvision's net (the engine pools in floor mode, as
     * torchvision): 320 used to be refused, its maxpool2 giving 38x38 in
     * Caffe's ceil mode where torchvision gives 37x37 */
    const char *c320[] = {"mode=infer", "batch=1", "crop=320", NULL};
    wr_result b;
    wr_run("mxnet.so", "inception-v3", c320, 1, &b);
    if (b.setup_rc || b.step_rc)
        fail_msg("inception-v3 at crop 320: %s", b.error);
    assert_int_equal((long long)wr_double(&b, "params"), 23834568);
    printf("  crop 75: %.6g, crop 320: %.6g FLOP/image\n", wr_double(&r, "flops_per_item"),
           wr_double(&b, "flops_per_item"));
    assert_true(wr_double(&b, "flops_per_item") > 10 * wr_double(&r, "flops_per_item"));
}

/* The aux head only trains (tests/mxnet/test_mx_inception.c trains it);
 * inference runs without it, as torchvision's eval mode does: the FLOPs
 * and parameters of aux = false, and no crop floor for the head (it used
 * to run the head, count its FLOPs and refuse crops under 261). */
static void test_inception_aux_infer(void **st)
{
    const char *plain[] = {"mode=infer", "batch=1", "crop=75", NULL};
    const char *aux[] = {"mode=infer", "batch=1", "crop=75", "aux=true", NULL};
    wr_result p, a;
    wr_run("mxnet.so", "inception-v3", plain, 1, &p);
    wr_run("mxnet.so", "inception-v3", aux, 1, &a);
    if (p.setup_rc || p.step_rc || a.setup_rc || a.step_rc)
        fail_msg("inception-v3: %s%s", p.error, a.error);
    printf("  infer %.6g, infer with aux = true %.6g FLOP/image\n",
           wr_double(&p, "flops_per_item"), wr_double(&a, "flops_per_item"));
    assert_true(wr_double(&a, "flops_per_item") == wr_double(&p, "flops_per_item"));
    assert_int_equal((long long)wr_double(&a, "params"), 23834568);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_learns_zipf),
#ifndef ONLY_LEARN
    cmocka_unit_test(test_infer_heldout),
        cmocka_unit_test(test_vocab_cap),          cmocka_unit_test(test_epochs),
        cmocka_unit_test(test_size_presets),       cmocka_unit_test(test_infer_each_token_once),
        cmocka_unit_test(test_bad_text),           cmocka_unit_test(test_binary_text),
        cmocka_unit_test(test_lm_profile),         cmocka_unit_test(test_lm_bf16),
        cmocka_unit_test(test_inception_recordio), cmocka_unit_test(test_inception_synthetic),
        cmocka_unit_test(test_inception_aux_infer),
#endif
    };
    return cmocka_run_group_tests(tests, setup_dir, rm_dir);
}
