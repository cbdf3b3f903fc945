/* io-pipeline: a DLIO / MLPerf Storage style benchmark of the input
 * pipeline.  A step takes the next batch from the loader (recordio, lmdb,
 * files or synthetic data, read through the job's storage backend; lmdb
 * through LMDB's own mmap, so only with the default storage), then
 * "computes" for an emulated time; the batch is released after the compute,
 * as an accelerator reading pinned memory would.  Reports samples/s,
 * MB/s, the data-wait fraction and accelerator utilisation
 * AU = compute time / wall time.  Under several ranks each reads its shard
 * and the row is the job's (tools_ranks.h). */
#define _GNU_SOURCE
#include "tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"
#include "loader.h"
#include "tools_ranks.h"

enum { OPT_LOADER = 0, OPT_BATCH = DLG_LOPT_COUNT, OPT_COMPUTE, OPT_DIST, OPT_JITTER, OPT_MODE,
       OPT_COUNT };

static const dlg_option iopipe_options[] = {
    DLG_LOADER_OPTIONS,
    [OPT_BATCH] = {"batch", DLG_OPT_INT, "32", "1", "65536", NULL,
                   "samples per batch (per step; per rank: ranks x batch in all)", 0},
    [OPT_COMPUTE] = {"compute", DLG_OPT_DURATION, "50ms", "0", "1h", NULL,
                     "emulated accelerator time per batch (mean)", 0},
    [OPT_DIST] = {"compute_dist", DLG_OPT_ENUM, "fixed", NULL, NULL, "fixed|uniform|normal",
                  "distribution of the compute time, seeded by the job seed", 0},
    [OPT_JITTER] = {"compute_jitter", DLG_OPT_DURATION, "0", "0", "1h", NULL,
                    "uniform: half-width; normal: standard deviation (clamped at 0)", 0},
    [OPT_MODE] = {"compute_mode", DLG_OPT_ENUM, "sleep", NULL, NULL, "sleep|spin",
                  "sleep (host CPU free, like a GPU) or spin (host CPU busy)", 0},
    [OPT_COUNT] = {0},
};

static const dlg_metric iopipe_metrics[] = {
    {"au", DLG_FIELD_DOUBLE, "",
     "accelerator utilisation: compute time / wall time of the repetition's timed steps (MLPerf Storage); "
     "under several ranks, the lowest rank's (a data-parallel step waits for the starved one)"},
    {"samples_per_s", DLG_FIELD_DOUBLE, "images/s", "samples per second over the timed steps; under several ranks, all ranks' over the slowest rank's window (as mb_per_s)"},
    {"mb_per_s", DLG_FIELD_DOUBLE, "MB/s", "dataset bytes read per second, timed steps (MB = 10^6 bytes)"},
    {"compute_s", DLG_FIELD_DOUBLE, "s", "time spent in emulated compute in the timed steps; under several ranks, summed over them (as the times, skipped and jpeg_warnings below)"},
    {"wait_s", DLG_FIELD_DOUBLE, "s", "time spent waiting for batches in the timed steps"},
    {"loader_read_s", DLG_FIELD_DOUBLE, "s",
     "worker time in file reads for the timed steps' batches (summed over workers)"},
    {"loader_decode_s", DLG_FIELD_DOUBLE, "s", "worker time decoding and augmenting the timed steps' batches"},
    {"dataset_items", DLG_FIELD_INT, "", "records per epoch"},
    {"dataset_bytes", DLG_FIELD_INT, "bytes", "size of the dataset files"},
    {"epochs", DLG_FIELD_INT, "", "epoch of the last batch (0-based)"},
    {"skipped", DLG_FIELD_INT, "", "corrupt records skipped since setup, warm-up included (skip_corrupt = true)"},
    {"jpeg_warnings", DLG_FIELD_INT, "",
     "JPEG images decoded and kept despite a libjpeg warning (extraneous bytes before a marker...) since "
     "setup, warm-up included; the first is named in a warning (skip_corrupt says what a corrupt one is)"},
    {"loader_threads", DLG_FIELD_INT, "", "loader worker threads"},
    {"loader_busy", DLG_FIELD_DOUBLE, "",
     "share of the workers' time spent reading or decoding the timed steps' batches (1: every worker always "
     "busy, so more threads, faster decode or faster storage would help); under several ranks, the busiest rank's"},
    {"cache_method", DLG_FIELD_STRING, "",
     "how cache = cold|warm was applied (none, read, fadvise, fadvise+drop_caches; \"none (O_DIRECT)\" "
     "for warm on a storage that reads past the page cache; \"(N% stayed cached)\" added when cold "
     "left pages in the page cache, or when warm kept less than 99% of the data there (a memory "
     "limit smaller than the data), which a warning then names, \"(unverified)\" when "
     "mincore could not tell: a file the user neither owns nor may write)"},
    {NULL, 0, NULL, NULL}};

