/* Fuzzes the language model's corpus reader (plugins/workloads/mxnet:
 * lm_corpus.c, lm_vocab.c), `data = text:PATH`.  The input is a vocab cap
 * (its first byte + 1), then ptb.train.txt, then, after a NUL byte (if
 * any), ptb.valid.txt, which the reader finds beside it.  What it accepts
 * has a token per word and per line end of both files, every id under the
 * capped vocabulary; anything else is one error through the host. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "fuzz_host.h"
#include "fuzz_target.h"
#include "lm_corpus.h"

static int is_blank(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Words (runs of non-blanks within a line) plus one <eos> per line. */
static int64_t count_tokens(const uint8_t *t, size_t n)
{
    int64_t k = fuzz_count_lines(t, n);
    for (size_t i = 0; i < n; i++)
        k += t[i] != '\n' && !is_blank(t[i]) && (i == 0 || t[i - 1] == '\n' || is_blank(t[i - 1]));
    return k;
}

static void check_ids(const int32_t *ids, int64_t n, int vocab)
{
    for (int64_t i = 0; i < n; i++)
        FUZZ_CHECK(ids[i] >= 0 && ids[i] < vocab);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    int cap = 1 + data[0];
    const uint8_t *train = data + 1, *nul = memchr(train, '\0', size - 1);
    size_t ntrain = nul ? (size_t)(nul - train) : size - 1;
    char tpath[512], vpath[512] = "", spec[600];
    if (fuzz_write_file(tpath, sizeof tpath, "ptb.train.txt", train, ntrain) != 0)
        return 0;
    if (nul && fuzz_write_file(vpath, sizeof vpath, "ptb.valid.txt", nul + 1,
                               size - 1 - ntrain - 1) != 0) {
        fuzz_remove_file(tpath);
        return 0;
    }
    snprintf(spec, sizeof spec, "text:%s", tpath);
    fuzz_host fh;
    fuzz_host_init(&fh);
    fuzz_host_files(&fh);
    lm_corpus c;
    if (lm_corpus_load(&c, &fh.host, spec, cap, 1) != 0) {
        FUZZ_CHECK(fh.errors >= 1 && (strncmp(fh.msg, "data = text:", 12) == 0 || cap < 2));
        FUZZ_CHECK(!c.train && !c.valid);
    } else {
        FUZZ_CHECK(fh.errors == 0 && c.vocab >= 1 && c.vocab <= cap && c.vocab <= c.distinct + 1);
        int64_t want = count_tokens(train, ntrain) + (nul ? count_tokens(nul + 1, size - 2 - ntrain) : 0);
        FUZZ_CHECK(c.ntrain + c.nvalid == want && c.ntrain > 0 && c.nvalid >= 0);
        FUZZ_CHECK(c.distinct > cap ? c.vocab == cap && c.unk_words > 0
                                    : c.vocab == c.distinct && c.unk_words == 0);
        check_ids(c.train, c.ntrain, c.vocab);
        check_ids(c.valid, c.nvalid, c.vocab);
        FUZZ_CHECK(c.unigram_ppl >= 1 - 1e-9 && c.unigram_ppl <= c.vocab * (1 + 1e-9));
        lm_corpus_free(&c);
    }
    fuzz_remove_file(tpath);
    if (vpath[0])
        fuzz_remove_file(vpath);
    return 0;
}
