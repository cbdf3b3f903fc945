/* Helpers for the pipeline tests: small generated datasets on disk, a
 * mock host with real storage plugins, and an independent reference of the
 * loader's crop/resize/normalise written out in plain double arithmetic. */
#ifndef PIPE_UTIL_H
#define PIPE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader.h"
#include "mock_host.h"

/* A fresh folder under the build tree (tmpfs may refuse O_DIRECT). */
void pu_tmpdir(char *out, size_t cap, const char *tag);

typedef struct pu_dataset {
    char dir[512];
    char list[600];   /* dir/list.txt: convert_imageset list */
    char rec[600];    /* dir/data.rec (+ data.idx) once pu_make_rec ran */
    int n;
    char paths[64][600]; /* absolute paths of the images */
    int labels[64];
    int w[64], h[64];
} pu_dataset;

/* n (<= 64) JPEG images of about w x h (sizes vary a little), classes c. */
void pu_make_images(pu_dataset *d, const char *tag, int n, int classes, int w, int h,
                    uint64_t seed);
/* Packs the images into dir/data.rec and dir/data.idx (im2rec records). */
void pu_make_rec(pu_dataset *d);
/* Reads a whole file (malloc'd). */
uint8_t *pu_slurp(const char *path, size_t *len);
/* Writes packed RGB w x h as a quality-95 JPEG at path. */
void pu_write_jpeg(const char *path, const uint8_t *rgb, int w, int h);

/* A storage backend instance registered on m as `name` (posix, mmap, uring,
 * direct).  Returns false (and prints why) when it cannot work here. */
bool pu_add_storage(mock_host *m, const char *name);
void pu_storages_fini(mock_host *m);

/* The reference: full decode with TurboJPEG, the given window resampled (in
 * train from its own pixels only, as torchvision crops before it resizes)
 * with PIL's antialiased bilinear rule in double precision, mirrored,
 * normalised (cfg's channel order and pixel range); out is 3 x s x s (CHW). */
void pu_reference(const dlg_loader_config *cfg, const uint8_t *jpeg, size_t len, double x, double y,
                  double w, double h, bool mirror, float *out);

/* torchvision's Resize(R) + CenterCrop(crop) window, computed here again. */
void pu_center_window(int W, int H, int R, int crop, double *x, double *y, double *w, double *h);

/* The loader config of a {batch, DLG_LOADER_OPTIONS} table with the
 * overrides applied ("key=value", NULL-terminated), batch 1: what
 * dlg_loader_config_from_opts returns (a refused option fails the test). */
int pu_loader_config(mock_host *m, const char *const *over, bool train, dlg_loader_config *cfg);
/* ... and the loader opened on it; a refusal fails the test with m's line. */
dlg_loader *pu_loader_open(mock_host *m, const char *const *over, bool train,
                           dlg_loader_config *cfg);

/* Value of image i, channel c, row y, column x of a batch buffer. */
float pu_at(const dlg_loader_config *cfg, const void *data, int i, int c, int y, int x);

#endif
