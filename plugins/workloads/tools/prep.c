/* preprocess: the study's preprocessing test, as im2rec / convert_imageset
 * do it: an image folder or list -> RecordIO or LMDB.  A step writes the
 * next `chunk` images in list order (threads read and transform ahead). */
#define _GNU_SOURCE
#include "prep_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jpeg.h"
#include "prep_pool.h"

enum { OPT_INPUT, OPT_ROOT, OPT_OUTPUT, OPT_RESIZE, OPT_RESIZE_W, OPT_RESIZE_H, OPT_MEAN_OUTPUT,
       OPT_QUALITY, OPT_THREADS, OPT_CHUNK, OPT_SKIP_CORRUPT, OPT_COUNT };
#define MAX_SKIP_LOGS 5

static const dlg_option prep_options[] = {
    [OPT_INPUT] = {"input", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                   "DIR or LIST: a class-folder tree (labels = sorted class names), an im2rec .lst, "
                   "or a convert_imageset list (\"path label\").  JPEG images only: the loader "
                   "decodes nothing else, so a PNG, GIF, BMP, WebP... is refused by its content, "
                   "whatever its name (or skipped, skip_corrupt)",
                   DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP | DLG_OPT_PATH_IN},
    [OPT_ROOT] = {"root", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                  "DIR: the folder the list's paths are relative to (default: the list's folder)",
                  DLG_OPT_NOSWEEP | DLG_OPT_PATH_IN},
    [OPT_OUTPUT] = {"output", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                    "recordio:FILE (and its index: FILE with .rec replaced by .idx, else FILE.idx; im2rec "
                    "layout; written through the job's storage, which a throttle shapes by its write limits) or lmdb:DIR (encoded Datums, "
                    "convert_imageset keys; liblmdb writes it itself); replaced when a pass completes.  What exists "
                    "there is checked by its format only, not for who wrote it: a file starting with RecordIO's "
                    "magic (an im2rec .rec too), an .idx of KEY<TAB>OFFSET lines, an empty file, or a folder "
                    "holding nothing but data.mdb and lock.mdb (any LMDB, or an empty folder) is replaced; "
                    "anything else, a link, or the input is refused before any work (and checked again when a "
                    "pass completes)",
                    DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP | DLG_OPT_PATH_OUT},
    [OPT_RESIZE] = {"resize", DLG_OPT_INT, "0", "0", "16384", NULL,
                    "shorter side after resizing (JPEG re-encoded; decoded at the smallest DCT scale "
                    "not below the size, then bilinear, antialiased when shrinking: im2rec's cv2 "
                    "INTER_LINEAR is not antialiased); 0 = store the file bytes as they are (im2rec "
                    "--pass-through) unless resize_width/resize_height",
                    0},
    [OPT_RESIZE_W] = {"resize_width", DLG_OPT_INT, "0", "0", "16384", NULL,
                      "with resize_height: store every image at exactly this width, aspect not kept "
                      "(convert_imageset --resize_width; JPEG re-encoded; bilinear, antialiased when "
                      "shrinking); 0 = off",
                      0},
    [OPT_RESIZE_H] = {"resize_height", DLG_OPT_INT, "0", "0", "16384", NULL,
                      "with resize_width: the exact height (convert_imageset --resize_height)", 0},
    [OPT_MEAN_OUTPUT] = {"mean_output", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                         "PATH: each complete pass also writes the mean of the images as stored "
                         "(decoded back, BGR) as compute_image_mean's .binaryproto, for a reader's "
                         "mean_file; needs resize_width and resize_height.  An existing PATH is replaced "
                         "only if it is empty or a BlobProto (any mean image: a format check, before any "
                         "work and again before each write); anything else, a link, the input, one of "
                         "output's names or a path in its LMDB folder is refused",
                         DLG_OPT_NOSWEEP | DLG_OPT_PATH_OUT},
    [OPT_QUALITY] = {"quality", DLG_OPT_INT, "95", "1", "100", NULL, "JPEG quality when re-encoding", 0},
    [OPT_THREADS] = {"threads", DLG_OPT_INT, "0", "0", "1024", NULL,
                     "threads reading and transforming (0 = the job's cpus); output stays in order", 0},
    [OPT_CHUNK] = {"chunk", DLG_OPT_INT, "1", "1", "65536", NULL, "images written per step", 0},
    [OPT_SKIP_CORRUPT] = {"skip_corrupt", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
                          "count and skip corrupt images instead of failing.  An image is corrupt "
                          "when it is not a JPEG (a PNG...: see input) or is cut short (no EOI marker) or, when decoded (resize, "
                          "resize_width), cannot be decoded or libjpeg says part of its data was lost "
                          "(premature end of data segment, bad Huffman code...: part of the image would be "
                          "made up); one with another libjpeg warning is kept and counted (jpeg_warnings)",
                          0},
    [OPT_COUNT] = {0},
};

