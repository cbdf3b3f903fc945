/* Setup, step and report of the caffe workloads.  Setup (untimed) checks
 * the options, builds the model, checks that the plan fits in memory,
 * plans it once and prepares the data; a step is one batch: forward
 * (infer) or forward + backward + SGD (train). */
#define _GNU_SOURCE
#include "cnn.h"

#include <dlgauge/nn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cnn_data.h"
#include "cnn_mem.h"
#include "nn_profile.h"
#include "nn_ranks.h"
#include "peak.h"
#include "backend.h"
#include "cuda/cuda_device.h"

#ifdef DLG_CAFFE_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

const dlg_metric cnn_metrics[] = {
    {"loss", DLG_FIELD_DOUBLE, "",
     "softmax cross-entropy of the last batch; under several ranks, the mean of the ranks' last batches"},
    {"top1", DLG_FIELD_DOUBLE, "", "top-1 accuracy on the last batch (fraction); under several ranks, their mean"},
    {"top5", DLG_FIELD_DOUBLE, "", "top-5 accuracy on the last batch (fraction); under several ranks, their mean"},
    {"flops_per_item", DLG_FIELD_DOUBLE, "FLOP/image",
     "2 x the multiply-adds of a step (engine count): the forward's; train: each layer's forward, "
     "weight gradient and data gradient as the plan runs them (no data gradient into the images: "
     "a little under 3x the forward)"},
    {"gflops", DLG_FIELD_DOUBLE, "GFLOP/s",
     "achieved: flops_per_item x images / time, over the timed steps (after the warm-up, and "
     "never the first step after setup; an effective rate: Winograd layers do fewer "
     "multiplications than counted); under several ranks, the job's: every rank's images over "
     "the slowest rank's time"},
    {"pct_peak", DLG_FIELD_DOUBLE, "%", "gflops as a percentage of peak_gflops"},
    {"peak_gflops", DLG_FIELD_DOUBLE, "GFLOP/s",
     "peak of the device that ran: the job's cores' FP32 peak, or on a GPU its dense peak for "
     "the precision (see peak_source); under several ranks, the ranks' peaks summed (ranks that "
     "share cores count them once each), absent where a rank's is unknown"},
    {"peak_source", DLG_FIELD_STRING, "",
     "how the peak was derived: cores x clock x FLOP/cycle, or the GPU's datasheet rate"},
    {"params", DLG_FIELD_INT, "",
     "trainable parameters of the model (batch-norm running statistics not counted, as torch's parameters())"},
    {"plan_bytes", DLG_FIELD_INT, "bytes",
     "memory the planned net holds: params, kept and shared activations, gradients, workspace"},
    {"backend", DLG_FIELD_STRING, "",
     "engine backend that ran: cpu (oneDNN, fp32), cpu-bf16, ref; cuda:N, cuda-tf32:N, cuda-bf16:N, "
     "cuda-fp16:N"},
    {"dnnl_isa", DLG_FIELD_STRING, "", "instruction set oneDNN dispatched to"},
    {"winograd_layers", DLG_FIELD_INT, "",
     "convolutions the plan runs by a Winograd kernel in some pass (the engine's on AVX2, oneDNN's "
     "where it timed faster on AVX-512; winograd = false: 0), so runs that differ here are known"},
    {"data_source", DLG_FIELD_STRING, "", "synthetic or the loader's format"},
    NN_LOSS_SCALE_FIELDS,
    NN_PROFILE_FIELDS,
    {NULL, 0, NULL, NULL}};

