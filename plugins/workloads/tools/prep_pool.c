#define _GNU_SOURCE
#include "prep_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/sigstack.h>

enum { SLOT_FREE, SLOT_BUSY, SLOT_READY };
#define SLOTS_PER_THREAD 4
#define BUF_ALIGN 4096

typedef struct worker {
    prep_pool *pool;
    prep_worker *w;
    pthread_t tid;
    bool started;
    uint8_t *in;   /* file bytes, aligned for O_DIRECT backends */
    size_t in_cap;
    _Atomic uint64_t read_ns, work_ns; /* time in file reads; in decode/resize/encode */
} worker;

struct prep_pool {
    const dlg_host *h;
    const prep_input *in;
    prep_slot *slots;
    size_t nslots;
    worker *workers;
    int nworkers;
    uint64_t next_claim, next_take;
    /* mean: passes whose sums were taken.  A worker sums into its buffer
     * for the pass's parity, so it may not start pass summed + 2. */
    uint64_t summed;
    bool mean;
    bool stop;
    pthread_mutex_t mu;
    pthread_cond_t freed, ready;
};

/* Aligned buffer of at least n bytes (contents not kept). */
static int ensure(uint8_t **buf, size_t *cap, size_t n)
{
    if (n <= *cap && *buf)
        return 0;
    size_t want = n < 65536 ? 65536 : n + n / 4;
    void *p = NULL;
    if (posix_memalign(&p, BUF_ALIGN, want) != 0)
        return -1;
    free(*buf);
    *buf = p;
    *cap = want;
    return 0;
}

/* Reads the whole file into wk->in; returns its size or -code.  Host
 * errors (open, read) are already reported; others go to err. */
static int64_t read_file(worker *wk, const prep_item *it, dlg_data_err *err)
{
    const dlg_host *h = wk->pool->h;
    dlg_file *f = NULL;
    int rc = h->file_open(h, NULL, it->path, &f);
    if (rc < 0)
        return rc;
    uint64_t size = 0;
    uint32_t align = 1;
    h->file_caps(h, f, &align);
    int64_t r = h->file_size(h, f, &size);
    if (r == 0) {
        size_t a = align > 1 ? align : 1;
        size_t want = (size_t)((size + a - 1) / a * a);
        if (ensure(&wk->in, &wk->in_cap, want ? want : a) != 0)
            r = dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory for %llu bytes", it->path,
                              (unsigned long long)size);
        else
            r = h->file_read(h, f, wk->in, want, 0);
        if (r >= 0 && (uint64_t)r != size)
            r = dlg_data_fail(err, DLG_EIO, "%s: read %lld of %llu bytes (file changed?)", it->path,
                              (long long)r, (unsigned long long)size);
    }
    h->file_close(h, f);
    return r;
}

static void process(worker *wk, prep_slot *s)
{
    const prep_item *it = &wk->pool->in->items[s->seq % wk->pool->in->n];
    dlg_data_err_clear(&s->err);
    s->file_bytes = 0;
    s->jpeg_warning[0] = '\0';
    uint64_t t0 = tools_now_ns();
    int64_t n = read_file(wk, it, &s->err);
    uint64_t t1 = tools_now_ns();
    atomic_fetch_add_explicit(&wk->read_ns, t1 - t0, memory_order_relaxed);
    if (n < 0) {
        s->rc = (int)n;
        return;
    }
    s->file_bytes = (uint64_t)n;
    const uint8_t *out = NULL;
    size_t len = 0;
    s->rc = prep_worker_run(wk->w, it, wk->in, (size_t)n, &out, &len, &s->err);
    atomic_fetch_add_explicit(&wk->work_ns, tools_now_ns() - t1, memory_order_relaxed);
    if (s->rc < 0)
        return;
    const char *warned = prep_worker_warning(wk->w);
    if (warned)
        snprintf(s->jpeg_warning, sizeof s->jpeg_warning, "%s", warned);
    if (out == wk->in) { /* pass-through: hand the buffer over, take the slot's */
        uint8_t *b = s->buf_;
        size_t c = s->cap_;
        s->buf_ = wk->in;
        s->cap_ = wk->in_cap;
        wk->in = b;
        wk->in_cap = c;
    } else if (ensure(&s->buf_, &s->cap_, len) != 0) {
        s->rc = dlg_data_fail(&s->err, DLG_ENOMEM, "%s: out of memory", it->path);
        return;
    } else {
        memcpy(s->buf_, out, len);
    }
    s->data = s->buf_;
    s->len = len;
    if (wk->pool->mean) /* only what will be stored: after every step that can fail */
        s->rc = prep_worker_sum_last(wk->w, (unsigned)((s->seq / wk->pool->in->n) & 1), &s->err);
}