static const dlg_metric prep_metrics[] = {
    {"images_written", DLG_FIELD_INT, "", "images stored in the repetition's timed steps"},
    {"skipped", DLG_FIELD_INT, "", "corrupt images skipped since setup, warm-up included (skip_corrupt = true)"},
    {"jpeg_warnings", DLG_FIELD_INT, "",
     "JPEG images decoded (resize, resize_width) and stored despite a libjpeg warning (extraneous bytes "
     "before a marker...) since setup, warm-up included; the first is named in a warning (skip_corrupt says "
     "what a corrupt one is; a pass-through decodes nothing)"},
    {"passes", DLG_FIELD_INT, "", "complete conversions of the whole list since setup"},
    {"pass_s", DLG_FIELD_DOUBLE, "s", "seconds the last complete pass took (total time)"},
    {"images_per_pass", DLG_FIELD_INT, "", "images in the list"},
    {"input_bytes", DLG_FIELD_INT, "bytes", "image bytes read in the timed steps"},
    {"output_bytes", DLG_FIELD_INT, "bytes",
     "bytes the timed steps wrote (records, index, keys) for passes that were complete, and so replaced the "
     "output, by the report; a pass still open then is not counted (0 when none completed)"},
    {"read_mb_per_s", DLG_FIELD_DOUBLE, "MB/s", "image bytes read per second, timed steps (MB = 10^6 bytes)"},
    {"write_mb_per_s", DLG_FIELD_DOUBLE, "MB/s",
     "output_bytes per second, from the first timed step to the end of the last pass they completed (0 when "
     "none)"},
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
    bool idle;   /* a rank other than 0: rank 0 alone writes (prep_setup) */
    char *mean_path;       /* mean_output, or NULL */
    uint64_t *mean_sum;    /* 3 x height x width, the pass's */
    int mean_w, mean_h;
    uint64_t pass_stored;  /* images stored in the open pass */
    /* pass state */
    bool pass_open;
    size_t pos;
    uint64_t pass_t0;
    /* since setup */
    uint64_t skipped, passes, last_pass_ns;
    uint64_t jpeg_warnings;  /* images stored despite a libjpeg warning */
    char first_warning[320]; /* the first one's, for the count at teardown */
    /* since begin_timed (or setup) */
    uint64_t images, in_bytes, t_first, t_last;
    uint64_t t_commit;           /* when the last pass completed (0: none since) */
    uint64_t out0;               /* output bytes put by begin_timed */
    uint64_t read0_ns, work0_ns; /* worker times at the first such step (prefetch excluded) */
} prep;

static int fail(const dlg_host *h, const dlg_data_err *err, int rc)
{
    if (err->msg[0])
        return h->error(h, err->code ? err->code : -rc, "%s", err->msg);
    return rc; /* the host has the message already */
}

/* The pass's mean, once its last image was taken. */
static int write_mean(prep *p, dlg_data_err *err)
{
    if (!p->mean_path)
        return 0;
    memset(p->mean_sum, 0, (size_t)p->mean_w * (size_t)p->mean_h * 3 * sizeof *p->mean_sum);
    prep_pool_take_sum(p->pool, p->mean_sum);
    int rc = prep_mean_write(p->mean_path, p->mean_sum, p->pass_stored, p->mean_w, p->mean_h, err);
    if (rc == 0 && DLG_HOST_HAS(p->h, file_kept))
        p->h->file_kept(p->h, p->mean_path);
    return rc;
}