typedef struct cnn {
    const dlg_host *h;
    dlg_net *net;
    cnn_data *data;
    int in_blob, label_blob, loss_blob;
    bool train;
    int batch;
    size_t in_count;
    int in_size; /* the net's input height = width (crop = 0: the first record's) */
    float *labels; /* synthetic data: labels as floats for the net */
    /* loader path: each step launches its batch (written during the step
     * before, by dlg_net_write_async: on a GPU that copy overlapped the
     * previous step), then fetches and writes the next one */
    dlg_loader_alloc alloc;   /* the loader's buffers: dlg_net_host_alloc (pinned on cuda) */
    float *lab_async[2];      /* labels as floats, from dlg_net_host_alloc, used alternately */
    int lab_cur;
    bool primed;              /* the next step's batch is written */
    dlg_sgd sgd;
    double flops_per_item;
    uint64_t plan_bytes;
    dlg_peak peak;
    const char *backend;
    /* steps since setup; the timed ones: from begin_timed, never the
     * first after setup (it warms caches and the OpenMP team) */
    uint64_t steps, timed_steps, timed_ns; /* items: timed_steps x batch */
    bool profile; /* the net times its layers (dlg_plan_opts.profile) */
    float last[3]; /* loss, top1, top5 */
    nn_ranks ranks; /* data-parallel training across the run's ranks */
} cnn;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

bool cnn_use_aux(const dlg_host *h, const dlg_value *o)
{
    bool train = o[O_MODE].i == 0;
    if (o[O_AUX].i && !train)
        h->log(h, DLG_LOG_INFO,
               "aux = true: the auxiliary classifiers only train; infer runs the main network");
    return o[O_AUX].i && train;
}

static const char *cpu_backend(const dlg_value *o) { return o[O_BACKEND].i == 1 ? "ref" : "cpu"; }

/* precision = bf16 where the choice may be the CPU: the cpu-bf16
 * backend's own test.  Under device = auto a CPU that fails it sends the
 * check to the machine, as setup goes: a CUDA device takes the job.
 * Returns 1 when the machine was asked (*c: its choice), 0 when nothing
 * needed asking, or -DLG_E* with the line in err. */
static int check_cpu_bf16(const char *device, const char *precision, const char *cpu_name, bool any,
                          dlg_device_choice *c, char *err, size_t errlen)
{
    if (!precision || strcmp(precision, "bf16") != 0 || strcmp(cpu_name, "cpu") != 0 ||
        (!any && strcmp(c->backend, "cpu-bf16") != 0) || dlg_cpu_bf16_usable(err, errlen) == 0)
        return 0;
    int ndev = 0;
    if (any)
        dlg_cuda_device_count(&ndev, NULL, 0);
    if (ndev > 0) {
        int rc = dlg_device_select(device, precision, ndev, 0, cpu_name, c, err, errlen);
        return rc < 0 ? rc : 1;
    }
    if (any) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, " (device = auto found no CUDA device)");
    }
    return -DLG_ENOTSUP;
}

int nn_check_device(const dlg_host *h, const char *device, const char *precision, const char *cpu_name,
                    char *backend, size_t len)
{
    dlg_device_choice c;
    char err[320];
    bool any = !device || !*device || strcmp(device, "auto") == 0, asked = false;
    /* local rank 0: the check judges the kind of backend, not which GPU */
    int rc = dlg_device_select(device, precision, DLG_CUDA_MAX_DEVICES, 0, cpu_name, &c, err, sizeof err);
    if (rc == 0 && (rc = check_cpu_bf16(device, precision, cpu_name, any, &c, err, sizeof err)) > 0)
        asked = true, rc = 0;
    if (rc < 0)
        return h->error(h, -rc, "%s", err);
    snprintf(backend, len, "%s", any && !asked ? "" : c.backend);
    return 0;
}

/* device = auto | cpu | cuda[:N] and precision -> the engine backend
 * (core/nn/device.c decides; auto without a GPU says so once, and auto or
 * cuda on GPUs which one this rank took). */
static int choose_backend(const dlg_host *h, const dlg_value *o, const char **backend)
{
    char note[160], err[768];
    int rc = dlg_device_backend(o[O_DEVICE].text, o[O_PRECISION].text, dlg_host_local_rank(h), cpu_backend(o), backend,
                                note, sizeof note, err, sizeof err);
    if (rc < 0)
        return h->error(h, -rc, "%s", err);
    if (note[0])
        h->log(h, DLG_LOG_INFO, "%s", note);
    return 0;
}

