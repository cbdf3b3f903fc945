#include "io_ranks.h"

#include <stdlib.h>
#include <string.h>

/* A rank's tally in its own slot after the histogram's words: ios and
 * bytes would sum, but the window takes the largest and the CRC sum wraps
 * mod 2^64, which a signed MPI sum need not do. */
#define TALLY_WORDS 4u

int io_ranks_init(io_ranks *r, const dlg_host *h)
{
    memset(r, 0, sizeof *r);
    r->h = h;
    r->size = 1;
    if (!DLG_HOST_HAS(h, comm_info))
        return 0;
    dlg_rank_info ri = {.struct_size = sizeof ri};
    h->comm_info(h, &ri);
    if (ri.size < 2)
        return 0;
    r->rank = ri.rank;
    r->size = ri.size;
    r->nwords = dlg_hist_sum_words((size_t)ri.size) + TALLY_WORDS * (size_t)ri.size;
    r->words = malloc(r->nwords * sizeof *r->words);
    if (!r->words)
        return h->error(h, DLG_ENOMEM, "io: no memory for the %d ranks' latency merge (%zu bytes)", ri.size,
                        r->nwords * sizeof *r->words);
    memset(r->words, 0, r->nwords * sizeof *r->words); /* first touch now, not in report */
    return 0;
}

uint64_t io_ranks_seed(const io_ranks *r, uint64_t seed)
{
    return seed + 0x9e3779b97f4a7c15ull * (uint64_t)r->rank;
}

uint64_t io_ranks_first_block(const io_ranks *r, uint64_t nblocks)
{
    /* 128-bit: nblocks x rank passes 2^64 for large files and many ranks */
    return (uint64_t)((unsigned __int128)nblocks * (unsigned)r->rank / (unsigned)r->size);
}

static void put_tally(int64_t *slot, const io_tally *t)
{
    uint64_t v[TALLY_WORDS] = {t->ios, t->bytes, t->crc_sum, t->window_ns};
    memcpy(slot, v, sizeof v);
}

int io_ranks_merge(io_ranks *r, const io_tally *mine, io_tally *job, dlg_histogram *lat)
{
    *job = *mine;
    if (r->size < 2)
        return 0;
    size_t n = (size_t)r->size, hw = dlg_hist_sum_words(n);
    dlg_hist_to_sum(lat, (size_t)r->rank, n, r->words); /* zeroes its words */
    memset(r->words + hw, 0, TALLY_WORDS * n * sizeof *r->words);
    put_tally(r->words + hw + TALLY_WORDS * (size_t)r->rank, mine);
    int rc = r->h->comm_allreduce(r->h, r->words, r->words, r->nwords, DLG_COMM_I64);
    if (rc < 0)
        return rc;
    dlg_hist_from_sum(lat, r->words, n);
    memset(job, 0, sizeof *job);
    for (size_t k = 0; k < n; k++) {
        uint64_t v[TALLY_WORDS];
        memcpy(v, r->words + hw + TALLY_WORDS * k, sizeof v);
        job->ios += v[0];
        job->bytes += v[1];
        job->crc_sum += v[2];
        if (v[3] > job->window_ns)
            job->window_ns = v[3];
    }
    return 0;
}

void io_ranks_free(io_ranks *r)
{
    free(r->words);
    r->words = NULL;
}
