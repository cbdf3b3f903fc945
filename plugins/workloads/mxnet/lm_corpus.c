/* Reading and tokenising the language model's corpus (see lm_corpus.h). */
#define _GNU_SOURCE
#include "lm_corpus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lm_vocab.h"
#include "synth.h"

#define SYNTH_WORDS 929589 /* PTB's training split */
/* How much text is read, generated or tokenised between two asks of
 * host->stopping(): about 50 ms of tokenising a vocabulary of a million
 * words (a cache miss a word), so that a Ctrl-C during a large corpus's
 * load ends the cell at once; the ask itself costs next to nothing. */
#define STOP_POLL_BYTES ((size_t)1 << 20)

typedef struct text {
    char *data;
    size_t len;
} text;

typedef struct tokens {
    int32_t *w; /* word indices, then ids */
    int64_t n, cap;
    int64_t words; /* tokens other than <eos> */
    int64_t lines;
    int64_t cut; /* token index where the held-out 10% of lines starts */
} tokens;

/* The file's len bytes into buf, in pieces between which a stop request
 * ends the read (-DLG_ESTOP, bare: the runner writes the cell as stopped). */
static int read_pieces(const dlg_host *h, dlg_file *f, const char *path, char *buf, size_t len)
{
    for (size_t at = 0; at < len; at += STOP_POLL_BYTES) {
        if (h->stopping(h))
            return -DLG_ESTOP;
        size_t n = len - at < STOP_POLL_BYTES ? len - at : STOP_POLL_BYTES;
        int64_t got = h->file_read(h, f, buf + at, n, at);
        if (got == -DLG_ESTOP && h->stopping(h)) /* a storage's wait cut short (throttle) */
            return -DLG_ESTOP;
        if (got < 0 || (size_t)got != n)
            return h->error(h, got < 0 ? (int)-got : DLG_EIO,
                            "data = text:%s: read %lld of %zu bytes at offset %zu (the file shrank?)", path,
                            (long long)got, n, at);
    }
    return 0;
}

/* The line the storage said when a call into it failed (its why). */
static bool storage_said(const dlg_host *h, char *buf, size_t len)
{
    return DLG_HOST_HAS(h, error_said) && h->error_said(h, buf, len);
}

static int read_text(const dlg_host *h, const char *path, text *t)
{
    dlg_file *f = NULL;
    uint64_t size = 0;
    int rc = h->file_open(h, NULL, path, &f);
    char said[400];
    if (rc < 0 && storage_said(h, said, sizeof said))
        return h->error(h, -rc, "data = text:%s: cannot open it: %s", path, said);
    if (rc < 0)
        return h->error(h, -rc, "data = text:%s: cannot open it", path);
    if ((rc = h->file_size(h, f, &size)) < 0 || size > ((uint64_t)1 << 40)) {
        h->file_close(h, f);
        return h->error(h, rc < 0 ? -rc : DLG_EINVAL, "data = text:%s: cannot size it", path);
    }
    t->len = (size_t)size;
    if (!(t->data = malloc(t->len + 1))) {
        h->file_close(h, f);
        return h->error(h, DLG_ENOMEM, "data = text:%s: out of memory for %zu bytes", path,
                        t->len);
    }
    rc = read_pieces(h, f, path, t->data, t->len);
    h->file_close(h, f);
    if (rc < 0)
        return rc;
    t->data[t->len] = '\0';
    /* text has no NUL bytes; RecordIO, LMDB and JPEG files are full of
     * them, and tokenised they would "train" on random byte strings */
    const char *nul = memchr(t->data, '\0', t->len);
    if (nul)
        return h->error(h, DLG_EINVAL,
                        "data = text:%s: byte offset %zu is a NUL byte: not a text corpus (a "
                        "RecordIO, LMDB or other binary file?); lstm-ptb reads PTB-format text",
                        path, (size_t)(nul - t->data));
    return 0;
}