/* The model's layers at the options' batch, classes and crop into a new
 * *net (shapes only: nothing is planned or allocated for data): the
 * engine refuses a crop its layers cannot take.  Returns the loss blob. */
static int build_net(const dlg_host *h, const char *model, const dlg_value *o, dlg_net **net,
                     int *in_size)
{
    int crop, classes = (int)o[O_CLASSES].i;
    *net = NULL;
    int rc = cnn_data_input_size(h, &o[O_LOADER], &crop); /* crop = 0: the records' size */
    if (rc < 0)
        return rc;
    *in_size = crop;
    if (dlg_net_create(net, model) < 0) {
        *net = NULL;
        return h->error(h, DLG_ENOMEM, "out of memory");
    }
    int loss = dlg_model_build_crop(*net, model, (int)o[O_BATCH].i, classes, crop);
    if (loss < 0 || dlg_net_status(*net) < 0) {
        int code = dlg_net_status(*net) == -DLG_ENOMEM ? DLG_ENOMEM : DLG_EINVAL; /* the cell's need, or a fault */
        return h->error(h, code, "%s at crop = %d%s: %s", model, crop,
                        o[O_LOADER + DLG_LOPT_CROP].i == 0 ? " (crop = 0: the first record's size)"
                                                          : "",
                        *dlg_net_error(*net) ? dlg_net_error(*net) : "unknown model");
    }
    return loss;
}

static int build(cnn *s, const char *model, const dlg_value *o)
{
    const dlg_host *h = s->h;
    int crop;
    if ((s->loss_blob = build_net(h, model, o, &s->net, &crop)) < 0)
        return s->loss_blob;
    s->in_blob = dlg_net_blob(s->net, "data");
    s->label_blob = dlg_net_blob(s->net, "label");
    s->in_size = crop;
    s->in_count = (size_t)s->batch * 3 * (size_t)crop * (size_t)crop;
    return 0;
}

int cnn_check(const char *model, const dlg_host *h, const dlg_value *o, const dlg_job_info *job)
{
    char backend[32];
    int rc = nn_check_device(h, o[O_DEVICE].text, o[O_PRECISION].text, cpu_backend(o), backend, sizeof backend);
    dlg_net *net = NULL;
    int crop;
    /* crop = 0 sizes the net from the first record, which setup reads: a
     * check reads no data (an earlier job may write it; a bad record fails
     * the cell that meets it, not the run: docs/architecture.md) */
    bool whole = o[O_LOADER + DLG_LOPT_CROP].i == 0;
    if (rc == 0 && !whole && (rc = build_net(h, model, o, &net, &crop)) > 0)
        rc = 0;
    dlg_net_destroy(net);
    if (rc < 0)
        return rc;
    dlg_loader_config lc;
    cnn_data_cfg dc = {&o[O_LOADER], job, o[O_MODE].i == 0, (int)o[O_BATCH].i, (int)o[O_CLASSES].i, NULL, 0, 0, 0};
    return cnn_data_check(h, &dc, &lc);
}

/* need: the floor before planning (at_least), the plan's own bytes after. */
static int check_memory(cnn *s, const char *model, const dlg_value *o, uint64_t need,
                        bool at_least)
{
    char what[160];
    snprintf(what, sizeof what, "batch = %d: %s %s", s->batch, model, o[O_MODE].text);
    return cnn_mem_check(s->h, need, at_least, what, "; lower batch");
}

