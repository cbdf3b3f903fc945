/* PTB-like text: Zipf(1) over a fixed vocabulary (<unk> and N among the
 * most frequent tokens, as in PTB), sentence lengths gamma-distributed with
 * PTB's mean (~21) and spread (~10), in PTB's line format. */
#include "synth.h"
#include "synth_out.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORD 24
#define MAX_SENT 120

struct dlg_synth_text {
    int vocab;
    char (*words)[MAX_WORD];
    double *cdf; /* cdf[r] = P(rank <= r) */
    uint64_t s;  /* xorshift state */
    char *line;  /* one sentence, reused */
    size_t line_cap;
};

static const char *const syll[] = {"ba", "be", "bi", "bo", "ca", "co", "da", "de", "di", "do",
                                   "fa", "fe", "ga", "go", "ha", "he", "ka", "ki", "la", "le",
                                   "li", "lo", "ma", "me", "mi", "mo", "na", "ne", "ni", "no",
                                   "pa", "pe", "ra", "re", "ri", "ro", "sa", "se", "si", "so",
                                   "ta", "te", "ti", "to", "va", "ve", "wa", "ze"};
#define NSYLL (sizeof syll / sizeof syll[0])

static uint64_t next(dlg_synth_text *t)
{
    t->s ^= t->s >> 12;
    t->s ^= t->s << 25;
    t->s ^= t->s >> 27;
    return t->s * 0x2545F4914F6CDD1DULL;
}

static double unif(dlg_synth_text *t) { return ((double)(next(t) >> 11) + 0.5) * 0x1.0p-53; }

/* Rank r's word: r in mixed radix over the syllables, so every word is
 * unique, frequent words are short, and no word is "n" or "<unk>". */
static void make_word(char *out, int r)
{
    size_t len = 0;
    unsigned v = (unsigned)r;
    do {
        const char *s = syll[v % NSYLL];
        memcpy(out + len, s, 2);
        len += 2;
        v /= NSYLL;
    } while (v > 0 && len + 2 < MAX_WORD);
    if (r % 3 == 1) /* some closed syllables, for variety */
        out[len++] = "nrst"[r / 3 % 4];
    out[len] = '\0';
}

int dlg_synth_text_new(dlg_synth_text **out, int vocab, uint64_t seed, dlg_data_err *err)
{
    if (vocab < 3 || vocab > 10000000)
        return dlg_data_fail(err, DLG_EINVAL, "text: vocabulary %d out of range (3..10000000)",
                             vocab);
    dlg_synth_text *t = calloc(1, sizeof *t);
    if (!t)
        return dlg_data_fail(err, DLG_ENOMEM, "text: out of memory");
    t->vocab = vocab;
    t->words = malloc((size_t)vocab * sizeof *t->words);
    t->cdf = malloc((size_t)vocab * sizeof *t->cdf);
    t->line_cap = (size_t)MAX_SENT * (MAX_WORD + 1) + 4;
    t->line = malloc(t->line_cap);
    if (!t->words || !t->cdf || !t->line) {
        dlg_synth_text_free(t);
        return dlg_data_fail(err, DLG_ENOMEM, "text: out of memory");
    }
    /* PTB's most frequent tokens are "the", <unk>, "N": put <unk> and N at
     * ranks 1 and 2. */
    for (int r = 0, g = 0; r < vocab; r++) {
        if (r == 1)
            strcpy(t->words[r], "<unk>");
        else if (r == 2)
            strcpy(t->words[r], "N");
        else
            make_word(t->words[r], g++);
    }
    double sum = 0;
    for (int r = 0; r < vocab; r++)
        t->cdf[r] = (sum += 1.0 / (r + 1));
    for (int r = 0; r < vocab; r++)
        t->cdf[r] /= sum;
    t->cdf[vocab - 1] = 1.0;
    t->s = (seed ^ 0x74657874ULL) * 0x9E3779B97F4A7C15ULL | 1;
    *out = t;
    return 0;
}

void dlg_synth_text_free(dlg_synth_text *t)
{
    if (!t)
        return;
    free(t->words);
    free(t->cdf);
    free(t->line);
    free(t);
}

const char *dlg_synth_text_word(const dlg_synth_text *t, int r) { return t->words[r]; }

static int zipf(dlg_synth_text *t)
{
    double u = unif(t);
    int lo = 0, hi = t->vocab - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (t->cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Gamma(shape k >= 1, scale 1) by Marsaglia and Tsang. */
static double gamma_k(dlg_synth_text *t, double k)
{
    double d = k - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = sqrt(-2 * log(unif(t))) * cos(6.283185307179586 * unif(t));
        double v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = unif(t);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

int64_t dlg_synth_text_write(dlg_synth_text *t, uint64_t words, const dlg_output *o,
                             dlg_data_err *err)
{
    uint64_t done = 0;
    while (done < words) {
        int n = (int)lround(gamma_k(t, 4.4) * 4.8); /* mean 21.1, sd 10 */
        n = n < 1 ? 1 : n > MAX_SENT ? MAX_SENT : n;
        size_t len = 0;
        t->line[len++] = ' ';
        for (int i = 0; i < n; i++) {
            const char *w = t->words[zipf(t)];
            size_t k = strlen(w);
            memcpy(t->line + len, w, k);
            len += k;
            t->line[len++] = ' ';
        }
        t->line[len++] = '\n';
        errno = 0; /* so that the reason is this write's, if it sets one */
        int64_t rc = o->write(o->ctx, t->line, len);
        if (rc < 0) {
            char why[128];
            return dlg_data_fail(err, (int)-rc, "%s: write failed%s", o->name,
                                 dlg_synth_reason(errno, why, sizeof why));
        }
        done += (uint64_t)n;
    }
    return (int64_t)done;
}
