/* preprocess: the study's preprocessing test, as im2rec / convert_imageset
 * do it: an image folder or list -> RecordIO or LMDB.  A step writes the
 * next `chunk` images in list order (threads read and transform ahead). */
#define _GNU_SOURCE
#include "prep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep_pool.h"

enum { OPT_INPUT, OPT_ROOT, OPT_OUTPUT, OPT_RESIZE, OPT_QUALITY, OPT_THREADS, OPT_CHUNK,
       OPT_SKIP_CORRUPT, OPT_COUNT };
#define MAX_SKIP_LOGS 5

static const dlg_option prep_options[] = {
    [OPT_INPUT] = {"input", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                   "DIR or LIST: a class-folder tree (labels = sorted class names), an im2rec .lst, "
                   "or a convert_imageset list (\"path label\")",
                   DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP},
    [OPT_ROOT] = {"root", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                  "folder the list's paths are relative to (default: the list's folder)", DLG_OPT_NOSWEEP},
    [OPT_OUTPUT] = {"output", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                    "recordio:PATH (PATH + .idx, im2rec layout) or lmdb:PATH (encoded Datums, "
                    "convert_imageset keys); replaced when a pass completes",
                    DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP},
    [OPT_RESIZE] = {"resize", DLG_OPT_INT, "0", "0", "16384", NULL,
                    "shorter side after resizing (JPEG re-encoded); 0 = store the file bytes as "
                    "they are (im2rec --pass-through)",
                    0},
    [OPT_QUALITY] = {"quality", DLG_OPT_INT, "95", "1", "100", NULL, "JPEG quality when re-encoding", 0},
    [OPT_THREADS] = {"threads", DLG_OPT_INT, "0", "0", "1024", NULL,
                     "threads reading and transforming (0 = the job's cpus); output stays in order", 0},
    [OPT_CHUNK] = {"chunk", DLG_OPT_INT, "1", "1", "65536", NULL, "images written per step", 0},
    [OPT_SKIP_CORRUPT] = {"skip_corrupt", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
                          "count and skip corrupt images instead of failing", 0},
    [OPT_COUNT] = {0},
};

static const dlg_metric prep_metrics[] = {
    {"images_written", DLG_FIELD_INT, "", "images stored in the repetition's timed steps"},
    {"skipped", DLG_FIELD_INT, "", "corrupt images skipped since setup, warm-up included (skip_corrupt = true)"},
    {"passes", DLG_FIELD_INT, "", "complete conversions of the whole list since setup"},
    {"pass_s", DLG_FIELD_DOUBLE, "s", "seconds the last complete pass took (total time)"},
    {"images_per_pass", DLG_FIELD_INT, "", "images in the list"},
    {"input_bytes", DLG_FIELD_INT, "bytes", "image bytes read in the timed steps"},
    {"output_bytes", DLG_FIELD_INT, "bytes", "bytes written in the timed steps (records, index, keys)"},
    {"read_mb_per_s", DLG_FIELD_DOUBLE, "MB/s", "image bytes read per second, timed steps (MB = 10^6 bytes)"},
    {"write_mb_per_s", DLG_FIELD_DOUBLE, "MB/s", "bytes written per second, timed steps"},
    {"threads", DLG_FIELD_INT, "", "worker threads"},
    /* the io-pipeline loader's names: the report's saturated-worker rule
     * reads them from any workload */
    {"loader_read_s", DLG_FIELD_DOUBLE, "s", "worker time reading image files since the first timed step (summed over workers)"},
    {"loader_decode_s", DLG_FIELD_DOUBLE, "s", "worker time decoding, resizing and re-encoding since the first timed step"},
    {"loader_busy", DLG_FIELD_DOUBLE, "",
     "share of the workers' time spent reading or transforming since the first timed step (1: every worker always "
     "busy; then more threads, or faster storage when reading fills it, would help)"},
    {NULL, 0, NULL, NULL}};

typedef struct prep {
    const dlg_host *h;
    prep_input in;
    prep_output *out;
    prep_pool *pool;
    int threads, chunk;
    bool skip_corrupt;
    bool failed; /* a step failed: its error says why there is no output */
    /* pass state */
    bool pass_open;
    size_t pos;
    uint64_t pass_t0;
    /* since setup */
    uint64_t skipped, passes, last_pass_ns;
    /* since begin_timed (or setup) */
    uint64_t images, in_bytes, t_first, t_last;
    uint64_t out0;               /* output bytes at begin_timed */
    uint64_t read0_ns, work0_ns; /* worker times at the first such step (prefetch excluded) */
} prep;