/* An image stored despite a libjpeg warning: counted, the first logged,
 * as the loaders do (jpeg.h says which warnings keep an image). */
static void count_warning(prep *p, const char *msg)
{
    if (p->jpeg_warnings++ > 0)
        return;
    snprintf(p->first_warning, sizeof p->first_warning, "%s", msg);
    p->h->log(p->h, DLG_LOG_WARN, "%s (a libjpeg warning that is no loss of image data: the image "
              "is stored; the count comes at the end)", msg);
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
        p->pass_stored = 0;
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
        if (s->jpeg_warning[0])
            count_warning(p, s->jpeg_warning);
        p->images++;
        p->pass_stored++;
        (*written)++;
    }
    prep_pool_release(p->pool, s);
    if (rc < 0)
        return rc;
    if (++p->pos == p->in.n) {
        p->pos = 0;
        p->pass_open = false;
        if ((rc = prep_output_commit(p->out, &err)) < 0 || (rc = write_mean(p, &err)) < 0)
            return fail(p->h, &err, rc);
        p->passes++;
        p->t_commit = tools_now_ns();
        p->last_pass_ns = p->t_commit - p->pass_t0;
    }
    return 0;
}

static int prep_step(void *state, dlg_step *out)
{
    prep *p = state;
    if (p->idle) { /* in step with rank 0, which does the work */
        out->items = 0;
        return 0;
    }
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
    if (p->idle) /* the row is rank 0's */
        return 0;
    double secs = p->t_last > p->t_first ? (double)(p->t_last - p->t_first) / 1e9 : 0;
    /* only what complete passes wrote (an open pass's .part is dropped), at
     * the rate it was written: up to the last pass's end */
    uint64_t done = prep_output_committed_bytes(p->out), outb = done > p->out0 ? done - p->out0 : 0;
    double wsecs = p->t_first && p->t_commit > p->t_first ? (double)(p->t_commit - p->t_first) / 1e9 : 0;
    api->add_int(f, "images_written", (int64_t)p->images);
    api->add_int(f, "skipped", (int64_t)p->skipped);
    api->add_int(f, "jpeg_warnings", (int64_t)p->jpeg_warnings);
    api->add_int(f, "passes", (int64_t)p->passes);
    if (p->passes)
        api->add_double(f, "pass_s", (double)p->last_pass_ns / 1e9);
    api->add_int(f, "images_per_pass", (int64_t)p->in.n);
    api->add_int(f, "input_bytes", (int64_t)p->in_bytes);
    api->add_int(f, "output_bytes", (int64_t)outb);
    if (secs > 0) {
        api->add_double(f, "read_mb_per_s", (double)p->in_bytes / secs / 1e6);
        api->add_double(f, "write_mb_per_s", wsecs > 0 ? (double)outb / wsecs / 1e6 : 0.0);
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
    if (p->idle)
        return 0;
    p->images = p->in_bytes = p->t_first = p->t_last = p->t_commit = 0; /* the next step takes the worker times */
    p->out0 = prep_output_bytes(p->out);
    return 0;
}

static void prep_teardown(void *state)
{
    prep *p = state;
    if (!p)
        return;
    prep_pool_stop(p->pool);
    if (p->jpeg_warnings > 0 && p->h) /* the count at the end, after the first one's line */
        p->h->log(p->h, DLG_LOG_WARN, "preprocess: %llu image%s stored despite a libjpeg warning (the "
                  "first: %s)", (unsigned long long)p->jpeg_warnings, p->jpeg_warnings == 1 ? "" : "s",
                  p->first_warning);
    if (p->passes == 0 && p->h && p->pass_open && !p->failed) /* images taken, none kept */
        p->h->log(p->h, DLG_LOG_WARN, "no complete pass (%zu images each): output not written; "
                                     "run more steps", p->in.n);
    prep_output_free(p->out); /* removes an unfinished pass */
    prep_input_free(&p->in);
    free(p->mean_sum);
    free(p->mean_path);
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

/* convert_imageset's exact size: both or neither, and not with resize. */
static int resize_params(const dlg_host *h, const dlg_value *opts, prep_params *par)
{
    int64_t w = opts[OPT_RESIZE_W].i, hh = opts[OPT_RESIZE_H].i;
    if (w < 0 || w > 16384 || hh < 0 || hh > 16384)
        return h->error(h, DLG_EINVAL, "resize_width = %s, resize_height = %s: out of range (0..16384)",
                        opts[OPT_RESIZE_W].text, opts[OPT_RESIZE_H].text);
    if ((w > 0) != (hh > 0)) /* convert_imageset silently resizes nothing then */
        return h->error(h, DLG_EINVAL, "resize_width = %s, resize_height = %s: give both for an exact "
                        "size (or neither)", opts[OPT_RESIZE_W].text, opts[OPT_RESIZE_H].text);
    if (w > 0 && par->resize > 0)
        return h->error(h, DLG_EINVAL, "resize = %d with resize_width/resize_height: give one (the "
                        "shorter side, or an exact size)", par->resize);
    if ((uint64_t)w * (uint64_t)hh > DLG_JPEG_MAX_PIXELS)
        return h->error(h, DLG_EINVAL, "resize_width x resize_height = %s x %s: too large",
                        opts[OPT_RESIZE_W].text, opts[OPT_RESIZE_H].text);
    par->width = (int)w;
    par->height = (int)hh;
    return 0;
}

/* mean_output: one stored size (Caffe's mean is per pixel), a writable path. */
static int mean_params(prep *p, const dlg_value *opts, prep_params *par)
{
    const dlg_host *h = p->h;
    const dlg_value *mo = &opts[OPT_MEAN_OUTPUT];
    if (!mo->set || !mo->text)
        return 0;
    dlg_data_err err;
    dlg_data_err_clear(&err);
    int rc = prep_mean_probe(mo->text, &err);
    if (rc < 0)
        return fail(h, &err, rc);
    p->mean_sum = calloc((size_t)par->width * (size_t)par->height * 3, sizeof *p->mean_sum);
    p->mean_path = strdup(mo->text); /* opts live only through setup */
    if (!p->mean_sum || !p->mean_path)
        return h->error(h, DLG_ENOMEM, "mean_output = %s: out of memory", mo->text);
    p->mean_w = par->width;
    p->mean_h = par->height;
    par->mean = true;
    return 0;
}

/* The options' own rules (output's form, the sizes, mean_output's need for
 * an exact size, the ranges) without touching a file: the workload's
 * check, and the first thing setup applies.  par and fmt/path get them. */
static int prep_params_check(const dlg_host *h, const dlg_value *opts, prep_params *par, prep_format *fmt,
                             const char **path)
{
    if (prep_output_parse(opts[OPT_OUTPUT].text, fmt, path) < 0)
        return h->error(h, DLG_EINVAL, "output = %s: write recordio:FILE or lmdb:DIR",
                        opts[OPT_OUTPUT].text ? opts[OPT_OUTPUT].text : "(unset)");
    *par = (prep_params){.resize = (int)opts[OPT_RESIZE].i, .quality = (int)opts[OPT_QUALITY].i};
    if (par->resize < 0 || par->resize > 16384 || par->quality < 1 || par->quality > 100)
        return h->error(h, DLG_EINVAL, "resize = %s, quality = %s: out of range", opts[OPT_RESIZE].text,
                        opts[OPT_QUALITY].text);
    int rc = resize_params(h, opts, par);
    if (rc < 0)
        return rc;
    const dlg_value *mo = &opts[OPT_MEAN_OUTPUT];
    if (mo->set && mo->text && !*mo->text)
        return h->error(h, DLG_EINVAL, "mean_output: empty path");
    if (mo->set && mo->text && par->width <= 0)
        return h->error(h, DLG_EINVAL, "mean_output = %s needs resize_width and resize_height: a Caffe "
                        "mean image is per pixel, so every image must be stored at one size", mo->text);
    int64_t threads = opts[OPT_THREADS].i, chunk = opts[OPT_CHUNK].i;
    if (threads < 0 || threads > 1024 || chunk < 1 || chunk > 65536)
        return h->error(h, DLG_EINVAL, "threads = %s, chunk = %s: out of range", opts[OPT_THREADS].text,
                        opts[OPT_CHUNK].text);
    return 0;
}

/* What exists at the output's names and mean_output is preprocess's to
 * replace, and not the input (nor, for the mean, the output): before any
 * cell (check) and again at setup. */
static int targets_check(const dlg_host *h, const dlg_value *opts, prep_format fmt, const char *path)
{
    dlg_data_err err;
    dlg_data_err_clear(&err);
    const dlg_value *mo = &opts[OPT_MEAN_OUTPUT];
    int rc = prep_output_check_targets(fmt, path, opts[OPT_INPUT].text, &err);
    if (rc == 0 && mo->set && mo->text && *mo->text)
        rc = prep_mean_check_target(mo->text, fmt, path, opts[OPT_INPUT].text, &err);
    return rc < 0 ? fail(h, &err, rc) : 0;
}

static int prep_check(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job)
{
    prep_params par;
    prep_format fmt;
    const char *path;
    int rc = prep_params_check(h, opts, &par, &fmt, &path);
    return rc < 0 ? rc : targets_check(h, opts, fmt, path);
}

static int prep_open(prep *p, const dlg_value *opts, const dlg_job_info *job)
{
    const dlg_host *h = p->h;
    dlg_data_err err;
    dlg_data_err_clear(&err);
    prep_format fmt;
    const char *path;
    prep_params par;
    int rc = prep_params_check(h, opts, &par, &fmt, &path);
    if (rc == 0)
        rc = targets_check(h, opts, fmt, path);
    if (rc < 0)
        return rc;
    if ((rc = mean_params(p, opts, &par)) < 0)
        return rc;
    int64_t threads = opts[OPT_THREADS].i, chunk = opts[OPT_CHUNK].i;
    if (threads == 0)
        threads = DLG_JOB_HAS(job, cpus) && job->cpus > 0 ? job->cpus : 1;
    p->threads = (int)threads;
    p->chunk = (int)chunk;
    p->skip_corrupt = opts[OPT_SKIP_CORRUPT].i != 0;
    const char *root = opts[OPT_ROOT].set && *opts[OPT_ROOT].text ? opts[OPT_ROOT].text : NULL;
    rc = prep_input_load(&p->in, opts[OPT_INPUT].text, root, &err);
    if (rc == 0)
        rc = prep_output_new(&p->out, h, fmt, path, &err);
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
        return h->error(h, DLG_ENOMEM, "out of memory");
    p->h = h;
    /* Under several ranks rank 0 alone writes output (one node, or a file
     * system the nodes share): each rank would write the same PATH.part and
     * rename it, the second rename failing and ending the run.  The others
     * check the options alike, then take part in the steps doing nothing. */
    int size, rc;
    if (tools_rank(h, &size) > 0) {
        prep_params par;
        prep_format fmt;
        const char *path;
        if ((rc = prep_params_check(h, opts, &par, &fmt, &path)) < 0) {
            prep_teardown(p);
            return rc;
        }
        p->idle = true;
        *state = p;
        return 0;
    }
    rc = prep_open(p, opts, job);
    if (rc < 0) {
        prep_teardown(p);
        return rc;
    }
    *state = p;
    return 0;
}

static const dlg_workload_ops prep_ops = {
    .version = 3,
    .check = prep_check,
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
    .summary = "image folder/list -> RecordIO (im2rec) or LMDB (convert_imageset), optional resize "
               "and mean image (compute_image_mean); under mpirun rank 0 alone writes",
    .options = prep_options,
    .metrics = prep_metrics,
    .ops = &prep_ops,
};
