/* One loader worker's reusable scratch and the per-image work: header,
 * window, (scaled) decode, resample, normalise, store. */
#ifndef DLG_LOADER_WORK_H
#define DLG_LOADER_WORK_H

#include "jpeg.h"
#include "loader_affine.h"
#include "loader_image.h"
#include "loader_src.h"

typedef struct dlg_ld_scratch {
    dlg_jpeg *jpeg;
    uint8_t *rgb;  /* decoded image, packed RGB */
    size_t rgb_cap;
    float *tmp;    /* rows after the horizontal pass */
    size_t tmp_cap;
    float *hwc;    /* crop x crop x 3 */
    int *first, *count; /* 2 * crop each: x taps then y taps */
    float *w;      /* taps weights, x then y */
    size_t w_cap;
    uint8_t *aug[4]; /* transform = mxnet: resized, warped, padded, resized crop */
    size_t aug_cap[4];
} dlg_ld_scratch;

/* Grows *p to hold need elements of elem bytes (contents not kept). */
int dlg_ld_grow(void **p, size_t *cap, size_t need, size_t elem, dlg_data_err *err);

/* Decodes (or converts) the whole record at full size into sc->rgb, packed
 * RGB of *w x *h. */
int dlg_ld_decode_full(dlg_ld_scratch *sc, const dlg_ld_item *it, int *w, int *h,
                       dlg_data_err *err);

/* transform = mxnet (loader_mxnet.c): MXNet's default augmenter. */
int dlg_ld_process_mxnet(const dlg_loader_config *cfg, dlg_ld_scratch *sc, const dlg_ld_item *it,
                         uint64_t epoch, uint64_t pos, void *batch, int index, dlg_data_err *err);
/* MXNet 1.3+'s enlargement of an image smaller than the crop (its
 * !is_cropped path): *img resized until both sides reach cfg->crop, into
 * sc's stage buffers. */
int dlg_ld_mx_enlarge(const dlg_loader_config *cfg, dlg_ld_scratch *sc, uint64_t key,
                      dlg_rgb8 *img, const char *what, dlg_data_err *err);

int dlg_ld_scratch_init(dlg_ld_scratch *sc, int crop, dlg_data_err *err);
void dlg_ld_scratch_free(dlg_ld_scratch *sc);

/* Turns record `it` (stream item epoch/pos) into image `index` of batch;
 * mean is cfg->mean_file's image (NULL without one). */
int dlg_ld_process(const dlg_loader_config *cfg, const dlg_mean_image *mean, dlg_ld_scratch *sc,
                   const dlg_ld_item *it, uint64_t epoch, uint64_t pos, void *batch, int index,
                   dlg_data_err *err);

#endif