static int fail(const dlg_host *h, const dlg_data_err *err, int rc)
{
    if (err->msg[0])
        return h->error(h, err->code ? err->code : -rc, "%s", err->msg);
    return rc; /* the host has the message already */
}

/* One image back from the workers, in order. */
static int take_one(prep *p, uint64_t *written, uint64_t *wait)
{
    dlg_data_err err;
    dlg_data_err_clear(&err);
    int rc = 0;
    if (!p->pass_open) {
        if ((rc = prep_output_begin(p->out, &err)) < 0)
            return fail(p->h, &err, rc);
        p->pass_open = true;
        p->pass_t0 = tools_now_ns();
    }
    uint64_t w = 0;
    prep_slot *s = prep_pool_next(p->pool, &w);
    *wait += w;
    const prep_item *it = &p->in.items[p->pos];
    p->in_bytes += s->file_bytes;
    if (s->rc == -DLG_ECORRUPT && p->skip_corrupt) {
        if (p->skipped++ < MAX_SKIP_LOGS)
            p->h->log(p->h, DLG_LOG_WARN, "skipped: %s", s->err.msg);
    } else if (s->rc < 0) {
        rc = fail(p->h, &s->err, s->rc);
    } else if ((rc = prep_output_put(p->out, it, s->data, s->len, &err)) < 0) {
        rc = fail(p->h, &err, rc);
    } else {
        p->images++;
        (*written)++;
    }
    prep_pool_release(p->pool, s);
    if (rc < 0)
        return rc;
    if (++p->pos == p->in.n) {
        p->pos = 0;
        p->pass_open = false;
        if ((rc = prep_output_commit(p->out, &err)) < 0)
            return fail(p->h, &err, rc);
        p->passes++;
        p->last_pass_ns = tools_now_ns() - p->pass_t0;
    }
    return 0;
}

static int prep_step(void *state, dlg_step *out)
{
    prep *p = state;
    uint64_t t0 = tools_now_ns(), written = 0, wait = 0, in0 = p->in_bytes;
    if (!p->t_first) {
        p->t_first = t0;
        prep_pool_times(p->pool, &p->read0_ns, &p->work0_ns);
    }
    int rc = 0;
    for (int i = 0; i < p->chunk && rc == 0; i++)
        rc = take_one(p, &written, &wait);
    p->t_last = tools_now_ns();
    out->items = written;
    out->wait_ns = wait;
    out->bytes_read = p->in_bytes - in0;
    p->failed |= rc < 0;
    return rc;
}

static int prep_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    prep *p = state;
    double secs = p->t_last > p->t_first ? (double)(p->t_last - p->t_first) / 1e9 : 0;
    uint64_t outb = prep_output_bytes(p->out) - p->out0;
    api->add_int(f, "images_written", (int64_t)p->images);
    api->add_int(f, "skipped", (int64_t)p->skipped);
    api->add_int(f, "passes", (int64_t)p->passes);
    if (p->passes)
        api->add_double(f, "pass_s", (double)p->last_pass_ns / 1e9);
    api->add_int(f, "images_per_pass", (int64_t)p->in.n);
    api->add_int(f, "input_bytes", (int64_t)p->in_bytes);
    api->add_int(f, "output_bytes", (int64_t)outb);
    if (secs > 0) {
        api->add_double(f, "read_mb_per_s", (double)p->in_bytes / secs / 1e6);
        api->add_double(f, "write_mb_per_s", (double)outb / secs / 1e6);
    }
    api->add_int(f, "threads", p->threads);
    uint64_t read_ns, work_ns;
    prep_pool_times(p->pool, &read_ns, &work_ns);
    read_ns -= p->read0_ns;
    work_ns -= p->work0_ns;
    api->add_double(f, "loader_read_s", (double)read_ns / 1e9);
    api->add_double(f, "loader_decode_s", (double)work_ns / 1e9);
    if (secs > 0 && p->threads > 0) { /* work finishing after the last step can push it past 1 */
        double busy = (double)(read_ns + work_ns) / 1e9 / (secs * p->threads);
        api->add_double(f, "loader_busy", busy < 1 ? busy : 1);
    }
    return 0;
}