typedef struct iopipe {
    const dlg_host *h;
    dlg_loader *loader;
    compute_model model;
    int threads;
    bool synthetic; /* no files: a dataset_bytes of 0 is the truth */
    /* the timed steps' (since begin_timed, or setup) */
    uint64_t t_first, t_last;
    uint64_t compute_ns, wait_ns, samples, bytes;
    uint64_t read_ns, decode_ns; /* the loader workers' time for these batches */
    tools_ranks ranks;           /* under several ranks: the row the job's */
} iopipe;

static int iopipe_step(void *state, dlg_step *out)
{
    iopipe *s = state;
    uint64_t t0 = tools_now_ns();
    if (!s->t_first)
        s->t_first = t0;
    dlg_batch *b = NULL;
    int rc = dlg_loader_next(s->loader, &b);
    if (rc < 0)
        return rc;
    uint64_t t1 = tools_now_ns();
    uint64_t spent = compute_spend(&s->model, compute_draw(&s->model));
    dlg_loader_release(s->loader, b);
    s->t_last = tools_now_ns();
    s->compute_ns += spent;
    s->wait_ns += t1 - t0;
    s->samples += (uint64_t)b->n;
    s->bytes += b->bytes_read;
    s->read_ns += b->read_ns;
    s->decode_ns += b->decode_ns;
    out->items = (uint64_t)b->n;
    out->wait_ns = t1 - t0;
    out->bytes_read = b->bytes_read;
    return 0;
}

/* A rank's counts in report's gather (tools_ranks.h). */
enum { PIPE_WALL_NS, PIPE_COMPUTE_NS, PIPE_WAIT_NS, PIPE_READ_NS, PIPE_DECODE_NS, PIPE_SAMPLES, PIPE_BYTES,
       PIPE_SKIPPED, PIPE_JPEG_WARNINGS, PIPE_COUNTS };

/* The job's from every rank's counts: times, samples, bytes and loader
 * counts summed, rates over the slowest rank's window; AU the starved
 * rank's (the lowest: a data-parallel step waits for it) and loader_busy
 * the busiest rank's. */
typedef struct pipe_job {
    uint64_t sum[PIPE_COUNTS]; /* [PIPE_WALL_NS]: the largest */
    double au, busy;           /* NAN: no rank timed a window */
} pipe_job;

static pipe_job pipe_combine(const uint64_t *all, size_t n, int threads)
{
    pipe_job j = {.au = NAN, .busy = NAN};
    for (size_t k = 0; k < n; k++, all += PIPE_COUNTS) {
        for (int i = PIPE_COMPUTE_NS; i < PIPE_COUNTS; i++)
            j.sum[i] += all[i];
        double wall = (double)all[PIPE_WALL_NS];
        if (all[PIPE_WALL_NS] > j.sum[PIPE_WALL_NS])
            j.sum[PIPE_WALL_NS] = all[PIPE_WALL_NS];
        if (wall <= 0)
            continue;
        double au = (double)all[PIPE_COMPUTE_NS] / wall;
        j.au = isnan(j.au) || au < j.au ? au : j.au;
        if (threads > 0) { /* prefetch before the first batch can push it past 1 */
            double busy = (double)(all[PIPE_READ_NS] + all[PIPE_DECODE_NS]) / (wall * threads);
            busy = busy < 1 ? busy : 1;
            j.busy = isnan(j.busy) || busy > j.busy ? busy : j.busy;
        }
    }
    return j;
}

static int iopipe_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    iopipe *s = state;
    dlg_loader_stats st;
    dlg_loader_stats_get(s->loader, &st);
    const uint64_t mine[PIPE_COUNTS] = {s->t_last > s->t_first ? s->t_last - s->t_first : 0,
                                        s->compute_ns, s->wait_ns, s->read_ns, s->decode_ns, s->samples,
                                        s->bytes, st.skipped, st.jpeg_warnings};
    const uint64_t *all;
    size_t n;
    int rc = tools_ranks_gather(&s->ranks, mine, NULL, &all, &n); /* alone: mine */
    if (rc < 0)
        return rc;
    pipe_job j = pipe_combine(all, n, s->threads);
    double wall = (double)j.sum[PIPE_WALL_NS] / 1e9;
    if (wall > 0) {
        api->add_double(f, "au", j.au);
        api->add_double(f, "samples_per_s", (double)j.sum[PIPE_SAMPLES] / wall);
        api->add_double(f, "mb_per_s", (double)j.sum[PIPE_BYTES] / wall / 1e6);
    }
    api->add_double(f, "compute_s", (double)j.sum[PIPE_COMPUTE_NS] / 1e9);
    api->add_double(f, "wait_s", (double)j.sum[PIPE_WAIT_NS] / 1e9);
    api->add_double(f, "loader_read_s", (double)j.sum[PIPE_READ_NS] / 1e9);
    api->add_double(f, "loader_decode_s", (double)j.sum[PIPE_DECODE_NS] / 1e9);
    api->add_int(f, "dataset_items", (int64_t)st.dataset_items);
    /* the files: source does not size its files (that would stat every
     * one); 0 would read as an empty dataset, so leave the field out */
    if (st.dataset_bytes > 0 || s->synthetic)
        api->add_int(f, "dataset_bytes", (int64_t)st.dataset_bytes);
    api->add_int(f, "epochs", (int64_t)st.epoch);
    api->add_int(f, "skipped", (int64_t)j.sum[PIPE_SKIPPED]);
    api->add_int(f, "jpeg_warnings", (int64_t)j.sum[PIPE_JPEG_WARNINGS]);
    api->add_int(f, "loader_threads", s->threads);
    if (!isnan(j.busy))
        api->add_double(f, "loader_busy", j.busy);
    if (st.cache_method)
        api->add_string(f, "cache_method", st.cache_method);
    return 0;
}

