#include "tools_ranks.h"

#include "tools.h"

#include <stdlib.h>
#include <string.h>

int tools_ranks_init(tools_ranks *r, const dlg_host *h, const char *who, size_t slot_words, bool hist)
{
    memset(r, 0, sizeof *r);
    r->h = h;
    r->slot_words = slot_words;
    r->hist = hist;
    r->rank = tools_rank(h, &r->size); /* 0 and 1 alone */
    if (r->size < 2)
        return 0;
    size_t n = (size_t)r->size;
    r->nwords = (hist ? dlg_hist_sum_words(n) : 0) + slot_words * n;
    r->words = malloc(r->nwords * sizeof *r->words);
    if (!r->words)
        return h->error(h, DLG_ENOMEM, "%s: no memory for the %d ranks' counts (%zu bytes)", who, r->size,
                        r->nwords * sizeof *r->words);
    memset(r->words, 0, r->nwords * sizeof *r->words); /* first touch now, not in report */
    return 0;
}

uint64_t tools_ranks_seed(const tools_ranks *r, uint64_t seed)
{
    return seed + 0x9e3779b97f4a7c15ull * (uint64_t)r->rank;
}

uint64_t tools_ranks_share_start(const tools_ranks *r, uint64_t n)
{
    /* 128-bit: n x rank passes 2^64 for large files and many ranks */
    return (uint64_t)((unsigned __int128)n * (unsigned)r->rank / (unsigned)r->size);
}

int tools_ranks_gather(tools_ranks *r, const uint64_t *mine, dlg_histogram *lat, const uint64_t **all,
                       size_t *nranks)
{
    *all = mine;
    *nranks = 1;
    if (r->size < 2)
        return 0;
    size_t n = (size_t)r->size, hw = r->hist ? dlg_hist_sum_words(n) : 0;
    if (r->hist)
        dlg_hist_to_sum(lat, (size_t)r->rank, n, r->words); /* zeroes its words */
    /* each rank's counts in a slot of its own, zeros in the others: a sum
     * of bits and zeros is exact, and a CRC sum that wraps mod 2^64 or a
     * window that takes the largest survives it */
    int64_t *slots = r->words + hw;
    memset(slots, 0, r->slot_words * n * sizeof *slots);
    memcpy(slots + r->slot_words * (size_t)r->rank, mine, r->slot_words * sizeof *mine);
    int rc = r->h->comm_allreduce(r->h, r->words, r->words, r->nwords, DLG_COMM_I64);
    if (rc < 0)
        return rc;
    if (r->hist)
        dlg_hist_from_sum(lat, r->words, n);
    *all = (const uint64_t *)slots;
    *nranks = n;
    return 0;
}

void tools_ranks_free(tools_ranks *r)
{
    free(r->words);
    r->words = NULL;
}
