/* The engine's backend options as job options, for every workload that
 * plans a net (caffe's CNNs, inception-v3, lstm-ptb), and how they reach
 * dlg_plan_opts; and the loss-scaling result fields these workloads share. */
#ifndef DLG_CAFFE_NN_OPTS_H
#define DLG_CAFFE_NN_OPTS_H

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include "loader.h" /* dlg_host_stop_asked */

/* A CPU cell ignores them without an error: a sweep
 * over device = cpu, cuda:0 gives both cells the same options, and none
 * changes a CPU result (no algorithm search, no workspace limit, no
 * graphs; repeatable for a given thread count, its one timed choice being
 * kept in the host's tuning record, core/nn/tune.h). */
#define CNN_CUDA_OPTION(ALGO, WS, DET, GRAPHS)                                                     \
    [ALGO] = {"algo_cache", DLG_OPT_STRING, NULL, NULL, NULL, NULL,                                \
              "cuda: file keeping the measured convolution algorithms between runs (read at "      \
              "setup, rewritten at the end); ignored on the cpu",                                  \
              DLG_OPT_NOSWEEP | DLG_OPT_PATH_OUT},                                                 \
    [WS] = {"workspace", DLG_OPT_SIZE, "0", "0", NULL, NULL,                                       \
            "cuda: cuDNN workspace limit per layer, e.g. 512MiB (0: a quarter of the free GPU "    \
            "memory, at most 16GiB); ignored on the cpu",                                          \
            0},                                                                                    \
    [DET] = {"deterministic", DLG_OPT_BOOL, "false", NULL, NULL, NULL,                             \
             "cuda: only deterministic convolution algorithms (run-to-run identical, maybe "       \
             "slower); ignored on the cpu, whose results repeat for the same threads and kernels " \
             "(oneDNN's are run-to-run identical there, and each 3x3 layer's Winograd or direct "  \
             "kernel, timed once per host, is kept in its tuning record, $DLGAUGE_TUNE; "          \
             "DLGAUGE_TUNE=off times it in every cell, and then kernels may differ)",             \
             0},                                                                                   \
    [GRAPHS] = {"graphs", DLG_OPT_BOOL, NULL, NULL, NULL, NULL,                                    \
                "cuda: capture a step as a CUDA graph after 2 eager steps and replay it (unset: "  \
                "where the net allows; true: also say why not; false: eager); ignored on the cpu", \
                0}

/* The cpu backend's one choice; a CUDA cell ignores it (cuDNN picks its
 * algorithms by measurement). */
#define CNN_CPU_OPTION(WINO)                                                                       \
    [WINO] = {"winograd", DLG_OPT_BOOL, "true", NULL, NULL, NULL,                                  \
              "cpu: stride-1 3x3 convolutions by Winograd F(4x4,3x3), 1x7/7x1 by F(3,7), "          \
              "1x3/3x1 by F(4,3), and stride-2 3x3 filter gradients by im2col + sgemm, on AVX2 "    \
              "(the engine's kernels where they beat oneDNN's); on AVX-512 3x3 layers by "          \
              "oneDNN's Winograd where it timed faster, once per host, thread count and layer "    \
              "shape (kept in the host's tuning record, $DLGAUGE_TUNE; delete it to time again) "   \
              "(false: oneDNN's direct kernels for all, for comparison)",                           \
              0}

/* Per-layer times (dlg_plan_opts.profile). */
#define CNN_PROFILE_OPTION(PROF)                                                                   \
    [PROF] = {"profile", DLG_OPT_BOOL, "false", NULL, NULL, NULL,                                  \
              "time every layer over the steps after the first: the result's layer_profile "      \
              "gives the heaviest layer kinds, the log the slowest layers (on CUDA by events on "  \
              "the GPU's timeline between the layers, and the steps run eagerly, not as CUDA "     \
              "graphs)",                                                                           \
              0}

static inline void nn_opts_cpu(dlg_plan_opts *po, const dlg_value *o, int wino)
{
    po->direct_conv = o[wino].i == 0;
}

/* Copies the four options (their indices in the job's values) into po. */
static inline void nn_opts_apply(dlg_plan_opts *po, const dlg_value *o, int algo, int ws,
                                 int det, int graphs)
{
    po->algo_cache = o[algo].set && o[algo].text[0] ? o[algo].text : NULL;
    po->workspace_bytes = (uint64_t)o[ws].i;
    po->deterministic = o[det].i != 0;
    po->graphs = !o[graphs].set ? DLG_GRAPHS_AUTO : o[graphs].i ? DLG_GRAPHS_ON : DLG_GRAPHS_OFF;
}

/* A line of the plan's (dlg_plan_opts.note) as the host's INFO. */
static inline void nn_note(void *host, const char *line)
{
    const dlg_host *h = host;
    h->log(h, DLG_LOG_INFO, "%s", line);
}

/* The host's stopping() as the plan's stop request (dlg_plan_opts.stop):
 * a Ctrl-C during a large net's setup ends it in moments, not seconds;
 * and its log for what the plan tells (nn_note). */
static inline void nn_opts_host(dlg_plan_opts *po, const dlg_host *h)
{
    po->stop = dlg_host_stop_asked;
    po->stop_ctx = (void *)h;
    po->note = nn_note;
    po->note_ctx = (void *)h;
}

/* A failed dlg_net_plan as setup returns it: a stop, asked by the host,
 * bare (no failure: the runner writes the cell as stopped), else the
 * engine's line as the error. */
static inline int nn_plan_failed(const dlg_host *h, const dlg_net *net)
{
    int code = -dlg_net_status(net);
    return code == DLG_ESTOP ? -DLG_ESTOP : h->error(h, code, "%s", dlg_net_error(net));
}

/* Dynamic loss scaling's result fields (fp16 training: precision = fp16 on
 * cuda), as a workload's field table lists them. */
#define NN_LOSS_SCALE_FIELDS                                                                       \
    {"loss_scale", DLG_FIELD_DOUBLE, "",                                                           \
     "fp16 training only: the dynamic loss scale at the end (starts at 65536)"},                   \
        {"skipped_steps", DLG_FIELD_INT, "",                                                       \
         "fp16 training only: SGD steps skipped because a gradient overflowed"}

/* loss_scale and skipped_steps where the plan scales its loss (waits for
 * the device: call it once the run is over). */
static inline void nn_loss_scale_report(dlg_net *net, const dlg_report_api *api, dlg_fields *f)
{
    float scale;
    int64_t skipped;
    if (dlg_net_loss_scale(net, &scale, &skipped) > 0) {
        api->add_double(f, "loss_scale", scale);
        api->add_int(f, "skipped_steps", skipped);
    }
}

#endif