static int plan(cnn *s, const dlg_value *o, const dlg_job_info *job)
{
    dlg_plan_opts po = {.backend = s->backend,
                        .threads = job && job->cpus > 0 ? job->cpus : 0,
                        .train = s->train,
                        .seed = job ? job->seed : 1};
    nn_opts_apply(&po, o, O_ALGO_CACHE, O_WORKSPACE, O_DETERMINISTIC, O_GRAPHS);
    nn_opts_cpu(&po, o, O_WINOGRAD);
    po.profile = s->profile;
    nn_opts_host(&po, s->h);
    if (dlg_net_plan(s->net, &po) < 0)
        return nn_plan_failed(s->h, s->net);
    /* the passes the plan runs: no data gradient into the images */
    s->flops_per_item = 2.0 * (double)dlg_net_step_macs(s->net);
    /* the device's own peak: a GPU's for the precision, else the cores' */
    dlg_peak_for_backend(&s->peak, s->backend, po.threads > 0 ? po.threads : 1);
    return 0;
}

/* The loader's batch buffers in the net's host memory (cuda: pinned, so
 * the input copies are DMA transfers that overlap the steps). */
static void *host_alloc(void *net, size_t bytes) { return dlg_net_host_alloc(net, bytes); }
static void host_free(void *net, void *p, size_t bytes) { dlg_net_host_free(net, p); }

/* Synthetic data never changes: write it into the net once, here. */
static int feed(cnn *s, const float *images, const int32_t *labels)
{
    for (int i = 0; i < s->batch; i++)
        s->labels[i] = (float)labels[i];
    int rc = dlg_net_write(s->net, s->in_blob, DLG_DATA, images, s->in_count);
    if (rc == 0)
        rc = dlg_net_write(s->net, s->label_blob, DLG_DATA, s->labels, (size_t)s->batch);
    return rc < 0 ? s->h->error(s->h, -rc, "%s", dlg_net_error(s->net)) : 0;
}

static int setup_all(cnn *s, const char *model, const dlg_value *o, const dlg_job_info *job)
{
    const dlg_host *h = s->h;
    int rc = choose_backend(h, o, &s->backend);
    if (rc < 0)
        return rc;
    s->profile = o[O_PROFILE].i != 0;
    s->train = o[O_MODE].i == 0;
    s->batch = (int)o[O_BATCH].i;
    s->sgd = (dlg_sgd){(float)o[O_LR].d, (float)o[O_MOMENTUM].d, (float)o[O_WEIGHT_DECAY].d};
    if ((rc = build(s, model, o)) < 0)
        return rc;
    if (!(s->labels = calloc((size_t)s->batch, sizeof(float))))
        return h->error(h, DLG_ENOMEM, "out of memory");
    /* before the data too: a synthetic batch alone can be gigabytes */
    const dlg_value *lo = &o[O_LOADER];
    size_t per_batch = s->in_count * sizeof(float);
    bool synthetic = strcmp(lo[DLG_LOPT_DATA].text, "synthetic") == 0;
    uint64_t data_bytes = synthetic ? per_batch : per_batch * (size_t)lo[DLG_LOPT_PREFETCH].i;
    if ((rc = check_memory(s, model, o, cnn_mem_floor_bytes(s->net, s->train) + data_bytes,
                           true)) < 0)
        return rc;
    if ((rc = plan(s, o, job)) < 0)
        return rc;
    /* planned but untouched: the exact figure, before any page is used */
    s->plan_bytes = dlg_net_memory_bytes(s->net);
    if ((rc = check_memory(s, model, o, s->plan_bytes + data_bytes, false)) < 0)
        return rc;
    if (s->train && (rc = nn_ranks_attach(&s->ranks, s->net)) < 0)
        return rc;
    s->alloc = (dlg_loader_alloc){host_alloc, host_free, s->net};
    cnn_data_cfg dc = {&o[O_LOADER], job, s->train, s->batch, (int)o[O_CLASSES].i, &s->alloc,
                       s->in_size, s->ranks.rank, s->ranks.size};
    if ((rc = cnn_data_open(&s->data, h, &dc)) < 0)
        return rc;
    for (int i = 0; !cnn_data_is_static(s->data) && i < 2; i++)
        if (!(s->lab_async[i] = dlg_net_host_alloc(s->net, (size_t)s->batch * sizeof(float))))
            return h->error(h, DLG_ENOMEM, "out of memory for the labels");
    if (cnn_data_is_static(s->data)) {
        const float *img;
        const int32_t *lab;
        uint64_t w, b;
        if ((rc = cnn_data_next(s->data, &img, &lab, &w, &b)) < 0)
            return rc;
        rc = feed(s, img, lab);
    }
    return rc;
}

