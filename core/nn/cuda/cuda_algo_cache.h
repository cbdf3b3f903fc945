/* Convolution algorithm choices by shape key: kept for the run and,
 * optionally, in a text file so later runs skip the cuDNN search.  Host
 * code only (unit-tested without a GPU).  File format, one entry a line:
 *     dlgauge-algo-cache 1 <tag>          first line; tag = GPU + cuDNN
 *     <key> <algo> <math> <ws_bytes>      key has no spaces
 * A file whose tag differs is ignored (the choices belong to another GPU),
 * and so is an empty one (a file made ahead of the first run).  Each key
 * starts with its direction (fwd:, bwdd:, bwdf:); an algorithm outside that
 * direction's range, a math type cuDNN does not have, or a negative size is
 * a corrupt line. */
#ifndef DLG_NN_CUDA_ALGO_CACHE_H
#define DLG_NN_CUDA_ALGO_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#define DLG_ALGO_KEY_MAX 160
/* cuDNN 9's CUDNN_CONVOLUTION_{FWD,BWD_DATA,BWD_FILTER}_ALGO_COUNT and its
 * largest cudnnMathType_t (CUDNN_FMA_MATH); cuda_conv.c checks them
 * against cudnn.h at compile time */
#define DLG_ALGO_FWD_COUNT 8
#define DLG_ALGO_BWDD_COUNT 6
#define DLG_ALGO_BWDF_COUNT 7
#define DLG_ALGO_MATH_MAX 3

typedef struct dlg_algo_entry {
    char key[DLG_ALGO_KEY_MAX];
    int algo, math;
    size_t ws;
} dlg_algo_entry;

typedef struct dlg_algo_cache {
    dlg_algo_entry *e;
    int n, cap;
    bool dirty;
    char tag[128];
} dlg_algo_cache;

void dlg_algo_cache_init(dlg_algo_cache *c, const char *tag);
void dlg_algo_cache_free(dlg_algo_cache *c);
const dlg_algo_entry *dlg_algo_cache_get(const dlg_algo_cache *c, const char *key);
int dlg_algo_cache_put(dlg_algo_cache *c, const char *key, int algo, int math, size_t ws);
/* 0 (also when the file is missing or has another tag), or -DLG_ECORRUPT
 * with a message naming the file and line. */
int dlg_algo_cache_load(dlg_algo_cache *c, const char *path, char *err, size_t errlen);
int dlg_algo_cache_save(const dlg_algo_cache *c, const char *path, char *err, size_t errlen);

#endif
