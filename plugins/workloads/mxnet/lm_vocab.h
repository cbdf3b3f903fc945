/* A word table for the corpus: words (pointers into the text, which must
 * outlive the table) with counts and first-seen order, and the mapping to
 * ids under a vocabulary cap. */
#ifndef DLG_MXNET_LM_VOCAB_H
#define DLG_MXNET_LM_VOCAB_H

#include <stddef.h>
#include <dlgauge/plugin.h>
#include <stdint.h>

typedef struct lm_vocab {
    const char **word;
    uint32_t *len;
    int64_t *count;
    int64_t n, cap;
    int32_t *slot; /* open addressing: word index + 1, 0 = empty */
    int64_t nslot;
} lm_vocab;

/* Index of the word (added with count 0 if new), or -1 when out of memory. */
int32_t lm_vocab_intern(lm_vocab *v, const char *w, size_t len);
void lm_vocab_free(lm_vocab *v);

typedef struct lm_vocab_map {
    int32_t *id;       /* [v->n]: word index -> id */
    int vocab;         /* ids in use */
    int64_t unk_words; /* words mapped to <unk> by the cap */
    int64_t unk_tokens;
} lm_vocab_map;

/* Ids by descending count (ties: first seen first).  With more than cap
 * words, the cap - 1 most frequent words other than "<unk>" keep ids and
 * every other word maps to "<unk>" (added if the text has none).  Returns 0
 * or -DLG_ENOMEM. */
int lm_vocab_cap(lm_vocab *v, int cap, lm_vocab_map *m);

/* Under size ranks (at the first training step, on every rank alike):
 * whether they all number the same words alike; words (len bytes) is this
 * rank's vocabulary in id order, one word a line, name its data, slots
 * size entries for the gather (nn_ranks' hashes).  Each rank builds its
 * vocabulary from its own text, so shards of one corpus in files of their
 * own number words differently, and the summed gradients would mix
 * unrelated words.  0, else on every rank one error line naming the first
 * rank that differs from rank 0, both data and the first word that
 * differs, and -DLG_EINVAL.  Collectives: 1 allreduce, then only where
 * they differ 3 bcasts or more. */
int lm_vocab_agree(const dlg_host *h, int rank, int size, int64_t *slots, const char *words, size_t len,
                   const char *name);

#endif