int cnn_setup(const char *model, const dlg_host *h, const dlg_value *opts, const dlg_job_info *job,
              void **state)
{
    *state = NULL;
    cnn *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    nn_ranks_init(&s->ranks, h);
    int rc = setup_all(s, model, opts, job);
    if (rc < 0) {
        cnn_teardown(s);
        return rc;
    }
    *state = s;
    return 0;
}

/* After the step (and the next batch's fetch): the device timer (if any)
 * ends, the data wait on the device timeline replaces the loader's host
 * wait where the backend measures one, then the loss is read back. */
static int finish_step(cnn *s, bool timed, dlg_step *out)
{
    int rc = timed ? dlg_net_timer_end(s->net, &out->elapsed_ns) : 0;
    uint64_t stall;
    if (!rc && timed && dlg_net_input_stall(s->net, &stall) == 0)
        out->wait_ns = stall;
    if (!rc)
        rc = dlg_net_read(s->net, s->loss_blob, DLG_DATA, s->last, 3);
    if (rc < 0)
        return s->h->error(s->h, -rc, "%s", dlg_net_error(s->net));
    if (s->train && !isfinite(s->last[0]))
        return s->h->error(s->h, DLG_EINVAL, "training diverged: loss is %g at step %llu (lower lr)",
                           (double)s->last[0], (unsigned long long)s->steps + 1);
    return 0;
}

/* Fetches the next batch from the loader and writes it for the next step
 * without waiting for the copy: the image memory is the loader's (the
 * net's host memory), the labels go through one of two buffers of ours.
 * The batch stays held until the step that reads it has started. */
static int write_next(cnn *s, dlg_step *out)
{
    const float *img;
    const int32_t *lab;
    uint64_t wait, bytes;
    int rc = cnn_data_next(s->data, &img, &lab, &wait, &bytes);
    if (rc < 0)
        return rc;
    out->wait_ns += wait;
    out->bytes_read += bytes;
    float *l = s->lab_async[s->lab_cur ^= 1];
    for (int i = 0; i < s->batch; i++)
        l[i] = (float)lab[i];
    if ((rc = dlg_net_write_async(s->net, s->in_blob, img, s->in_count)) == 0)
        rc = dlg_net_write_async(s->net, s->label_blob, l, (size_t)s->batch);
    if (rc < 0) /* its code: out of (GPU) memory is the cell's need, not a fault */
        return s->h->error(s->h, -rc, "%s", dlg_net_error(s->net));
    s->primed = true;
    return 0;
}

/* After the step is launched: its batch's copies have been waited for on
 * the device; once they have read the host memory, the batch goes back to
 * the loader, and the next one is fetched and written (on a GPU while this
 * step computes). */
static int prefetch(cnn *s, dlg_step *out)
{
    int rc = dlg_net_write_wait(s->net);
    if (rc < 0)
        return s->h->error(s->h, -rc, "%s", dlg_net_error(s->net));
    cnn_data_release(s->data);
    s->primed = false;
    return write_next(s, out);
}

