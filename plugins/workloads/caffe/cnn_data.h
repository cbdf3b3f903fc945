/* Where the caffe workloads' batches come from: random tensors made once
 * in setup (data = synthetic, as tf_cnn_benchmarks' synthetic mode: no I/O,
 * no decode) or the input pipeline (recordio:, lmdb:, files:, synthetic:N).
 * Kept apart from the net code: this file sees only the loader. */
#ifndef DLG_CAFFE_CNN_DATA_H
#define DLG_CAFFE_CNN_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlgauge/plugin.h>

#include "loader.h"

typedef struct cnn_data cnn_data;

typedef struct cnn_data_cfg {
    const dlg_value *loader_opts; /* the DLG_LOADER_OPTIONS fragment's values */
    const dlg_job_info *job;
    bool train;
    int batch, classes;
    /* the loader's batch buffers (e.g. the net's pinned host memory, so
     * that batches are decoded straight into what the GPU copies from);
     * NULL: aligned malloc */
    const dlg_loader_alloc *alloc;
    /* the net's input size, which the loader's batches must have (crop = 0
     * reads the first record twice: for the net, then at open); 0: unchecked */
    int input_size;
    /* the run's ranks: this rank reads its shard (the loader's part of
     * parts) and makes synthetic data of its own; 0, 0: alone */
    int part, parts;
} cnn_data_cfg;

/* The data options' rules without opening anything (mean/std text, mean
 * with mean_file, mean_file's pixel_range and resize; a loader's batches
 * must be nchw fp32 and decoded): lc gets the loader's configuration.
 * The workloads' check applies it, and cnn_data_open does first. */
int cnn_data_check(const dlg_host *h, const cnn_data_cfg *cfg, dlg_loader_config *lc);
/* The network's input size: crop, or with crop = 0 (Caffe's crop_size 0)
 * the size of the dataset's first record (dlg_loader_input_size). */
int cnn_data_input_size(const dlg_host *h, const dlg_value *loader_opts, int *size);
/* Validates the data options; opens the loader unless data = synthetic. */
int cnn_data_open(cnn_data **out, const dlg_host *h, const cnn_data_cfg *cfg);
/* true: the batch never changes (write it into the net once). */
bool cnn_data_is_static(const cnn_data *d);
/* Bytes the data side holds (loader ring or the static batch). */
size_t cnn_data_bytes(const cnn_data *d);
/* The next batch: NCHW fp32 images and int labels, valid until
 * cnn_data_release.  Checks every label against classes. */
int cnn_data_next(cnn_data *d, const float **images, const int32_t **labels, uint64_t *wait_ns,
                  uint64_t *bytes_read);
void cnn_data_release(cnn_data *d);
/* "synthetic" or the loader's source name ("recordio", ...). */
const char *cnn_data_source(const cnn_data *d);
void cnn_data_close(cnn_data *d);

#endif