static int push(tokens *k, int32_t w)
{
    if (k->n == k->cap) {
        int64_t cap = k->cap ? 2 * k->cap : 65536;
        int32_t *p = realloc(k->w, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        k->w = p;
        k->cap = cap;
    }
    k->w[k->n++] = w;
    return 0;
}

static int64_t count_lines(const text *t)
{
    int64_t n = 0;
    for (size_t i = 0; i < t->len; i++)
        n += t->data[i] == '\n';
    return n + (t->len > 0 && t->data[t->len - 1] != '\n');
}

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Words of every line, then <eos> (PyTorch: line.split() + ['<eos>']);
 * -DLG_ESTOP where the host asked to stop, -DLG_ENOMEM. */
static int tokenize(const dlg_host *h, const text *t, lm_vocab *v, tokens *k)
{
    int64_t lines = count_lines(t), cut_line = lines - lines / 10, line = 0;
    int32_t eos = lm_vocab_intern(v, "<eos>", 5);
    if (eos < 0)
        return -DLG_ENOMEM;
    k->cut = -1;
    size_t poll = 0; /* where the next line asks stopping() */
    for (size_t i = 0; i < t->len;) {
        if (i >= poll) {
            if (h->stopping(h))
                return -DLG_ESTOP;
            poll = i + STOP_POLL_BYTES;
        }
        if (line == cut_line && k->cut < 0)
            k->cut = k->n;
        size_t e = i;
        while (e < t->len && t->data[e] != '\n')
            e++;
        for (size_t p = i; p < e;) {
            while (p < e && blank(t->data[p]))
                p++;
            size_t q = p;
            while (q < e && !blank(t->data[q]))
                q++;
            if (q > p) {
                int32_t w = lm_vocab_intern(v, t->data + p, q - p);
                if (w < 0 || push(k, w) < 0)
                    return -DLG_ENOMEM;
                v->count[w]++;
                k->words++;
            }
            p = q;
        }
        if (push(k, eos) < 0)
            return -DLG_ENOMEM;
        v->count[eos]++;
        line++;
        i = e + 1;
    }
    k->lines = lines;
    if (k->cut < 0)
        k->cut = k->n;
    return 0;
}

/* Generated text into memory, asking stopping() every STOP_POLL_BYTES. */
typedef struct mem_out {
    const dlg_host *h;
    text *t;
    size_t poll; /* the length at which the next write asks */
} mem_out;

static int64_t mem_write(void *ctx, const void *buf, size_t n)
{
    mem_out *o = ctx;
    text *t = o->t;
    if (t->len >= o->poll) {
        if (o->h->stopping(o->h))
            return -DLG_ESTOP;
        o->poll = t->len + STOP_POLL_BYTES;
    }
    char *p = realloc(t->data, t->len + n + 1);
    if (!p)
        return -DLG_ENOMEM;
    memcpy(p + t->len, buf, n);
    t->data = p;
    t->len += n;
    t->data[t->len] = '\0';
    return (int64_t)n;
}

static int synth_text(const dlg_host *h, uint64_t words, int vocab, uint64_t seed, text *t)
{
    dlg_synth_text *g = NULL;
    dlg_data_err err = {0};
    mem_out mo = {h, t, 0};
    dlg_output o = {mem_write, &mo, "memory"};
    int rc = dlg_synth_text_new(&g, vocab < 3 ? 3 : vocab, seed, &err);
    if (rc == 0 && dlg_synth_text_write(g, words, &o, &err) < 0)
        rc = -err.code;
    dlg_synth_text_free(g);
    if (rc == -DLG_ESTOP) /* bare: the runner writes the cell as stopped */
        return rc;
    return rc < 0 ? h->error(h, -rc, "data = synthetic: %s", err.msg) : 0;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The held-out file beside `train`, or "" (then the last 10% of lines). */
static void valid_path(const char *train, char *out, size_t n)
{
    const char *base = strrchr(train, '/'), *t = NULL;
    for (const char *p = base ? base : train; (p = strstr(p, "train")); p++)
        t = p;
    out[0] = '\0';
    if (t && snprintf(out, n, "%.*svalid%s", (int)(t - train), train, t + 5) < (int)n &&
        exists(out))
        return;
    out[0] = '\0';
}

static double unigram_ppl(const int32_t *ids, int64_t n, int vocab)
{
    int64_t *c = calloc((size_t)vocab, sizeof *c);
    if (!c || n == 0) {
        free(c);
        return 0;
    }
    for (int64_t i = 0; i < n; i++)
        c[ids[i]]++;
    double hsum = 0;
    for (int i = 0; i < vocab; i++)
        if (c[i])
            hsum -= (double)c[i] / (double)n * log((double)c[i] / (double)n);
    free(c);
    return exp(hsum);
}

/* The spec's form: synthetic[:WORDS] (*words, 0 when not synthetic) or
 * text:PATH, or an error through h. */
static int parse_spec(const dlg_host *h, const char *data, unsigned long long *words)
{
    *words = 0;
    if (strncmp(data, "synthetic", 9) == 0 && (data[9] == '\0' || data[9] == ':')) {
        char *end = NULL;
        unsigned long long n = data[9] ? strtoull(data + 10, &end, 10) : SYNTH_WORDS;
        if (data[9] && (end == data + 10 || *end || n < 1 || n > 1000000000ull))
            return h->error(h, DLG_EINVAL, "data = %s: expected synthetic or synthetic:WORDS "
                            "(1..1000000000)", data);
        *words = n;
        return 0;
    }
    if (strncmp(data, "text:", 5) != 0 || !data[5])
        return h->error(h, DLG_EINVAL, "data = %s: lstm-ptb reads text:FILE (PTB format) or "
                        "synthetic[:WORDS]", data);
    return 0;
}

int lm_corpus_check(const dlg_host *h, const char *data, int vocab_cap)
{
    unsigned long long words;
    if (vocab_cap < 2)
        return h->error(h, DLG_EINVAL, "vocab = %d: need at least 2 words (<eos>, <unk>)",
                        vocab_cap);
    return parse_spec(h, data, &words);
}

/* Reads both splits' texts; held-out text may stay empty (use the cut). */
static int load_texts(lm_corpus *c, const dlg_host *h, const char *data, int cap, uint64_t seed,
                      text *tr, text *va)
{
    unsigned long long n;
    int rc = parse_spec(h, data, &n);
    if (rc < 0)
        return rc;
    if (n) {
        snprintf(c->train_name, sizeof c->train_name, "synthetic:%llu (first 90%% of lines)", n);
        snprintf(c->valid_name, sizeof c->valid_name, "synthetic:%llu (last 10%% of lines)", n);
        return synth_text(h, n, cap, seed, tr);
    }
    const char *path = data + 5;
    char vpath[sizeof c->valid_name];
    snprintf(c->train_name, sizeof c->train_name, "%s", path);
    valid_path(path, vpath, sizeof vpath);
    rc = read_text(h, c->train_name, tr);
    if (!rc && vpath[0])
        rc = read_text(h, vpath, va);
    if (vpath[0])
        snprintf(c->valid_name, sizeof c->valid_name, "%s", vpath);
    else
        snprintf(c->valid_name, sizeof c->valid_name, "%s (last 10%% of lines)", c->train_name);
    return rc;
}

/* The words of ids 0..vocab-1 in order, one a line ("<unk>" for the id
 * that the cap's rarer words share): what the ranks compare. */
static int id_words(lm_corpus *c, const lm_vocab *v, const lm_vocab_map *m)
{
    int64_t *of = malloc((size_t)(m->vocab ? m->vocab : 1) * sizeof *of);
    size_t len = 0;
    if (!of)
        return -DLG_ENOMEM;
    for (int i = 0; i < m->vocab; i++)
        of[i] = -1;
    for (int64_t i = 0; i < v->n; i++) {
        int32_t id = m->id[i];
        bool unk = v->len[i] == 5 && memcmp(v->word[i], "<unk>", 5) == 0;
        if (id >= 0 && id < m->vocab && (of[id] < 0 || unk))
            of[id] = i;
    }
    for (int i = 0; i < m->vocab; i++)
        len += (of[i] < 0 ? 0 : v->len[of[i]]) + 1;
    if (!(c->words = malloc(len ? len : 1))) {
        free(of);
        return -DLG_ENOMEM;
    }
    for (int i = 0; i < m->vocab; i++) {
        size_t n = of[i] < 0 ? 0 : v->len[of[i]];
        if (n)
            memcpy(c->words + c->words_len, v->word[of[i]], n);
        c->words_len += n;
        c->words[c->words_len++] = '\n';
    }
    free(of);
    return 0;
}

/* Whether the corpus has a word besides <unk> and <eos>: one of <unk>
 * alone trains a model of one token (its loss falls to 0 at once). */
static bool has_known_word(const lm_vocab *v)
{
    for (int64_t i = 0; i < v->n; i++) {
        bool unk = v->len[i] == 5 && memcmp(v->word[i], "<unk>", 5) == 0;
        bool eos = v->len[i] == 5 && memcmp(v->word[i], "<eos>", 5) == 0;
        if (!unk && !eos)
            return true;
    }
    return false;
}

static int build(lm_corpus *c, const dlg_host *h, int cap, text *tr, text *va)
{
    lm_vocab v = {0};
    tokens kt = {0}, kv = {0};
    lm_vocab_map m = {0};
    int rc = tokenize(h, tr, &v, &kt);
    if (!rc && va->data)
        rc = tokenize(h, va, &v, &kv);
    if (rc == -DLG_ENOMEM)
        h->error(h, DLG_ENOMEM, "out of memory tokenising %s", c->train_name);
    if (!rc && kt.words == 0)
        rc = h->error(h, DLG_EINVAL,
                      "data = text:%s: no words (%zu bytes, %lld lines); expected PTB-style text, "
                      "words separated by spaces, one sentence per line",
                      c->train_name, tr->len, (long long)kt.lines);
    if (!rc && !has_known_word(&v))
        rc = h->error(h, DLG_EINVAL,
                      "data = text:%s: no word but <unk> and <eos> (%lld words): nothing to model; expected "
                      "PTB-style text, where <unk> stands for the rare words only",
                      c->train_name, (long long)kt.words);
    c->distinct = v.n;
    if (!rc && ((rc = lm_vocab_cap(&v, cap, &m)) < 0 || (rc = id_words(c, &v, &m)) < 0))
        h->error(h, DLG_ENOMEM, "out of memory building the vocabulary");
    if (!rc) {
        for (int64_t i = 0; i < kt.n; i++)
            kt.w[i] = m.id[kt.w[i]];
        for (int64_t i = 0; i < kv.n; i++)
            kv.w[i] = m.id[kv.w[i]];
        if (!va->data) { /* held out: the last 10% of the lines */
            c->nvalid = kt.n - kt.cut;
            if (!(kv.w = malloc((size_t)(c->nvalid ? c->nvalid : 1) * sizeof *kv.w)))
                rc = h->error(h, DLG_ENOMEM, "out of memory");
            else
                memcpy(kv.w, kt.w + kt.cut, (size_t)c->nvalid * sizeof *kv.w);
            kt.n = kt.cut;
        } else {
            c->nvalid = kv.n;
        }
    }
    c->train = kt.w;
    c->ntrain = kt.n;
    c->valid = kv.w;
    c->vocab = m.vocab;
    c->unk_words = m.unk_words;
    c->unk_tokens = m.unk_tokens;
    if (!rc)
        c->unigram_ppl = unigram_ppl(c->train, c->ntrain, c->vocab);
    free(m.id);
    lm_vocab_free(&v);
    return rc;
}

int lm_corpus_load(lm_corpus *c, const dlg_host *h, const char *data, int vocab_cap,
                   uint64_t seed)
{
    memset(c, 0, sizeof *c);
    text tr = {0}, va = {0};
    int rc = lm_corpus_check(h, data, vocab_cap);
    if (!rc)
        rc = load_texts(c, h, data, vocab_cap, seed, &tr, &va);
    if (!rc)
        rc = build(c, h, vocab_cap, &tr, &va);
    free(tr.data);
    free(va.data);
    if (rc)
        lm_corpus_free(c);
    if (!rc && c->unk_words > 0)
        h->log(h, DLG_LOG_WARN,
               "lstm-ptb: %lld distinct words exceed vocab = %d: the %lld rarest (%lld tokens) "
               "map to <unk>",
               (long long)c->distinct, vocab_cap, (long long)c->unk_words,
               (long long)c->unk_tokens);
    return rc;
}

void lm_corpus_free(lm_corpus *c)
{
    free(c->train);
    free(c->valid);
    free(c->words);
    c->train = c->valid = NULL;
    c->words = NULL;
    c->words_len = 0;
}
