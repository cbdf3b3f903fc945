/* lstm-ptb's held-out evaluation and tokenisation through the mock host:
 * infer predicts every token of every stream but the first, as PyTorch's
 * word_language_model evaluate() does (sum of per-segment loss x length
 * over len(data) - 1 rows), so the perplexity is the same at any bptt;
 * PTB tokenisation (line.split() + <eos>) of a hand-written corpus and
 * the parameter count the help documents. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload_run.h"

static char dir[256];

static int setup_dir(void **st)
{
    snprintf(dir, sizeof dir, "/tmp/dlg_lm_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int rm_dir(void **st)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* n lines of 1..9 words over a 12-word vocabulary: n + words tokens. */
static long write_corpus(const char *name, int lines, unsigned seed)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    long tokens = 0;
    for (int l = 0; l < lines; l++) {
        int n = 1 + (int)(seed % 9);
        for (int w = 0; w < n; w++) {
            seed = seed * 1103515245u + 12345u;
            fprintf(f, "w%u ", (seed >> 16) % 12);
        }
        fputc('\n', f);
        tokens += n + 1;
    }
    fclose(f);
    return tokens;
}

/* One held-out pass at several bptt: the same weights (seeded, shapes
 * independent of bptt) and a state carried across segments give the same
 * loss over the same (per_stream - 1) x batch tokens whatever the segment
 * length.  Before, a pass stopped at the last whole segment: fewer tokens,
 * a different perplexity per bptt, and bptt > per_stream - 1 refused. */
static void test_every_token_any_bptt(void **st)
{
    write_corpus("every.train.txt", 40, 7);
    long n = write_corpus("every.valid.txt", 23, 11);
    const int B = 3;
    long per_stream = n / B, want_tokens = (per_stream - 1) * B;
    char spec[400];
    snprintf(spec, sizeof spec, "data=text:%s/every.train.txt", dir);
    /* ref at every bptt; oneDNN (cpu) at a short last segment and at one
     * segment shorter than bptt */
    static const char *const bptts[] = {"bptt=1", "bptt=4", "bptt=7", "bptt=1000",
                                        "bptt=7", "bptt=1000"};
    static const char *const backends[] = {"backend=ref", "backend=cpu"};
    double first = 0;
    for (int i = 0; i < 6; i++) {
        const char *o[] = {spec,     "mode=infer",        "hidden=8", "layers=2", "batch=3",
                           bptts[i], backends[i / 4], NULL};
        wr_result r;
        wr_run("mxnet.so", "lstm-ptb", o, 1, &r);
        if (r.setup_rc || r.step_rc)
            fail_msg("lstm-ptb %s %s: %s", bptts[i], backends[i / 4], r.error);
        int seg = (int)wr_int(&r, "segments");
        wr_run("mxnet.so", "lstm-ptb", o, seg, &r);
        double loss = wr_double(&r, "loss");
        printf("  %-11s %-9s %3d segments: %lld of %ld tokens, loss %.7f, perplexity %.4f\n",
               backends[i / 4], bptts[i], seg, wr_int(&r, "loss_tokens"), n, loss, wr_double(&r, "perplexity"));
        assert_int_equal(wr_int(&r, "split_tokens"), n);
        assert_int_equal(wr_int(&r, "loss_tokens"), want_tokens);
        assert_int_equal(r.items, (uint64_t)want_tokens); /* tokens/s counts real tokens */
        assert_int_equal(wr_int(&r, "epochs"), 1);
        assert_true(fabs(wr_double(&r, "perplexity") - exp(loss)) <= 1e-9 * exp(loss));
        if (i == 0)
            first = loss;
        assert_true(fabs(loss - first) < 1e-5 * first);
    }
}

/* A second pass repeats the first: the short last segment is counted once
 * too, and its loss enters weighted by its length. */
static void test_two_passes_same_loss(void **st)
{
    write_corpus("twice.train.txt", 30, 3);
    write_corpus("twice.valid.txt", 17, 5);
    char spec[400];
    snprintf(spec, sizeof spec, "data=text:%s/twice.train.txt", dir);
    const char *o[] = {spec, "mode=infer", "hidden=8", "layers=1", "batch=2", "bptt=6", NULL};
    wr_result one, two;
    wr_run("mxnet.so", "lstm-ptb", o, 1, &one);
    if (one.setup_rc || one.step_rc)
        fail_msg("lstm-ptb: %s", one.error);
    int seg = (int)wr_int(&one, "segments");
    wr_run("mxnet.so", "lstm-ptb", o, seg, &one);
    wr_run("mxnet.so", "lstm-ptb", o, 2 * seg + 1, &two);
    printf("  %d segments: loss %.9f after one pass, %.9f after two\n", seg,
           wr_double(&one, "loss"), wr_double(&two, "loss"));
    assert_true(fabs(wr_double(&two, "loss") / wr_double(&one, "loss") - 1) < 1e-9);
    assert_int_equal(wr_int(&two, "loss_tokens"), wr_int(&one, "loss_tokens"));
}

/* PTB conventions: words split at blanks (tabs, CR of CRLF too), one
 * <eos> per line (blank lines included, the last line without a newline
 * too), "<unk>" an ordinary word of the text. */
static void test_ptb_tokens(void **st)
{
    write_file("tok.train.txt", "the cat <unk>\r\n\n a\tcat  sat \n the end");
    write_file("tok.valid.txt", "the <unk> sat\n");
    char spec[400];
    snprintf(spec, sizeof spec, "data=text:%s/tok.train.txt", dir);
    const char *o[] = {spec, "hidden=4", "layers=1", "batch=1", "bptt=2", NULL};
    wr_result r;
    wr_run("mxnet.so", "lstm-ptb", o, 1, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("lstm-ptb: %s", r.error);
    /* train: 3+1, 0+1, 3+1, 2+1 tokens; words the cat <unk> a sat end <eos> */
    assert_int_equal(wr_int(&r, "split_tokens"), 12);
    assert_int_equal(wr_int(&r, "vocab_size"), 7);
    assert_int_equal(wr_int(&r, "unk_words"), 0);
    /* table 7x4, LSTM 4x16 + 4x16 + one 16-bias, decoder 7x4 + 7: as the
     * help says, PyTorch's nn.LSTM counts 16 more (bias_hh) */
    assert_int_equal(wr_int(&r, "params"), 28 + 64 + 64 + 16 + 28 + 7);
    const char *oi[] = {spec, "mode=infer", "hidden=4", "layers=1", "batch=1", "bptt=2", NULL};
    wr_run("mxnet.so", "lstm-ptb", oi, 2, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("lstm-ptb infer: %s", r.error);
    assert_int_equal(wr_int(&r, "split_tokens"), 4); /* the <unk> sat <eos> */
    assert_int_equal(wr_int(&r, "loss_tokens"), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_token_any_bptt),
        cmocka_unit_test(test_two_passes_same_loss),
        cmocka_unit_test(test_ptb_tokens),
    };
    return cmocka_run_group_tests(tests, setup_dir, rm_dir);
}
