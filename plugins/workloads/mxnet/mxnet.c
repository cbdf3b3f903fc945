/* mxnet.so: the MXNet workloads of the study on the nn engine.
 *  - inception-v3: torchvision's Inception-v3 at 299x299, train or infer,
 *    reading MXNet RecordIO through the input pipeline (or synthetic data).
 *    It shares the caffe workloads' setup/step/report (plugins/workloads/
 *    caffe/cnn.c, compiled into this module), so its options and result
 *    fields are theirs, plus `aux`.
 *  - lstm-ptb: the PTB word language model (lm.c). */
#include "cnn.h"
#include "img_check.h"
#include "lm.h"

/* The loader fragment's crop default is 224; Inception-v3's is 299:
 * overriding one initializer of the fragment is the point, hence the
 * pragma. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
static const dlg_option inception_options[] = {
    [O_MODE] = {"mode", DLG_OPT_ENUM, "train", NULL, NULL, "train|infer",
                "train: forward + backward + SGD per batch; infer: forward", 0},
    [O_BATCH] = {"batch", DLG_OPT_INT, "32", "1", "65536", NULL, "images per step (per rank: ranks x batch in all)",
                 0},
    [O_CLASSES] = {"classes", DLG_OPT_INT, "1000", "2", "1000000", NULL,
                   "outputs of the classifier (must match the dataset's labels)", 0},
    [O_LR] = {"lr", DLG_OPT_DOUBLE, "0.1", "0", "100", NULL,
              "SGD learning rate (MXNet's train_imagenet default, for batches of 128 and more: "
              "smaller batches may diverge at it, scale it by batch / 128; the classifiers' biases "
              "take 2x, as Caffe's lr_mult)",
              0},
    [O_MOMENTUM] = {"momentum", DLG_OPT_DOUBLE, "0.9", "0", "1", NULL, "SGD momentum", 0},
    [O_WEIGHT_DECAY] = {"weight_decay", DLG_OPT_DOUBLE, "0.0001", "0", "1", NULL,
                        "L2 weight decay (MXNet's train_imagenet default): weights only, not the "
                        "classifiers' biases nor batch norm's scale and shift",
                        0},
    [O_BACKEND] = {"backend", DLG_OPT_ENUM, "cpu", NULL, NULL, "cpu|ref",
                   "cpu: oneDNN; ref: plain-C reference kernels (slow, for checking)", 0},
    [O_DEVICE] = {"device", DLG_OPT_STRING, "auto", NULL, NULL, NULL,
                  "auto | cpu | cuda | cuda:N (auto: a CUDA device if there is one, else the CPU; "
                  "auto and cuda take GPU (local rank mod the GPUs): one GPU per rank of the node)", 0},
    [O_PRECISION] = {"precision", DLG_OPT_ENUM, "fp32", NULL, NULL, "fp32|tf32|fp16|bf16",
                     "arithmetic precision (cpu: fp32, or bf16 on AVX-512; ref: fp32)", 0},
    CNN_CUDA_OPTION(O_ALGO_CACHE, O_WORKSPACE, O_DETERMINISTIC, O_GRAPHS),
    CNN_CPU_OPTION(O_WINOGRAD),
    CNN_PROFILE_OPTION(O_PROFILE),
    [O_LOADER] = DLG_LOADER_OPTIONS,
    [O_LOADER + DLG_LOPT_CROP] = {"crop", DLG_OPT_INT, "299", "75", "4096", NULL,
                                  "network input size (Inception-v3: 299); torchvision's network "
                                  "at any crop from 75 (aux = true: from 299)", 0},
    [O_AUX] = {"aux", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
               "train: add the auxiliary classifier after Mixed_6e, trained through its own "
               "softmax loss weighted 0.4 (torchvision's reference recipe; the reported loss is "
               "the main head's); infer runs without it, as torchvision's eval mode", 0},
    [O_AUX_END] = {0}};
#pragma GCC diagnostic pop

/* The aux head's crop floor; *aux: whether the head is built (training). */
static int check_aux(const dlg_host *h, const dlg_value *o, bool *aux)
{
    *aux = cnn_use_aux(h, o); /* torchvision's eval mode skips the head too */
    if (*aux && o[O_LOADER + DLG_LOPT_CROP].i < DLG_INCEPTION_AUX_MIN_CROP)
        return h->error(h, DLG_EINVAL,
                        "aux = true needs crop >= %d (the auxiliary head's 5x5 convolution "
                        "does not fit a smaller grid); crop = %lld",
                        DLG_INCEPTION_AUX_MIN_CROP, (long long)o[O_LOADER + DLG_LOPT_CROP].i);
    return 0;
}

