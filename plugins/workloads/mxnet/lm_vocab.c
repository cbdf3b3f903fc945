/* Word table (FNV-1a hashed, open addressing) and the capped id mapping. */
#define _GNU_SOURCE /* qsort_r */
#include "lm_vocab.h"

#include <dlgauge/plugin.h>

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *w, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)w[i]) * 1099511628211ull;
    return h;
}

static int64_t find_slot(const lm_vocab *v, const char *w, size_t len)
{
    int64_t mask = v->nslot - 1, i = (int64_t)(hash(w, len) & (uint64_t)mask);
    for (;; i = (i + 1) & mask) {
        int32_t k = v->slot[i];
        if (k == 0 || (v->len[k - 1] == len && memcmp(v->word[k - 1], w, len) == 0))
            return i;
    }
}

static int grow_slots(lm_vocab *v)
{
    int64_t n = v->nslot ? 2 * v->nslot : 1024;
    int32_t *old = v->slot;
    int64_t oldn = v->nslot;
    if (!(v->slot = calloc((size_t)n, sizeof *v->slot))) {
        v->slot = old;
        return -1;
    }
    v->nslot = n;
    for (int64_t i = 0; i < oldn; i++)
        if (old[i])
            v->slot[find_slot(v, v->word[old[i] - 1], v->len[old[i] - 1])] = old[i];
    free(old);
    return 0;
}

static int grow_words(lm_vocab *v)
{
    int64_t n = v->cap ? 2 * v->cap : 1024;
    const char **w = realloc(v->word, (size_t)n * sizeof *w);
    if (w)
        v->word = w;
    uint32_t *l = realloc(v->len, (size_t)n * sizeof *l);
    if (l)
        v->len = l;
    int64_t *c = realloc(v->count, (size_t)n * sizeof *c);
    if (c)
        v->count = c;
    if (!w || !l || !c)
        return -1;
    v->cap = n;
    return 0;
}

int32_t lm_vocab_intern(lm_vocab *v, const char *w, size_t len)
{
    if (2 * (v->n + 1) > v->nslot && grow_slots(v) < 0)
        return -1;
    int64_t s = find_slot(v, w, len);
    if (v->slot[s])
        return v->slot[s] - 1;
    if (v->n == v->cap && grow_words(v) < 0)
        return -1;
    if (v->n >= INT32_MAX - 1)
        return -1;
    v->word[v->n] = w;
    v->len[v->n] = (uint32_t)len;
    v->count[v->n] = 0;
    v->slot[s] = (int32_t)(v->n + 1);
    return (int32_t)v->n++;
}

void lm_vocab_free(lm_vocab *v)
{
    free(v->word);
    free(v->len);
    free(v->count);
    free(v->slot);
    memset(v, 0, sizeof *v);
}

static int by_count(const void *a, const void *b, void *ctx)
{
    const lm_vocab *v = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int64_t cx = v->count[x], cy = v->count[y];
    return cx != cy ? (cx > cy ? -1 : 1) : (x > y) - (x < y);
}

int lm_vocab_cap(lm_vocab *v, int cap, lm_vocab_map *m)
{
    memset(m, 0, sizeof *m);
    int32_t unk = -1;
    if (v->n > cap && (unk = lm_vocab_intern(v, "<unk>", 5)) < 0)
        return -DLG_ENOMEM;
    int32_t *order = malloc((size_t)v->n * sizeof *order);
    m->id = malloc((size_t)v->n * sizeof *m->id);
    if (!order || !m->id) {
        free(order);
        free(m->id);
        m->id = NULL;
        return -DLG_ENOMEM;
    }
    for (int64_t i = 0; i < v->n; i++)
        order[i] = (int32_t)i;
    qsort_r(order, (size_t)v->n, sizeof *order, by_count, v);
    int next = 0;
    for (int64_t r = 0; r < v->n; r++) {
        int32_t w = order[r];
        if (unk < 0 || (w != unk && next < cap - 1))
            m->id[w] = next++;
        else if (w != unk) {
            m->id[w] = -1; /* resolved below */
            m->unk_words++;
            m->unk_tokens += v->count[w];
        }
    }
    if (unk >= 0) {
        m->id[unk] = next++;
        for (int64_t i = 0; i < v->n; i++)
            if (m->id[i] < 0)
                m->id[i] = m->id[unk];
    }
    m->vocab = next;
    free(order);
    return 0;
}