static int iopipe_begin_timed(void *state)
{
    iopipe *s = state;
    s->t_first = s->t_last = 0;
    s->compute_ns = s->wait_ns = s->samples = s->bytes = s->read_ns = s->decode_ns = 0;
    return 0;
}

static void iopipe_teardown(void *state)
{
    iopipe *s = state;
    if (!s)
        return;
    if (s->loader)
        dlg_loader_close(s->loader);
    tools_ranks_free(&s->ranks);
    free(s);
}

/* The options' own rules (data's kind, the loader's mean/std and
 * mean_file rules, batch, compute) without opening the data set: the
 * workload's check, and the first thing setup applies; cfg gets the
 * loader's configuration. */
static int iopipe_opts_check(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job,
                             dlg_loader_config *cfg)
{
    const char *data = opts[DLG_LOPT_DATA].text;
    if (tools_after_prefix(data, "raw"))
        return h->error(h, DLG_EINVAL, "data = %s: raw files are read by workload = io; io-pipeline "
                        "reads recordio:, lmdb:, files: or synthetic datasets", data);
    int rc = dlg_loader_storage_check(h, data, job);
    if (rc < 0)
        return rc;
    dlg_loader_config_defaults(cfg);
    rc = dlg_loader_config_from_opts(cfg, &opts[OPT_LOADER], job, true, h);
    if (rc < 0)
        return rc;
    if (opts[OPT_BATCH].i < 1 || opts[OPT_BATCH].i > 65536)
        return h->error(h, DLG_EINVAL, "batch = %s: out of range [1, 65536]", opts[OPT_BATCH].text);
    cfg->batch = (int)opts[OPT_BATCH].i;
    if (opts[OPT_COMPUTE].i < 0 || opts[OPT_JITTER].i < 0)
        return h->error(h, DLG_EINVAL, "compute = %s, compute_jitter = %s: must not be negative",
                        opts[OPT_COMPUTE].text, opts[OPT_JITTER].text);
    return 0;
}

static int iopipe_check(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job)
{
    dlg_loader_config cfg;
    return iopipe_opts_check(h, opts, job, &cfg);
}

/* Under several ranks each reads its shard of the one stream (loader.h's
 * part of parts), as the CNNs' loaders do: together they read every record
 * once an epoch, not each the whole data set.  Alone: the whole. */
static void iopipe_shard(const tools_ranks *r, dlg_loader_config *cfg)
{
    if (r->size > 1) {
        cfg->part = r->rank;
        cfg->parts = r->size;
    }
}

static int iopipe_open(iopipe *s, const dlg_value *opts, const dlg_job_info *job)
{
    const char *data = opts[DLG_LOPT_DATA].text;
    dlg_loader_config cfg;
    int rc = iopipe_opts_check(s->h, opts, job, &cfg);
    if (rc < 0)
        return rc;
    s->threads = cfg.threads;
    s->synthetic = data && strncmp(data, "synthetic", 9) == 0;
    s->model = (compute_model){(uint64_t)opts[OPT_COMPUTE].i, (uint64_t)opts[OPT_JITTER].i,
                               (compute_dist)opts[OPT_DIST].i, opts[OPT_MODE].i == 1,
                               DLG_JOB_HAS(job, seed) ? job->seed ^ 0xc0ffee : 0xc0ffee};
    iopipe_shard(&s->ranks, &cfg);
    return dlg_loader_open(&s->loader, &cfg, s->h);
}

static int iopipe_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state)
{
    *state = NULL;
    iopipe *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    int rc = tools_ranks_init(&s->ranks, h, "io-pipeline", PIPE_COUNTS, false);
    if (rc == 0)
        rc = iopipe_open(s, opts, job);
    if (rc < 0) {
        s->loader = NULL;
        iopipe_teardown(s);
        return rc;
    }
    *state = s;
    return 0;
}

static const dlg_workload_ops iopipe_ops = {
    .version = 3,
    .check = iopipe_check,
    .unit = "images",
    .setup = iopipe_setup,
    .step = iopipe_step,
    .report = iopipe_report,
    .teardown = iopipe_teardown,
    .begin_timed = iopipe_begin_timed,
};

const dlg_plugin_desc iopipe_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_WORKLOAD,
    .name = "io-pipeline",
    .version = "1.0",
    .summary = "DLIO-style: the input pipeline feeding an emulated accelerator (samples/s, AU)",
    .options = iopipe_options,
    .metrics = iopipe_metrics,
    .ops = &iopipe_ops,
};
