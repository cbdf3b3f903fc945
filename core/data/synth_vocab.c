/* Open addressing over the generator's own word strings (no copies): a
 * slot holds rank + 1, 0 when empty, at most 2/3 of them used. */
#include "synth_vocab.h"

#include <stdlib.h>
#include <string.h>
#include <dlgauge/fnv1a.h>

struct dlg_synth_vocab {
    const dlg_synth_text *t;
    uint32_t *slot;
    size_t mask;
    uint8_t *seen; /* per rank */
    uint64_t nseen;
};

static uint64_t hash(const char *w, size_t len)
{
    uint64_t h = dlg_fnv1a(DLG_FNV1A_INIT, w, len);
    return h ^ (h >> 29);
}

int dlg_synth_vocab_new(dlg_synth_vocab **out, const dlg_synth_text *t, int vocab,
                        dlg_data_err *err)
{
    size_t cap = 16;
    while (cap < (size_t)vocab + (size_t)vocab / 2)
        cap *= 2;
    dlg_synth_vocab *v = calloc(1, sizeof *v);
    if (v) {
        v->slot = calloc(cap, sizeof *v->slot);
        v->seen = calloc((size_t)vocab, 1);
    }
    if (!v || !v->slot || !v->seen) {
        dlg_synth_vocab_free(v);
        return dlg_data_fail(err, DLG_ENOMEM, "text: out of memory for a %d-word index", vocab);
    }
    v->t = t;
    v->mask = cap - 1;
    for (int r = 0; r < vocab; r++) { /* the words are unique (synth_text.c) */
        const char *w = dlg_synth_text_word(t, r);
        size_t i = hash(w, strlen(w)) & v->mask;
        while (v->slot[i])
            i = (i + 1) & v->mask;
        v->slot[i] = (uint32_t)r + 1;
    }
    *out = v;
    return 0;
}

void dlg_synth_vocab_free(dlg_synth_vocab *v)
{
    if (!v)
        return;
    free(v->slot);
    free(v->seen);
    free(v);
}

int dlg_synth_vocab_rank(const dlg_synth_vocab *v, const char *w, size_t len)
{
    for (size_t i = hash(w, len) & v->mask; v->slot[i]; i = (i + 1) & v->mask) {
        int r = (int)v->slot[i] - 1;
        const char *s = dlg_synth_text_word(v->t, r);
        if (strncmp(s, w, len) == 0 && s[len] == '\0')
            return r;
    }
    return -1;
}

void dlg_synth_vocab_mark(dlg_synth_vocab *v, int r)
{
    if (!v->seen[r]) {
        v->seen[r] = 1;
        v->nseen++;
    }
}

bool dlg_synth_vocab_seen(const dlg_synth_vocab *v, int r) { return v->seen[r] != 0; }

uint64_t dlg_synth_vocab_count(const dlg_synth_vocab *v) { return v->nseen; }
