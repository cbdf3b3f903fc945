/* Synthetic but realistic datasets (dlgauge mkdata), deterministic in a
 * seed so that every machine can generate the same bytes:
 *  - photo-like images: smooth low-frequency backgrounds, a few class-
 *    specific shapes with soft edges, and sensor-like noise, with ImageNet-
 *    like sizes (mean about 400x350, aspect ratios 2:3 .. 16:9);
 *  - a Penn-Treebank-like corpus: lowercase tokens drawn from a Zipf law
 *    over a fixed vocabulary that includes <unk> and N, sentences of about
 *    21 tokens on average. */
#ifndef DLG_SYNTH_H
#define DLG_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data_error.h"
#include "data_source.h"

/* ---- images --------------------------------------------------------------- */
#define DLG_SYNTH_MIN_SIDE 64
#define DLG_SYNTH_MAX_SIDE 1200

/* Size of image `index` of a dataset with this seed. */
void dlg_synth_image_size(uint64_t seed, uint64_t index, int *w, int *h);
/* Renders image `index` of class `label` (packed RGB, w*h*3 bytes; w and h
 * at most DLG_SYNTH_MAX_SIDE).  Allocates nothing, so the pixels never
 * depend on the memory there is. */
void dlg_synth_image_render(uint64_t seed, uint64_t index, int label, int w, int h,
                            uint8_t *rgb);

/* ---- text ---------------------------------------------------------------- */
typedef struct dlg_synth_text dlg_synth_text;

/* A generator over `vocab` words (>= 3: <unk>, N and vocab-2 generated
 * words), Zipf exponent 1. */
int dlg_synth_text_new(dlg_synth_text **out, int vocab, uint64_t seed, dlg_data_err *err);
void dlg_synth_text_free(dlg_synth_text *t);
/* The word of rank r (0-based, < vocab). */
const char *dlg_synth_text_word(const dlg_synth_text *t, int r);
/* Writes sentences, one per line in PTB's style (" w1 w2 ... wn \n"), until
 * at least `words` tokens are out.  Returns the tokens written or -code. */
int64_t dlg_synth_text_write(dlg_synth_text *t, uint64_t words, const dlg_output *o,
                             dlg_data_err *err);



/* ---- whole datasets on disk (dlgauge mkdata; synth_files.c) --------------- */
typedef struct dlg_synth_images_cfg {
    const char *out;   /* root folder (created if missing) */
    const char *split; /* sub-folder and list name: "train" */
    int classes;       /* >= 1 */
    uint64_t images;   /* >= 1; image i has class i % classes */
    uint64_t seed;     /* with the split's name (dlg_synth_split_seed) */
    int quality;       /* JPEG quality 1..100 */
    int threads;       /* >= 1 */
} dlg_synth_images_cfg;

typedef struct dlg_synth_images_result {
    uint64_t images, bytes;
    uint64_t min_bytes, max_bytes;
    double mean_w, mean_h;
    double seconds;
    /* set on failure: the output was refused (a folder or list there that
     * mkdata did not make, found before the work or at its commit): bad
     * input, not a failed write or an internal error */
    bool refused;
} dlg_synth_images_result;

/* A split name is one plain path component that the .lst's tab-separated
 * fields can hold: not empty, ".", ".." and without '/', tab or newline,
 * at most DLG_SYNTH_SPLIT_MAX bytes (with ".part" and an image's path it
 * stays within a file name's 255 bytes and the lists' 256-byte paths). */
#define DLG_SYNTH_SPLIT_MAX 128
bool dlg_synth_split_ok(const char *split);

/* The seed a split's images are drawn with: train's is the seed itself
 * (the images mkdata always made), any other split's mixes in its name, so
 * that val is not a copy of train. */
uint64_t dlg_synth_split_seed(uint64_t seed, const char *split);

/* Writes out/split/nCCCCCCCC/nCCCCCCCC_Q.JPEG for every image i (class
 * C = i % classes, Q = i / classes: the class's Q-th image), then
 * out/split.txt (convert_imageset: "split/... label") and out/split.lst
 * (im2rec: "index<TAB>label<TAB>split/..."), paths relative to out.  The
 * bytes depend on the seed and split only, never on the thread count.
 * What stands at out/split and the lists is checked before any work and
 * again, all of it, before anything is replaced (synth_out.h); a refusal
 * sets res->refused and leaves them as they were. */
int dlg_synth_images_write(const dlg_synth_images_cfg *cfg, dlg_synth_images_result *res,
                           dlg_data_err *err);

/* What dlg_synth_text_files_res wrote: per file (train, valid, test; or
 * the one file in [0]) its tokens and bytes, and the distinct tokens of
 * [0] (train). */
typedef struct dlg_synth_text_result {
    uint64_t words[3], bytes[3];
    uint64_t vocab_used;
} dlg_synth_text_result;

/* Writes at least `words` tokens (whole sentences) to path, or with splits
 * to path.train.txt, path.valid.txt and path.test.txt in PTB's proportions
 * (85.6/6.8/7.6 %), each at least one sentence.  As in PTB, valid and test
 * use only words train holds (any other is written <unk>), and train goes
 * on until it holds <unk>.  res may be NULL. */
int dlg_synth_text_files_res(const char *path, uint64_t words, int vocab, uint64_t seed,
                             int splits, dlg_synth_text_result *res, dlg_data_err *err);
/* The same without the result. */
int dlg_synth_text_files(const char *path, uint64_t words, int vocab, uint64_t seed, int splits,
                         dlg_data_err *err);
#endif
