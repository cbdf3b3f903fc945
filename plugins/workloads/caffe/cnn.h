/* The caffe workloads (alexnet, googlenet, resnet50, vgg16): one option
 * table layout and one set of ops; the descriptor's name picks the model. */
#ifndef DLG_CAFFE_CNN_H
#define DLG_CAFFE_CNN_H

#include <dlgauge/plugin.h>

#include "loader.h"
#include "nn_opts.h"

/* Option indices; the loader's fragment (data, crop, ...) sits at O_LOADER. */
enum cnn_opt {
    O_MODE = 0,
    O_BATCH,
    O_CLASSES,
    O_LR,
    O_MOMENTUM,
    O_WEIGHT_DECAY,
    O_BACKEND,
    O_DEVICE,
    O_PRECISION,
    O_ALGO_CACHE,
    O_WORKSPACE,
    O_DETERMINISTIC,
    O_GRAPHS,
    O_WINOGRAD,
    O_PROFILE,
    O_LOADER,
    O_COUNT = O_LOADER + DLG_LOPT_COUNT
};

/* googlenet's and inception-v3's `aux` option, after the common ones */
enum { O_AUX = O_COUNT, O_AUX_END };

extern const dlg_metric cnn_metrics[];

/* aux = true builds the auxiliary classifiers for training only; infer
 * runs the main network, as the frameworks' eval modes do (logged). */
bool cnn_use_aux(const dlg_host *h, const dlg_value *opts);

/* Setup for model `model` ("alexnet", ...). */
int cnn_setup(const char *model, const dlg_host *h, const dlg_value *opts, const dlg_job_info *job,
              void **state);
/* device and precision judged as dlg_device_backend judges them at setup
 * (by dlg_device_select), for a check (ops version 3): cuda:N is taken to
 * exist, and device = auto to find one, without counting devices, except
 * for precision = bf16 on a CPU that cannot run it (dlg_cpu_bf16_usable).
 * backend[] gets the backend's name ("cuda-fp16:0", "cpu"), or "" for
 * device = auto when only the machine decides. */
int nn_check_device(const dlg_host *h, const char *device, const char *precision, const char *cpu_name,
                    char *backend, size_t len);
/* The workloads' check (ops version 3): the rules setup applies with the
 * same functions (device and precision, profile on the backend, the model
 * at this crop, the data options), without a device, memory or a file. */
int cnn_check(const char *model, const dlg_host *h, const dlg_value *opts, const dlg_job_info *job);
int cnn_step(void *state, dlg_step *out);
/* workload ops version 2: called after the warm-up steps */
int cnn_begin_timed(void *state);
int cnn_report(void *state, const dlg_report_api *api, dlg_fields *f);
void cnn_teardown(void *state);

#endif
