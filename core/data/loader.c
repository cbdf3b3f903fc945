/* The loader: a ring of K batch slots filled by N workers.
 *
 * Workers claim stream items with one atomic counter; item s belongs to
 * batch s / B, which lives in slot (s / B) % K.  A worker whose slot still
 * holds an older batch waits until the consumer releases it.  The last
 * worker to finish a batch marks it ready.  So the ring is the only
 * backpressure, nothing is allocated per batch, and which thread did what
 * never changes the contents. */
#include "loader.h"
#include "loader_image.h"
#include "loader_src.h"
#include "loader_work.h"

#include "../runtime/thread_sigstack.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define SYNTH_DEFAULT_N 1281167ULL /* ImageNet-1k training images */

typedef struct slot {
    dlg_batch b;
    _Atomic uint64_t seq; /* the batch this slot is (to be) filled with */
    atomic_int remaining;
    bool ready;           /* under mu */
    bool held;            /* handed to the consumer, not yet released (consumer side) */
    _Atomic uint64_t read_ns, decode_ns, bytes, skipped, warned;
    uint8_t **raw;        /* decode == false: per-item record bytes */
    size_t *raw_len, *raw_cap;
} slot;

typedef struct worker {
    struct dlg_loader *l;
    pthread_t tid;
    bool started;
    void *src_ctx;
    dlg_ld_scratch sc;
} worker;

struct dlg_loader {
    dlg_loader_config cfg;
    char *data;
    const dlg_host *h;
    dlg_ld_src *src; /* NULL for synthetic */
    dlg_mean_image mean; /* cfg.mean_file's */
    uint64_t n;      /* records per epoch */
    size_t batch_bytes;
    slot *slots;
    int nslots;
    _Atomic uint64_t next_item;
    pthread_mutex_t mu;
    pthread_cond_t cv_free, cv_ready;
    bool quit;
    int fail_code;  /* error of the earliest failed stream item (under mu) */
    uint64_t fail_item;
    char fail_msg[512];
    worker *workers;
    int nworkers;
    uint64_t next_seq; /* consumer side */
    int held;
    dlg_loader_stats st;
    dlg_cache_result cache; /* st.cache_method points into it */
    atomic_bool warned_skip; /* workers race to log the first skip once */
    atomic_bool warned_jpeg; /* and the first JPEG kept despite a warning, */
    char first_warning[320]; /* whose message the winner keeps for close */
};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The run's stream item of this part's item s: the parts share one
 * stream, part p taking items p, p + parts, ... (loader.h). */
static uint64_t run_item(const dlg_loader_config *c, uint64_t s)
{
    return c->parts > 1 ? s * (uint64_t)c->parts + (uint64_t)c->part : s;
}

/* Keeps the failure of the earliest stream item: the consumer reports it
 * when it reaches that item's batch, after every batch before it. */
static void fail(dlg_loader *l, uint64_t s, const dlg_data_err *err)
{
    pthread_mutex_lock(&l->mu);
    if (!l->fail_code || s < l->fail_item) {
        l->fail_code = err->code ? err->code : DLG_EINTERNAL;
        l->fail_item = s;
        snprintf(l->fail_msg, sizeof l->fail_msg, "%s", err->msg);
    }
    pthread_cond_broadcast(&l->cv_ready);
    pthread_mutex_unlock(&l->mu);
}

static int keep_raw(slot *sl, int i, const dlg_ld_item *it, dlg_data_err *err)
{
    const uint8_t *p = it->pixels ? it->pixels : it->fpixels ? (const void *)it->fpixels : it->bytes;
    if (it->len > sl->raw_cap[i]) {
        size_t cap = sl->raw_cap[i] ? sl->raw_cap[i] : 64 * 1024;
        while (cap < it->len)
            cap *= 2;
        uint8_t *q = malloc(cap);
        if (!q)
            return dlg_data_fail(err, DLG_ENOMEM, "loader: out of memory");
        free(sl->raw[i]);
        sl->raw[i] = q;
        sl->raw_cap[i] = cap;
    }
    if (it->len > 0) /* an empty file has no buffer behind it */
        memcpy(sl->raw[i], p, it->len);
    sl->raw_len[i] = it->len;
    return 0;
}

