/* The language model's corpus: PTB-format text (one sentence per line,
 * words separated by blanks, "<eos>" appended at each line end as the
 * reference examples do) read through the job's storage, a vocabulary with
 * a size cap (rarer words map to "<unk>"), and token ids per split. */
#ifndef DLG_MXNET_LM_CORPUS_H
#define DLG_MXNET_LM_CORPUS_H

#include <stdbool.h>
#include <stdint.h>

#include <dlgauge/plugin.h>

typedef struct lm_corpus {
    int32_t *train, *valid; /* token ids */
    int64_t ntrain, nvalid;
    int vocab;              /* ids in use: 0..vocab-1 (0 = most frequent) */
    int64_t distinct;       /* distinct words before the cap (with <eos>) */
    int64_t unk_words;      /* distinct words the cap mapped to <unk> */
    int64_t unk_tokens;     /* their tokens in both splits */
    double unigram_ppl;     /* perplexity of the training split's unigram model */
    char train_name[512], valid_name[512]; /* where each split came from */
    char *words;            /* the vocabulary in id order, each word and '\n' */
    size_t words_len;       /* its bytes (ranks compare it: lm_vocab_agree) */
} lm_corpus;

/* data:
 *   text:PATH        PATH is the training text; the held-out split is the
 *                    file with "train" replaced by "valid" in its name
 *                    (ptb.train.txt -> ptb.valid.txt, as dlgauge mkdata
 *                    text --splits writes them) if that exists, else the
 *                    last 10% of PATH's lines.
 *   synthetic[:N]    N words (default 929589, PTB's training size) of
 *                    dlgauge mkdata's Zipf text, generated in memory,
 *                    and a 10% held-out split.
 * The vocabulary is built over both splits (as PyTorch's example builds it
 * over all its files), then capped at vocab_cap ids by frequency.  Errors
 * (no words, unreadable file, bad spec) go through h->error(). */
int lm_corpus_load(lm_corpus *c, const dlg_host *h, const char *data, int vocab_cap,
                   uint64_t seed);
/* The spec's form and vocab_cap alone, as lm_corpus_load judges them
 * first (no file is read): for the workload's check. */
int lm_corpus_check(const dlg_host *h, const char *data, int vocab_cap);
void lm_corpus_free(lm_corpus *c);

#endif
