/* Word table (FNV-1a hashed, open addressing) and the capped id mapping. */
#define _GNU_SOURCE /* qsort_r */
#include "lm_vocab.h"

#include <dlgauge/plugin.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlgauge/fnv1a.h>

static uint64_t hash(const char *w, size_t len) { return dlg_fnv1a(DLG_FNV1A_INIT, w, len); }

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

/* The first id where mine and lead's words differ, said in out. */
static void first_word(const char *mine, size_t mlen, const char *lead, size_t llen, char *out, size_t olen)
{
    int64_t mn = 0, ln = 0;
    for (size_t i = 0; i < mlen; i++)
        mn += mine[i] == '\n';
    for (size_t i = 0; i < llen; i++)
        ln += lead[i] == '\n';
    size_t a = 0, b = 0;
    for (int64_t k = 0;; k++) { /* lines walked together: a vocabulary is read once */
        const char *ea = a < mlen ? memchr(mine + a, '\n', mlen - a) : NULL;
        const char *eb = b < llen ? memchr(lead + b, '\n', llen - b) : NULL;
        if (!ea || !eb)
            break;
        size_t na = (size_t)(ea - (mine + a)), nb = (size_t)(eb - (lead + b));
        if (na != nb || memcmp(mine + a, lead + b, na) != 0) {
            snprintf(out, olen, "word id %lld is '%.*s' there, '%.*s' on rank 0 (%lld and %lld words)",
                     (long long)k, (int)(na < 40 ? na : 40), mine + a, (int)(nb < 40 ? nb : 40), lead + b,
                     (long long)mn, (long long)ln);
            return;
        }
        a += na + 1;
        b += nb + 1;
    }
    snprintf(out, olen, "%lld and %lld words", (long long)mn, (long long)ln);
}

int lm_vocab_agree(const dlg_host *h, int rank, int size, int64_t *slots, const char *words, size_t len,
                   const char *name)
{
    if (size < 2 || !slots)
        return 0;
    /* each rank's hash (62 bits) in its own slot: the sum gathers them */
    memset(slots, 0, (size_t)size * sizeof *slots);
    slots[rank] = (int64_t)(hash(words, len) >> 2);
    int rc = h->comm_allreduce(h, slots, slots, (size_t)size, DLG_COMM_I64);
    if (rc < 0)
        return rc;
    int first = 1;
    while (first < size && slots[first] == slots[0])
        first++;
    if (first == size)
        return 0;
    if (!DLG_HOST_HAS(h, comm_bcast)) /* (comes with comm_info: a host's bug) */
        return h->error(h, DLG_EINVAL, "rank %d numbers words unlike rank 0 (data = %s here): every rank must "
                        "number the words alike", first, name);
    /* rank 0's data and words to every rank (in pieces: a rank without
     * memory for them takes part all the same), rank first's line back */
    struct {
        int64_t len;
        char name[512];
    } head = {(int64_t)len, ""};
    snprintf(head.name, sizeof head.name, "%s", name);
    if ((rc = h->comm_bcast(h, &head, sizeof head, 0)) < 0)
        return rc;
    head.name[sizeof head.name - 1] = '\0';
    size_t llen = head.len > 0 ? (size_t)head.len : 0;
    char *lead = rank == first ? malloc(llen ? llen : 1) : NULL, piece[16384];
    for (size_t at = 0; at < llen && rc == 0; at += sizeof piece) {
        size_t k = llen - at < sizeof piece ? llen - at : sizeof piece;
        if (rank == 0)
            memcpy(piece, words + at, k);
        rc = h->comm_bcast(h, piece, k, 0);
        if (lead)
            memcpy(lead + at, piece, k);
    }
    char which[200] = "the words differ", line[1400];
    if (rc == 0 && lead)
        first_word(words, len, lead, llen, which, sizeof which);
    free(lead);
    if (rc < 0)
        return rc;
    snprintf(line, sizeof line, "rank %d's vocabulary (from %s) numbers words unlike rank 0's (from %s): "
             "%s; every rank must number the words alike: give every rank the whole corpus (each "
             "trains on its own slice of it), not a file of its own", first, name, head.name, which);
    if ((rc = h->comm_bcast(h, line, sizeof line, first)) < 0)
        return rc;
    line[sizeof line - 1] = '\0';
    return h->error(h, DLG_EINVAL, "%s", line);
}