/* skip_corrupt found nothing readable: the message keeps the last record's
 * reason (copied first: err->msg is both the source and the destination). */
static int give_up(dlg_data_err *err, int tried)
{
    char last[sizeof err->msg];
    snprintf(last, sizeof last, "%s", err->msg);
    return dlg_data_fail(err, DLG_ECORRUPT, "skip_corrupt: %d record%s in a row could not be "
                         "read; last: %s", tried, tried == 1 ? "" : "s", last);
}

/* An image kept despite a libjpeg warning: counted, the first one logged
 * (jpeg.h says which warnings keep an image). */
static void count_warning(dlg_loader *l, slot *sl, const char *msg)
{
    atomic_fetch_add(&sl->warned, 1);
    if (atomic_exchange(&l->warned_jpeg, true))
        return;
    snprintf(l->first_warning, sizeof l->first_warning, "%s", msg);
    l->h->log(l->h, DLG_LOG_WARN, "%s (a libjpeg warning that is no loss of image data: the image "
              "is kept; the count comes at the end)", msg);
}

/* Reads and processes stream item s into its slot; a corrupt record is
 * replaced by the next readable one in dataset order when skipping. */
static int fill_item(dlg_loader *l, worker *w, slot *sl, uint64_t s, dlg_data_err *err)
{
    const dlg_loader_config *cfg = &l->cfg;
    uint64_t g = run_item(cfg, s), epoch = g / l->n, pos = g % l->n;
    uint64_t rec = dlg_ld_permute(pos, l->n, cfg->seed, epoch, cfg->shuffle);
    int i = (int)(s % (uint64_t)cfg->batch);
    dlg_ld_item it;
    for (int tries = 0;; tries++) {
        uint64_t warned0 = w->sc.jpeg ? dlg_jpeg_warnings(w->sc.jpeg) : 0;
        uint64_t t0 = now_ns();
        int rc = l->src->ops->read(l->src, w->src_ctx, rec, &it, err);
        uint64_t t1 = now_ns();
        atomic_fetch_add(&sl->read_ns, t1 - t0);
        if (rc == 0) {
            atomic_fetch_add(&sl->bytes, it.bytes_read);
            rc = cfg->decode ? dlg_ld_process(cfg, cfg->mean_file ? &l->mean : NULL, &w->sc, &it,
                                            epoch, pos, sl->b.data, i, err)
                             : keep_raw(sl, i, &it, err);
            atomic_fetch_add(&sl->decode_ns, now_ns() - t1);
        }
        if (rc == 0 && cfg->classes > 0 && (it.label < 0 || it.label >= cfg->classes))
            /* here the record is known: a batch position leads nowhere once shuffled */
            rc = dlg_data_fail(err, DLG_EINVAL, "%s: label %d is outside 0..%d (classes = %d)", it.what,
                               (int)it.label, cfg->classes - 1, cfg->classes);
        if (rc == 0) {
            sl->b.labels[i] = it.label;
            if (w->sc.jpeg && dlg_jpeg_warnings(w->sc.jpeg) != warned0)
                count_warning(l, sl, dlg_jpeg_last_warning(w->sc.jpeg));
            return 0;
        }
        if (!cfg->skip_corrupt || !dlg_ld_skippable(-rc))
            return rc;
        if (tries + 1 >= DLG_LD_SKIP_TRIES || (uint64_t)tries + 1 >= l->n)
            return give_up(err, tries + 1);
        atomic_fetch_add(&sl->skipped, 1);
        if (!atomic_exchange(&l->warned_skip, true))
            l->h->log(l->h, DLG_LOG_WARN, "skipping corrupt record (skip_corrupt): %s", err->msg);
        rec = (rec + 1) % l->n;
    }
}

