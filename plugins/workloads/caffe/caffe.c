/* caffe.so: the Caffe-era CNNs as workloads, train or infer, on the nn
 * engine.  One option table per crop default (AlexNet's 227, 224 else). */
#include "cnn.h"

#define CNN_OPTIONS                                                                                \
    [O_MODE] = {"mode", DLG_OPT_ENUM, "train", NULL, NULL, "train|infer",                          \
                "train: forward + backward + SGD per batch; infer: forward", 0},                   \
    [O_BATCH] = {"batch", DLG_OPT_INT, "32", "1", "65536", NULL,                                   \
                 "images per step (per rank: ranks x batch in all)", 0},                           \
    [O_CLASSES] = {"classes", DLG_OPT_INT, "1000", "2", "1000000", NULL,                           \
                   "outputs of the classifier (must match the dataset's labels)", 0},              \
    [O_LR] = {"lr", DLG_OPT_DOUBLE, "0.01", "0", "100", NULL,                                      \
              "SGD learning rate (biases take 2x, Caffe's lr_mult 2, in every model here)", 0},     \
    [O_MOMENTUM] = {"momentum", DLG_OPT_DOUBLE, "0.9", "0", "1", NULL, "SGD momentum", 0},         \
    [O_WEIGHT_DECAY] = {"weight_decay", DLG_OPT_DOUBLE, "0.0005", "0", "1", NULL,                  \
                        "L2 weight decay (Caffe's decay_mult: weights only, not biases nor batch "  \
                        "norm's scale and shift; PyTorch's SGD decays them all)", 0},               \
    [O_BACKEND] = {"backend", DLG_OPT_ENUM, "cpu", NULL, NULL, "cpu|ref",                          \
                   "cpu: oneDNN; ref: plain-C reference kernels (slow, for checking)", 0},         \
    [O_DEVICE] = {"device", DLG_OPT_STRING, "auto", NULL, NULL, NULL,                              \
                  "auto | cpu | cuda | cuda:N (auto: a CUDA device if there is one, else the CPU; "  \
                  "auto and cuda take GPU (local rank mod the GPUs): one GPU per rank of the node)", 0}, \
    [O_PRECISION] = {"precision", DLG_OPT_ENUM, "fp32", NULL, NULL, "fp32|tf32|fp16|bf16",         \
                     "arithmetic precision (cpu: fp32, or bf16 on AVX-512; ref: fp32)", 0},            \
    CNN_CUDA_OPTION(O_ALGO_CACHE, O_WORKSPACE, O_DETERMINISTIC, O_GRAPHS),                         \
    CNN_CPU_OPTION(O_WINOGRAD),                                                                    \
    CNN_PROFILE_OPTION(O_PROFILE),                                                                 \
    [O_LOADER] = DLG_LOADER_OPTIONS

static const dlg_option opts224[] = {CNN_OPTIONS, [O_COUNT] = {0}};

static const dlg_option opts_googlenet[] = {
    CNN_OPTIONS,
    [O_AUX] = {"aux", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
               "train: add the auxiliary classifiers loss1 and loss2 (after inception_4a and "
               "4d, losses weighted 0.3), as bvlc_googlenet's train_val; the reported loss is "
               "the main head's; infer runs without them", 0},
    [O_AUX_END] = {0}};

/* The fragment's crop default is 224; AlexNet's own is 227.  Overriding one
 * initializer of the fragment is the point here, hence the pragma. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
static const dlg_option opts227[] = {
    CNN_OPTIONS,
    [O_LOADER + DLG_LOPT_CROP] = {"crop", DLG_OPT_INT, "227", "0", "4096", NULL,
                                  "network input size (BVLC AlexNet: 227), at least 8; 0 "
                                  "(transform caffe, Caffe's crop_size 0): no crop, the images "
                                  "whole at their stored size (the first record's)", 0},
    [O_COUNT] = {0}};
#pragma GCC diagnostic pop

/* NAME##_model(h, o) names the model the options ask for */
#define CNN_MODEL(NAME, OPTS, SUMMARY)                                                             \
    static int NAME##_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j,          \
                            void **st)                                                              \
    {                                                                                              \
        return cnn_setup(NAME##_model(h, o), h, o, j, st);                                         \
    }                                                                                              \
    static int NAME##_check(const dlg_host *h, const dlg_value *o, const dlg_job_info *j)          \
    {                                                                                              \
        return cnn_check(NAME##_model(h, o), h, o, j);                                             \
    }                                                                                              \
    static const dlg_workload_ops NAME##_ops = {3,            "images",        NAME##_setup,       \
                                                cnn_step,     cnn_report,      cnn_teardown,       \
                                                cnn_begin_timed, NAME##_check};                    \
    static const dlg_plugin_desc NAME##_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, #NAME, \
                                                "1.0", SUMMARY, OPTS, cnn_metrics, &NAME##_ops};

static const char *alexnet_model(const dlg_host *h, const dlg_value *o) { return "alexnet"; }
static const char *resnet50_model(const dlg_host *h, const dlg_value *o) { return "resnet50"; }
static const char *vgg16_model(const dlg_host *h, const dlg_value *o) { return "vgg16"; }
static const char *googlenet_model(const dlg_host *h, const dlg_value *o)
{
    return cnn_use_aux(h, o) ? "googlenet-aux" : "googlenet";
}

CNN_MODEL(alexnet, opts227, "BVLC AlexNet (grouped conv2/4/5, LRN, 227 crop), train or infer")
CNN_MODEL(googlenet, opts_googlenet,
          "BVLC GoogLeNet (LRN; main classifier, aux = true: the two auxiliary ones too), train or "
          "infer")
CNN_MODEL(resnet50, opts224, "ResNet-50 v1.5 with batch norm, train or infer")
CNN_MODEL(vgg16, opts224, "VGG16, train or infer")

DLG_PLUGIN("caffe", &alexnet_desc, &googlenet_desc, &resnet50_desc, &vgg16_desc)