static void work(worker *wk)
{
    prep_pool *p = wk->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && (p->next_claim - p->next_take >= p->nslots ||
                            (p->mean && p->next_claim / p->in->n >= p->summed + 2)))
            pthread_cond_wait(&p->freed, &p->mu);
        if (p->stop)
            break;
        uint64_t seq = p->next_claim++;
        prep_slot *s = &p->slots[seq % p->nslots];
        s->seq = seq;
        s->state_ = SLOT_BUSY;
        pthread_mutex_unlock(&p->mu);
        process(wk, s);
        pthread_mutex_lock(&p->mu);
        s->state_ = SLOT_READY;
        pthread_cond_broadcast(&p->ready);
    }
    pthread_mutex_unlock(&p->mu);
}

/* A stack of its own for signals: a decoder that overflows this thread's
 * stack in-process still gets the crash guard's line (sigstack.h). */
static void *worker_main(void *wk)
{
    void *ss = dlg_sigstack_on();
    work(wk);
    dlg_sigstack_off(ss);
    return NULL;
}

int prep_pool_start(prep_pool **out, const dlg_host *h, const prep_input *in, const prep_params *par,
                    int threads, dlg_data_err *err)
{
    *out = NULL;
    prep_pool *p = calloc(1, sizeof *p);
    if (!p)
        return dlg_data_fail(err, DLG_ENOMEM, "out of memory");
    p->h = h;
    p->in = in;
    p->mean = par->mean;
    p->nworkers = threads;
    p->nslots = (size_t)threads * SLOTS_PER_THREAD;
    p->slots = calloc(p->nslots, sizeof *p->slots);
    p->workers = calloc((size_t)threads, sizeof *p->workers);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->freed, NULL);
    pthread_cond_init(&p->ready, NULL);
    *out = p;
    if (!p->slots || !p->workers)
        return dlg_data_fail(err, DLG_ENOMEM, "out of memory");
    for (int i = 0; i < threads; i++) {
        worker *wk = &p->workers[i];
        wk->pool = p;
        int rc = prep_worker_new(&wk->w, par, err);
        if (rc < 0)
            return rc;
    }
    for (int i = 0; i < threads; i++) {
        worker *wk = &p->workers[i];
        if (pthread_create(&wk->tid, NULL, worker_main, wk) != 0)
            return dlg_data_fail(err, DLG_ENOMEM, "cannot start thread %d", i + 1);
        wk->started = true;
    }
    return 0;
}

prep_slot *prep_pool_next(prep_pool *p, uint64_t *wait_ns)
{
    prep_slot *s = &p->slots[p->next_take % p->nslots];
    pthread_mutex_lock(&p->mu);
    uint64_t t0 = 0;
    if (s->state_ != SLOT_READY || s->seq != p->next_take) {
        t0 = tools_now_ns();
        while (s->state_ != SLOT_READY || s->seq != p->next_take)
            pthread_cond_wait(&p->ready, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    *wait_ns = t0 ? tools_now_ns() - t0 : 0;
    return s;
}

void prep_pool_release(prep_pool *p, prep_slot *s)
{
    pthread_mutex_lock(&p->mu);
    s->state_ = SLOT_FREE;
    p->next_take++;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->mu);
}

void prep_pool_take_sum(prep_pool *p, uint64_t *dst)
{
    /* Every item of pass `summed` was taken (READY under the mutex, so its
     * sum is visible) and no worker may touch this parity before summed
     * moves on: no lock needed for the buffers. */
    for (int i = 0; i < p->nworkers; i++)
        prep_worker_take_sum(p->workers[i].w, (unsigned)(p->summed & 1), dst);
    pthread_mutex_lock(&p->mu);
    p->summed++;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->mu);
}

void prep_pool_times(prep_pool *p, uint64_t *read_ns, uint64_t *work_ns)
{
    *read_ns = *work_ns = 0;
    for (int i = 0; p && i < p->nworkers; i++) {
        *read_ns += atomic_load_explicit(&p->workers[i].read_ns, memory_order_relaxed);
        *work_ns += atomic_load_explicit(&p->workers[i].work_ns, memory_order_relaxed);
    }
}

void prep_pool_stop(prep_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; p->workers && i < p->nworkers; i++) {
        worker *wk = &p->workers[i];
        if (wk->started)
            pthread_join(wk->tid, NULL);
        prep_worker_free(wk->w);
        free(wk->in);
    }
    for (size_t i = 0; p->slots && i < p->nslots; i++)
        free(p->slots[i].buf_);
    free(p->slots);
    free(p->workers);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->freed);
    pthread_cond_destroy(&p->ready);
    free(p);
}