static void worker_loop(worker *w)
{
    dlg_loader *l = w->l;
    const uint64_t B = (uint64_t)l->cfg.batch;
    dlg_data_err err = {0};
    for (;;) {
        uint64_t s = atomic_fetch_add(&l->next_item, 1);
        uint64_t seq = s / B;
        slot *sl = &l->slots[seq % (uint64_t)l->nslots];
        if (atomic_load(&sl->seq) != seq) {
            pthread_mutex_lock(&l->mu);
            while (atomic_load(&sl->seq) != seq && !l->quit)
                pthread_cond_wait(&l->cv_free, &l->mu);
            pthread_mutex_unlock(&l->mu);
        }
        if (__atomic_load_n(&l->quit, __ATOMIC_ACQUIRE))
            break;
        if (fill_item(l, w, sl, s, &err) < 0) {
            fail(l, s, &err);
            break;
        }
        if (atomic_fetch_sub(&sl->remaining, 1) == 1) {
            pthread_mutex_lock(&l->mu);
            sl->ready = true;
            pthread_cond_broadcast(&l->cv_ready);
            pthread_mutex_unlock(&l->mu);
        }
    }
}

static void *worker_main(void *arg)
{
    void *sigstack = dlg_sigstack_on(); /* a deep decode's overflow still gets the crash line */
    worker_loop(arg);
    dlg_sigstack_off(sigstack);
    return NULL;
}

static void *batch_alloc(const dlg_loader_config *cfg, size_t bytes)
{
    void *p;
    if (cfg->alloc)
        p = cfg->alloc->alloc(cfg->alloc->ctx, bytes);
    else
        p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p)
        memset(p, 0, bytes); /* first touch here, not in the timed loop */
    return p;
}

static int validate(const dlg_loader_config *c, const dlg_host *h)
{
    if (c->parts < 0 || c->part < 0 || (c->part > 0 && c->part >= c->parts))
        return h->error(h, DLG_EINVAL, "loader: part %d of %d parts (0 <= part < parts)", c->part,
                        c->parts);
    if (!c->data || !c->data[0])
        return h->error(h, DLG_EINVAL, "data: no dataset given (recordio:PATH, lmdb:PATH, "
                                       "files:LIST_OR_DIR or synthetic)");
    if (c->batch < 1 || (c->crop < 8 && c->crop != 0) || c->crop > 4096 || c->threads < 1 ||
        c->threads > 1024 || c->prefetch < 2 || c->prefetch > 64)
        return h->error(h, DLG_EINVAL,
                        "loader: batch %d, crop %d, threads %d, prefetch %d out of range "
                        "(batch >= 1, crop 8..4096 or 0, threads 1..1024, prefetch 2..64)",
                        c->batch, c->crop, c->threads, c->prefetch);
    if ((c->pixel_range != 1 && c->pixel_range != 255) || (c->order != DLG_RGB && c->order != DLG_BGR) ||
        c->transform < DLG_TRANSFORM_AUTO || c->transform > DLG_TRANSFORM_MXNET)
        return h->error(h, DLG_EINVAL, "loader: pixel_range %d, channel_order %d, transform %d out "
                                       "of range (1 or 255; rgb or bgr; auto, torchvision, caffe "
                                       "or mxnet)",
                        c->pixel_range, (int)c->order, (int)c->transform);
    int r = c->resize > 0 ? c->resize : c->crop * 256 / 224;
    /* mxnet: resize is MXNet's, and pad may make up the difference */
    if (!c->train && r < c->crop && c->transform != DLG_TRANSFORM_MXNET)
        return h->error(h, DLG_EINVAL, "resize %d is smaller than crop %d", r, c->crop);
    return dlg_ld_geom_check(c, h);
}

