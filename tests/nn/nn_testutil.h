/* Helpers for the nn tests: seeded inputs and finite-difference checks. */
#ifndef DLG_NN_TESTUTIL_H
#define DLG_NN_TESTUTIL_H

#include <dlgauge/nn.h>
#include <dlgauge/splitmix.h> /* the tests' reproducible draws */

#include <stdint.h>

typedef enum fill_mode {
    FILL_GAUSS = 0,   /* N(0, 1) */
    FILL_DISTINCT = 1 /* distinct values >= 0.02 apart and from 0: no kinks */
} fill_mode;

/* The host backends of this build: "ref", and "cpu" where oneDNN is built. */
extern const char *const tu_backends[];
extern const int tu_nbackends;

/* check("cpu") where oneDNN is built; else the calling test is skipped. */
void tu_on_cpu(void (*check)(const char *backend));

/* Fill host buffer with reproducible values. */
void tu_fill(float *buf, int64_t n, fill_mode mode, uint64_t seed);

/* Fill blob `b` of a planned net; returns 0 or a negative code. */
int tu_fill_blob(dlg_net *net, int b, fill_mode mode, uint64_t seed);
int64_t tu_count(const dlg_net *net, int b);

/* Writes the same fresh N(0,1) values (0.5 + |v| when positive, e.g. a
 * variance) into blob_a of a and blob_b of b, bumping their versions;
 * returns 0 or the first write's error. */
int tu_write_same(dlg_net *a, dlg_net *b, int blob_a, int blob_b, uint64_t seed, bool positive);

/* max |a - b| / max |b| of a blob's data or gradient (w) read from nets
 * a and b (b the reference), -1 if either cannot be read. */
double tu_blob_err(dlg_net *a, dlg_net *b, int blob, dlg_which w);

/* A malloc'ed copy of blob's data (free it), NULL if it cannot be read. */
float *tu_read_copy(dlg_net *net, int blob);

/* After an SGD step of both nets from the same weights `before` (blob's
 * data then): *step = the largest move of ref's weights, *off = the
 * largest distance of net's from ref's.  0, or -1 if unreadable. */
int tu_step_off(dlg_net *ref, dlg_net *net, int blob, const float *before, double *step, double *off);

/* lstm-ptb's model: ids (steps*batch tokens) -> embedding "emb" (vocab x
 * dim) -> LSTM "lstm" (dim) -> decoder "dec" (tied to the table or not)
 * -> softmax loss "loss" per token, fillers N(0, 0.3^2); planned to train
 * on backend (2 threads, seed 5) with ids (5i + 1) mod vocab, targets "y"
 * (3i + 2) mod vocab, "h0" and "c0" N(0, 1).  NULL (the error printed) if
 * it cannot be built or planned. */
dlg_net *tu_lstm_lm(const char *backend, int steps, int batch, int vocab, int dim, bool tied);

/* tu_lstm_lm's layers and fillers alone, added to net (unplanned, no
 * inputs written); an error stays in dlg_net_status. */
void tu_lstm_lm_layers(dlg_net *net, int steps, int batch, int vocab, int dim, bool tied);

/* Central finite-difference check of a planned (train, input_grads) net.
 * Objective: the loss (loss_blob >= 0) or sum(out * R) for a fixed random R.
 * Checks up to max_per_blob elements of each blob in `check` against the
 * gradient of one backward.  Returns the worst error
 * |a - n| / max(1, |a|, |n|), or INFINITY if the net fails. */
double tu_gradcheck(dlg_net *net, int out, bool is_loss, const int *check, int ncheck, double eps,
                    int max_per_blob);

#endif