static int inception_check(const dlg_host *h, const dlg_value *o, const dlg_job_info *job)
{
    bool aux;
    int rc = check_aux(h, o, &aux);
    return rc < 0 ? rc : cnn_check(aux ? "inception-v3-aux" : "inception-v3", h, o, job);
}

/* The side below which a stored image can never be used, 0 when the
 * stored size does not decide: the crop under transform = caffe (auto
 * included when it resolves to caffe), which crops the image as stored;
 * torchvision resizes it first; mxnet enlarges an image smaller than the
 * crop (MXNet 1.3+) and refuses only one smaller than min/max_crop_size's
 * window (train) when nothing resizes, pads or enlarges it first (the
 * loader names any image that still ends up too small).  Returns the side
 * or -code (bad loader options, said). */
static int stored_min_side(const dlg_host *h, const dlg_value *o, const dlg_job_info *job, const char **name)
{
    const dlg_value *lo = &o[O_LOADER];
    *name = "crop";
    if (lo[DLG_LOPT_TRANSFORM].i != DLG_TRANSFORM_MXNET) {
        dlg_loader_config cfg;
        dlg_loader_config_defaults(&cfg);
        int rc = dlg_loader_config_from_opts(&cfg, lo, job, o[O_MODE].i == 0, h); /* resolves auto */
        if (rc < 0)
            return rc;
        return cfg.transform == DLG_TRANSFORM_CAFFE ? cfg.crop : 0;
    }
    *name = "max_crop_size";
    bool fixed = lo[DLG_LOPT_RESIZE].i == 0 && lo[DLG_LOPT_PAD].i == 0 &&
                 lo[DLG_LOPT_MAX_RANDOM_SCALE].d <= 1 && !lo[DLG_LOPT_RANDOM_RESIZED_CROP].i &&
                 lo[DLG_LOPT_MIN_IMG_SIZE].d == 0;
    return fixed && o[O_MODE].i == 0 && lo[DLG_LOPT_MAX_CROP_SIZE].i > 0
               ? (int)lo[DLG_LOPT_MAX_CROP_SIZE].i
               : 0;
}

static int inception_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *job,
                           void **state)
{
    *state = NULL;
    bool aux;
    int rc = check_aux(h, o, &aux);
    if (rc < 0)
        return rc;
    const char *name;
    int side = stored_min_side(h, o, job, &name);
    if (side < 0)
        return side;
    if (side > 0)
        rc = img_check_recordio(h, o[O_LOADER + DLG_LOPT_DATA].text, side, name, 16);
    if (rc < 0)
        return rc;
    return cnn_setup(aux ? "inception-v3-aux" : "inception-v3", h, o, job, state);
}

static const dlg_workload_ops inception_ops = {.version = 3,
                                               .unit = "images",
                                               .setup = inception_setup,
                                               .step = cnn_step,
                                               .report = cnn_report,
                                               .teardown = cnn_teardown,
                                               .begin_timed = cnn_begin_timed,
                                               .check = inception_check};

static const dlg_plugin_desc inception_desc = {
    sizeof(dlg_plugin_desc),
    DLG_KIND_WORKLOAD,
    "inception-v3",
    "1.0",
    "Inception-v3 (torchvision, 299 crop, batch norm), train or infer on RecordIO or synthetic",
    inception_options,
    cnn_metrics,
    &inception_ops};

static const dlg_workload_ops lm_ops = {.version = 3,
                                        .unit = "tokens",
                                        .setup = lm_setup,
                                        .step = lm_step,
                                        .report = lm_report,
                                        .teardown = lm_teardown,
                                        .begin_timed = lm_begin_timed,
                                        .check = lm_check};

static const dlg_plugin_desc lm_desc = {
    sizeof(dlg_plugin_desc),
    DLG_KIND_WORKLOAD,
    "lstm-ptb",
    "1.0",
    "word-level LSTM language model on PTB-format text (tokens/s, perplexity), train or infer",
    lm_options,
    lm_metrics,
    &lm_ops};

DLG_PLUGIN("mxnet", &inception_desc, &lm_desc)