/* synthetic[:N]: noise images in every slot once; batches cost nothing. */
static int open_synthetic(dlg_loader *l, const char *arg)
{
    l->n = SYNTH_DEFAULT_N;
    if (arg) {
        char *end;
        unsigned long long n = strtoull(arg, &end, 10);
        if (end == arg || *end || n == 0)
            return l->h->error(l->h, DLG_EINVAL,
                               "data = synthetic:%s: expected a positive image count", arg);
        l->n = n;
    }
    size_t per = l->batch_bytes / (size_t)l->cfg.batch;
    size_t elems = per / (l->cfg.dtype == DLG_LOADER_FP16 ? 2 : 4);
    uint64_t seed = l->cfg.seed + (uint64_t)l->cfg.part; /* each part its own noise */
    for (int k = 0; k < l->nslots; k++)
        for (int i = 0; i < l->cfg.batch; i++)
            for (size_t e = 0; e < elems; e++) {
                float v = (float)(dlg_ld_uniform(dlg_ld_hash(seed, (uint64_t)k,
                                                             (uint64_t)i, 0x73796eULL),
                                                 (uint32_t)e) * 4.0 - 2.0);
                if (l->cfg.dtype == DLG_LOADER_FP16)
                    ((uint16_t *)l->slots[k].b.data)[(size_t)i * elems + e] = dlg_fp16(v);
                else
                    ((float *)l->slots[k].b.data)[(size_t)i * elems + e] = v;
            }
    l->st.source = "synthetic";
    l->st.cache_method = "n/a (synthetic)";
    return 0;
}

/* Opens the dataset (not synthetic); with crop = 0 its first record's
 * size becomes the crop, and so the batch's size. */
static int open_source(dlg_loader *l)
{
    dlg_data_err err = {0};
    int rc = dlg_ld_src_open(&l->src, l->data, l->h, &err);
    if (rc == 0 && l->cfg.crop == 0 &&
        (rc = dlg_ld_whole_size(l->src, l->cfg.skip_corrupt, &l->cfg.crop, &err)) == 0) {
        l->cfg.whole = true;
        l->batch_bytes = dlg_loader_batch_bytes(&l->cfg);
    }
    if (rc < 0)
        return l->h->error(l->h, -rc, "%s", err.msg);
    l->n = l->src->n;
    l->st.source = l->src->ops->name;
    l->st.dataset_bytes = l->src->bytes;
    l->st.nclasses = l->src->nclasses;
    return 0;
}

/* The storage's caps and alignment for the dataset's first file (0 and 1
 * when it has none or will not open it: the workers will say why). */
static uint32_t first_file_caps(dlg_loader *l, uint32_t *align)
{
    char path[4096];
    dlg_file *f = NULL;
    const dlg_host *h = l->h;
    *align = 1;
    if (!l->src->nfiles || h->file_open(h, NULL, l->src->ops->file_path(l->src, 0, path, sizeof path), &f) < 0)
        return 0;
    uint32_t caps = h->file_caps(h, f, align);
    h->file_close(h, f);
    return caps;
}

/* The cache mode, last before the workers start: pages pre-read (warm)
 * are not pushed out again by the batch buffers' allocation. */
static int cache_source(dlg_loader *l)
{
    char warn[512];
    if (l->cfg.cache == DLG_CACHE_WARM) {
        uint32_t align, caps = first_file_caps(l, &align);
        if (dlg_cache_passed_by(l->cfg.cache, caps, align, l->data, &l->cache, warn, sizeof warn)) {
            l->st.cache_method = l->cache.method;
            l->h->log(l->h, DLG_LOG_WARN, "%s", warn);
            return 0;
        }
    }
    dlg_data_err err = {0};
    dlg_stop_ask ask = {dlg_host_stop_asked, (void *)l->h};
    int rc = dlg_ld_cache(l->src, l->cfg.cache, &ask, &l->cache, &err);
    if (rc == -DLG_ESTOP) /* bare: the runner writes the cell as stopped */
        return rc;
    if (rc < 0)
        return l->h->error(l->h, -rc, "%s", err.msg);
    l->st.cache_method = l->cache.method;
    if (dlg_cache_warning(&l->cache, l->data, warn, sizeof warn))
        l->h->log(l->h, DLG_LOG_WARN, "%s", warn);
    return 0;
}