static int prep_begin_timed(void *state)
{
    prep *p = state;
    p->images = p->in_bytes = p->t_first = p->t_last = 0; /* the next step takes the worker times */
    p->out0 = prep_output_bytes(p->out);
    return 0;
}

static void prep_teardown(void *state)
{
    prep *p = state;
    if (!p)
        return;
    prep_pool_stop(p->pool);
    if (p->passes == 0 && p->h && p->pass_open && !p->failed) /* images taken, none kept */
        p->h->log(p->h, DLG_LOG_WARN, "no complete pass (%zu images each): output not written; "
                                     "run more steps", p->in.n);
    prep_output_free(p->out); /* removes an unfinished pass */
    prep_input_free(&p->in);
    free(p);
}

/* Opens the first image through the storage backend before any thread
 * does: a missing file fails here, and the backend instance is created
 * once, on this thread. */
static int probe_first(prep *p)
{
    dlg_file *f = NULL;
    int rc = p->h->file_open(p->h, NULL, p->in.items[0].path, &f);
    if (rc == 0)
        p->h->file_close(p->h, f);
    return rc;
}

static int prep_open(prep *p, const dlg_value *opts, const dlg_job_info *job)
{
    const dlg_host *h = p->h;
    dlg_data_err err;
    dlg_data_err_clear(&err);
    prep_format fmt;
    const char *path;
    if (prep_output_parse(opts[OPT_OUTPUT].text, &fmt, &path) < 0)
        return h->error(h, DLG_EINVAL, "output = %s: write recordio:PATH or lmdb:PATH",
                        opts[OPT_OUTPUT].text ? opts[OPT_OUTPUT].text : "(unset)");
    prep_params par = {(int)opts[OPT_RESIZE].i, (int)opts[OPT_QUALITY].i};
    if (par.resize < 0 || par.resize > 16384 || par.quality < 1 || par.quality > 100)
        return h->error(h, DLG_EINVAL, "resize = %s, quality = %s: out of range", opts[OPT_RESIZE].text,
                        opts[OPT_QUALITY].text);
    int64_t threads = opts[OPT_THREADS].i, chunk = opts[OPT_CHUNK].i;
    if (threads < 0 || threads > 1024 || chunk < 1 || chunk > 65536)
        return h->error(h, DLG_EINVAL, "threads = %s, chunk = %s: out of range", opts[OPT_THREADS].text,
                        opts[OPT_CHUNK].text);
    if (threads == 0)
        threads = DLG_JOB_HAS(job, cpus) && job->cpus > 0 ? job->cpus : 1;
    p->threads = (int)threads;
    p->chunk = (int)chunk;
    p->skip_corrupt = opts[OPT_SKIP_CORRUPT].i != 0;
    const char *root = opts[OPT_ROOT].set && *opts[OPT_ROOT].text ? opts[OPT_ROOT].text : NULL;
    int rc = prep_input_load(&p->in, opts[OPT_INPUT].text, root, &err);
    if (rc == 0)
        rc = prep_output_new(&p->out, fmt, path, &err);
    if (rc == 0)
        rc = prep_output_check_labels(p->out, &p->in, &err);
    if (rc < 0)
        return fail(h, &err, rc);
    if ((rc = probe_first(p)) < 0)
        return rc;
    rc = prep_pool_start(&p->pool, h, &p->in, &par, p->threads, &err);
    return rc < 0 ? fail(h, &err, rc) : 0;
}

static int prep_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state)
{
    *state = NULL;
    prep *p = calloc(1, sizeof *p);
    if (!p)
        return h->error(h, DLG_ENOMEM, "preprocess: out of memory");
    p->h = h;
    int rc = prep_open(p, opts, job);
    if (rc < 0) {
        prep_teardown(p);
        return rc;
    }
    *state = p;
    return 0;
}

static const dlg_workload_ops prep_ops = {
    .version = 2,
    .unit = "images",
    .setup = prep_setup,
    .step = prep_step,
    .report = prep_report,
    .teardown = prep_teardown,
    .begin_timed = prep_begin_timed,
};

const dlg_plugin_desc preprocess_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_WORKLOAD,
    .name = "preprocess",
    .version = "1.0",
    .summary = "image folder/list -> RecordIO (im2rec) or LMDB (convert_imageset), optional resize",
    .options = prep_options,
    .metrics = prep_metrics,
    .ops = &prep_ops,
};
