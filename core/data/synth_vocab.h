/* Which words of a text generator's vocabulary a corpus file used: a
 * string -> rank index over the generator's words with a flag per rank,
 * so that mkdata text --splits can keep valid and test within the words
 * train holds (PTB's valid/test vocabularies are subsets of train's). */
#ifndef DLG_SYNTH_VOCAB_H
#define DLG_SYNTH_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data_error.h"
#include "synth.h"

typedef struct dlg_synth_vocab dlg_synth_vocab;

/* An index over t's `vocab` words (t must outlive it), no word seen. */
int dlg_synth_vocab_new(dlg_synth_vocab **out, const dlg_synth_text *t, int vocab,
                        dlg_data_err *err);
void dlg_synth_vocab_free(dlg_synth_vocab *v);

/* The rank of the len bytes at w, or -1 when they are no word of t's. */
int dlg_synth_vocab_rank(const dlg_synth_vocab *v, const char *w, size_t len);

/* Marks rank r seen; whether it was, and how many distinct ranks are. */
void dlg_synth_vocab_mark(dlg_synth_vocab *v, int r);
bool dlg_synth_vocab_seen(const dlg_synth_vocab *v, int r);
uint64_t dlg_synth_vocab_count(const dlg_synth_vocab *v);

#endif