/* Caffe's mean image replaces the per-channel mean (loader.h). */
static int open_mean(dlg_loader *l)
{
    dlg_data_err err = {0};
    int rc = dlg_ld_mean_load(&l->mean, &l->cfg, &err);
    if (rc < 0)
        return l->h->error(l->h, -rc, "%s", err.msg);
    l->cfg.mean_file = l->mean.path;
    memset(l->cfg.mean, 0, sizeof l->cfg.mean);
    return 0;
}

static int alloc_slots(dlg_loader *l)
{
    const dlg_loader_config *c = &l->cfg;
    l->slots = calloc((size_t)c->prefetch, sizeof *l->slots);
    if (!l->slots)
        return -DLG_ENOMEM;
    l->nslots = c->prefetch;
    for (int k = 0; k < l->nslots; k++) {
        slot *sl = &l->slots[k];
        atomic_init(&sl->seq, (uint64_t)k);
        atomic_init(&sl->remaining, c->batch);
        sl->b.n = c->batch;
        sl->b.labels = calloc((size_t)c->batch, sizeof *sl->b.labels);
        if (!sl->b.labels)
            return -DLG_ENOMEM;
        if (c->decode) {
            if (!(sl->b.data = batch_alloc(c, l->batch_bytes)))
                return -DLG_ENOMEM;
        } else {
            sl->raw = calloc((size_t)c->batch, sizeof *sl->raw);
            sl->raw_len = calloc((size_t)c->batch, sizeof *sl->raw_len);
            sl->raw_cap = calloc((size_t)c->batch, sizeof *sl->raw_cap);
            if (!sl->raw || !sl->raw_len || !sl->raw_cap)
                return -DLG_ENOMEM;
            sl->b.raw = (const uint8_t *const *)sl->raw;
            sl->b.raw_len = sl->raw_len;
        }
    }
    return 0;
}

/* Why worker t could not start: pthread_create's EAGAIN is mostly a limit
 * on processes (threads count against ulimit -u and pids.max). */
static int thread_failed(const dlg_loader *l, int t, int e)
{
    char why[160] = "";
    struct rlimit rl;
    if (e == EAGAIN && getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(why, sizeof why, " (a limit on processes: ulimit -u is %llu, or the cgroup's "
                 "pids.max; lower threads (now %d) or raise the limit)",
                 (unsigned long long)rl.rlim_cur, l->nworkers);
    else if (e == EAGAIN)
        snprintf(why, sizeof why, " (ulimit -u is unlimited: the cgroup's pids.max or "
                 "kernel.threads-max; lower threads (now %d) or raise the limit)", l->nworkers);
    return l->h->error(l->h, DLG_ENOMEM, "loader: cannot start worker thread %d of %d: %s%s",
                       t + 1, l->nworkers, strerror(e), why);
}

static int start_workers(dlg_loader *l)
{
    l->workers = calloc((size_t)l->cfg.threads, sizeof *l->workers);
    if (!l->workers)
        return l->h->error(l->h, DLG_ENOMEM, "loader: out of memory");
    l->nworkers = l->cfg.threads;
    dlg_data_err err = {0};
    for (int t = 0; t < l->nworkers; t++) {
        worker *w = &l->workers[t];
        w->l = l;
        int rc = l->src->ops->worker_open(l->src, &w->src_ctx, &err);
        if (rc == 0 && l->cfg.decode)
            rc = dlg_ld_scratch_init(&w->sc, l->cfg.crop, &err);
        if (rc < 0)
            return l->h->error(l->h, -rc, "%s", err.msg);
    }
    for (int t = 0; t < l->nworkers; t++) {
        int e = pthread_create(&l->workers[t].tid, NULL, worker_main, &l->workers[t]);
        if (e != 0)
            return thread_failed(l, t, e);
        l->workers[t].started = true;
    }
    return 0;
}

int dlg_loader_open(dlg_loader **out, const dlg_loader_config *cfg, const dlg_host *h)
{
    *out = NULL;
    int rc = validate(cfg, h);
    if (rc < 0)
        return rc;
    dlg_loader *l = calloc(1, sizeof *l);
    if (!l || !(l->data = strdup(cfg->data))) {
        free(l);
        return h->error(h, DLG_ENOMEM, "loader: out of memory");
    }
    l->cfg = *cfg;
    l->cfg.data = l->data;
    l->h = h;
    l->batch_bytes = dlg_loader_batch_bytes(cfg);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv_free, NULL);
    pthread_cond_init(&l->cv_ready, NULL);
    l->st.cache_method = "none";
    bool synth = !strncmp(cfg->data, "synthetic", 9) &&
                 (cfg->data[9] == '\0' || cfg->data[9] == ':');
    const char *colon = strchr(cfg->data, ':');
    if (synth && !cfg->decode)
        rc = h->error(h, DLG_EINVAL, "data = synthetic has no records to read with decode = false");
    else if (cfg->crop == 0) /* the batch size comes from the first record */
        rc = open_source(l);
    if (rc == 0 && alloc_slots(l) < 0)
        rc = h->error(h, DLG_ENOMEM, "loader: out of memory for %d batches of %zu bytes",
                      cfg->prefetch, l->batch_bytes);
    if (rc == 0 && cfg->mean_file)
        rc = open_mean(l);
    if (rc == 0 && synth)
        rc = open_synthetic(l, colon ? colon + 1 : NULL);
    else if (rc == 0 && cfg->crop != 0)
        rc = open_source(l);
    if (rc == 0 && l->src)
        rc = cache_source(l);
    if (rc == 0 && l->src)
        rc = start_workers(l);
    if (rc < 0) {
        dlg_loader_close(l);
        return rc;
    }
    l->st.dataset_items = l->n;
    *out = l;
    return 0;
}