int cnn_step(void *state, dlg_step *out)
{
    cnn *s = state;
    uint64_t t0 = now_ns();
    bool loader = !cnn_data_is_static(s->data);
    /* on a GPU the step is timed by CUDA events from here, input included
     * (-DLG_ENOTSUP on the cpu: the runner's host clock times it) */
    int trc = dlg_net_timer_begin(s->net);
    if (trc < 0 && trc != -DLG_ENOTSUP)
        return s->h->error(s->h, -trc, "%s", dlg_net_error(s->net));
    int rc;
    if (s->train && (rc = nn_ranks_start(&s->ranks, s->net)) < 0) /* the first step: untimed by default (warmup) */
        return rc;
    if (loader && !s->primed && (rc = write_next(s, out)) < 0) /* the first step */
        return rc;
    rc = s->train ? dlg_net_train_step(s->net, &s->sgd) : dlg_net_infer_step(s->net);
    if (rc < 0)
        return s->h->error(s->h, -rc, "%s", dlg_net_error(s->net));
    if (loader && (rc = prefetch(s, out)) < 0)
        return rc;
    if ((rc = finish_step(s, trc == 0, out)) < 0)
        return rc;
    uint64_t t1 = now_ns();
    if (s->steps++ > 0) { /* the first step warms caches and the OpenMP team */
        s->timed_ns += out->elapsed_ns ? out->elapsed_ns : t1 - t0;
        s->timed_steps++;
    } else if (s->profile)
        dlg_net_layer_time_reset(s->net);
    out->items = (uint64_t)s->batch;
    return 0;
}

/* The warm-up steps leave the figures: they restart here (the first
 * step after setup, if this is it, is still left out by cnn_step). */
int cnn_begin_timed(void *state)
{
    cnn *s = state;
    if (s->steps == 0)
        return 0;
    s->timed_steps = s->timed_ns = 0;
    if (s->profile)
        dlg_net_layer_time_reset(s->net);
    return 0;
}

static const char *dnnl_isa_name(void)
{
#ifdef DLG_CAFFE_HAVE_DNNL
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    default: return "other";
    }
#else
    return "none";
#endif
}

/* Layers whose kernel names a Winograd formulation (dlg_net_layer_impl). */
static int64_t winograd_layers(const dlg_net *net)
{
    int64_t n = 0;
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        const char *impl = dlg_net_layer_impl(net, i);
        n += impl && strstr(impl, "wino");
    }
    return n;
}

int cnn_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    cnn *s = state;
    int rc = s->train ? nn_ranks_check(&s->ranks, s->net, s->steps) : 0; /* untimed */
    if (rc < 0)
        return rc;
    /* the job's: the ranks' last batches averaged, their items over the slowest one's time */
    double sum[] = {s->last[0], s->last[1], s->last[2], (double)(s->timed_steps * (uint64_t)s->batch),
                    s->peak.flops, s->peak.flops > 0};
    double slowest = (double)s->timed_ns, n = s->ranks.size;
    if ((rc = nn_ranks_job(&s->ranks, sum, sizeof sum / sizeof *sum, &slowest)) < 0)
        return rc;
    api->add_double(f, "loss", sum[0] / n);
    api->add_double(f, "top1", sum[1] / n);
    api->add_double(f, "top5", sum[2] / n);
    nn_ranks_peak_report(&s->ranks, &s->peak, s->flops_per_item, sum[3], sum[4], sum[5], slowest, api, f);
    api->add_int(f, "params", dlg_net_param_total(s->net));
    api->add_int(f, "plan_bytes", (int64_t)s->plan_bytes);
    api->add_string(f, "backend", s->backend);
    bool onednn = strcmp(s->backend, "cpu") == 0 || strcmp(s->backend, "cpu-bf16") == 0;
    api->add_string(f, "dnnl_isa", onednn ? dnnl_isa_name() : "none");
    api->add_int(f, "winograd_layers", winograd_layers(s->net));
    api->add_string(f, "data_source", cnn_data_source(s->data));
    if (s->profile) /* nor are the warm-up steps */
        nn_profile_report(s->net, s->timed_steps, s->h, api, f);
    nn_loss_scale_report(s->net, api, f);
    return 0;
}

void cnn_teardown(void *state)
{
    cnn *s = state;
    if (!s)
        return;
    if (s->net && s->primed) /* no copy may read the loader's memory once it is freed */
        dlg_net_write_wait(s->net);
    cnn_data_close(s->data);
    for (int i = 0; i < 2; i++)
        if (s->net)
            dlg_net_host_free(s->net, s->lab_async[i]);
    dlg_net_destroy(s->net);
    nn_ranks_free(&s->ranks);
    free(s->labels);
    free(s);
}