static void account(dlg_loader *l, slot *sl, uint64_t wait)
{
    dlg_batch *b = &sl->b;
    b->seq = l->next_seq;
    b->epoch = (uint32_t)(run_item(&l->cfg, l->next_seq * (uint64_t)l->cfg.batch) / l->n);
    b->wait_ns = wait;
    b->read_ns = atomic_load(&sl->read_ns);
    b->decode_ns = atomic_load(&sl->decode_ns);
    b->bytes_read = atomic_load(&sl->bytes);
    b->skipped = (uint32_t)atomic_load(&sl->skipped);
    b->jpeg_warnings = (uint32_t)atomic_load(&sl->warned);
    dlg_loader_stats *st = &l->st;
    st->batches++;
    st->items += (uint64_t)b->n;
    st->bytes_read += b->bytes_read;
    st->wait_ns += wait;
    st->read_ns += b->read_ns;
    st->decode_ns += b->decode_ns;
    st->skipped += b->skipped;
    st->jpeg_warnings += b->jpeg_warnings;
    st->epoch = b->epoch;
    l->next_seq++;
    l->held++;
    sl->held = true;
}

/* True when a failed item lies in batch seq or before it (under mu):
 * batches before the first failed item are still handed out. */
static bool failed_by(const dlg_loader *l, uint64_t seq)
{
    return l->fail_code && l->fail_item / (uint64_t)l->cfg.batch <= seq;
}

int dlg_loader_next(dlg_loader *l, dlg_batch **out)
{
    if (l->held >= l->nslots - 1)
        return l->h->error(l->h, DLG_EINVAL,
                           "loader: %d batches held; release one before asking for the next "
                           "(prefetch = %d)",
                           l->held, l->nslots);
    slot *sl = &l->slots[l->next_seq % (uint64_t)l->nslots];
    if (sl->held) /* its slot would be handed out again, stale */
        return l->h->error(l->h, DLG_EINVAL,
                           "loader: batch %llu is still held, and batch %llu needs its buffer: "
                           "release batches in the order they were handed out",
                           (unsigned long long)sl->b.seq, (unsigned long long)l->next_seq);
    uint64_t t0 = now_ns();
    if (!l->src) { /* synthetic */
        for (int i = 0; i < l->cfg.batch; i++)
            sl->b.labels[i] = (int32_t)(run_item(&l->cfg, l->next_seq * (uint64_t)l->cfg.batch +
                                                              (uint64_t)i) %
                                        l->n % 1000);
        account(l, sl, now_ns() - t0);
        *out = &sl->b;
        return 0;
    }
    pthread_mutex_lock(&l->mu);
    while (!sl->ready && !failed_by(l, l->next_seq)) {
        if (l->h->stopping && l->h->stopping(l->h)) {
            pthread_mutex_unlock(&l->mu);
            return -DLG_ESTOP;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->cv_ready, &l->mu, &ts);
    }
    int code = sl->ready ? 0 : l->fail_code;
    char msg[sizeof l->fail_msg]; /* a worker may still replace it by an earlier item's */
    if (code)
        memcpy(msg, l->fail_msg, sizeof msg);
    pthread_mutex_unlock(&l->mu);
    if (code)
        return l->h->error(l->h, code, "%s", msg);
    account(l, sl, now_ns() - t0);
    *out = &sl->b;
    return 0;
}

void dlg_loader_release(dlg_loader *l, dlg_batch *b)
{
    slot *sl = (slot *)((char *)b - offsetof(slot, b));
    if (!sl->held) { /* a second release would refill a slot twice */
        l->h->log(l->h, DLG_LOG_WARN, "loader: batch %llu released twice; ignored",
                  (unsigned long long)b->seq);
        return;
    }
    sl->held = false;
    l->held--;
    if (!l->src)
        return;
    pthread_mutex_lock(&l->mu);
    sl->ready = false;
    atomic_store(&sl->read_ns, 0);
    atomic_store(&sl->decode_ns, 0);
    atomic_store(&sl->bytes, 0);
    atomic_store(&sl->skipped, 0);
    atomic_store(&sl->warned, 0);
    atomic_store(&sl->remaining, l->cfg.batch);
    atomic_store(&sl->seq, atomic_load(&sl->seq) + (uint64_t)l->nslots);
    pthread_cond_broadcast(&l->cv_free);
    pthread_mutex_unlock(&l->mu);
}

void dlg_loader_stats_get(const dlg_loader *l, dlg_loader_stats *s)
{
    *s = l->st;
    s->crop = l->cfg.crop;
}

void dlg_loader_close(dlg_loader *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    __atomic_store_n(&l->quit, true, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&l->cv_free);
    pthread_mutex_unlock(&l->mu);
    for (int t = 0; t < l->nworkers; t++) {
        worker *w = &l->workers[t];
        if (w->started)
            pthread_join(w->tid, NULL);
        if (w->src_ctx)
            l->src->ops->worker_close(l->src, w->src_ctx);
        if (w->sc.jpeg)
            dlg_ld_scratch_free(&w->sc);
    }
    free(l->workers);
    if (l->st.jpeg_warnings > 0) /* the count at the end, after the first one's line */
        l->h->log(l->h, DLG_LOG_WARN, "loader: %llu image%s kept despite a libjpeg warning (the "
                  "first: %s)", (unsigned long long)l->st.jpeg_warnings,
                  l->st.jpeg_warnings == 1 ? "" : "s", l->first_warning);
    for (int k = 0; l->slots && k < l->nslots; k++) {
        slot *sl = &l->slots[k];
        if (sl->b.data) {
            if (l->cfg.alloc)
                l->cfg.alloc->free(l->cfg.alloc->ctx, sl->b.data, l->batch_bytes);
            else
                free(sl->b.data);
        }
        free(sl->b.labels);
        for (int i = 0; sl->raw && i < l->cfg.batch; i++)
            free(sl->raw[i]);
        free(sl->raw);
        free(sl->raw_len);
        free(sl->raw_cap);
    }
    free(l->slots);
    if (l->src)
        l->src->ops->close(l->src);
    pthread_cond_destroy(&l->cv_free);
    pthread_cond_destroy(&l->cv_ready);
    pthread_mutex_destroy(&l->mu);
    dlg_ld_mean_free(&l->mean);
    free(l->data);
    free(l);
}
