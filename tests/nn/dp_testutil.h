/* Helpers for the data-parallel tests (test_nn_dp: the host reduce on the
 * host backends; tests/cuda/test_fakegpu_dp: the NCCL reduce on the CPU
 * stand-in GPU).  Each trains two nets as two ranks in two threads, rank r
 * on samples [r*b, (r+1)*b) of 2b, against one net with batch 2b on all of
 * them; what each test sums, and what it asserts, stays in the test. */
#ifndef DLG_DP_TESTUTIL_H
#define DLG_DP_TESTUTIL_H

#include <dlgauge/nn.h>

#include <stddef.h>
#include <stdint.h>

/* The small conv net's layers, added to net: "data" (n x 3 x img x img)
 * -> conv1 (8, 3x3) -> [batch norm "bn1"] -> relu -> 2x2 max pool ->
 * conv2 (conv2 channels, 3x3) -> relu -> fc (10) -> softmax loss on
 * "label"; Xavier weights, biases N(0, 0.1^2).  Errors stay in
 * dlg_net_status. */
void dp_conv_layers(dlg_net *net, int n, int img, int conv2, bool bn);

/* A net planned for inference on backend ("data" 2 x 3 x img x img ->
 * fc (4) -> softmax loss on "label"), which both reduces refuse; asserts
 * that it plans. */
dlg_net *dp_inference_net(const char *backend, int img);

/* net planned by po, or NULL: the error printed, the net destroyed. */
dlg_net *dp_plan(dlg_net *net, const dlg_plan_opts *po);

/* Step s's tokens for tu_lstm_lm_layers(net, steps, n, vocab, dim, false)
 * out of a batch of `total` streams, this net's being [first, first + n):
 * ids (5g + 3s + 1) mod vocab, targets "y" (7g + s + 2) mod vocab (g the
 * token's row in the total-stream batch), "h0" and "c0" N(0, 1) seeded by
 * s.  0 or a negative code. */
int dp_feed_lm(dlg_net *net, int s, int first, int n, int total, int steps, int vocab, int dim);

/* Step s's "data" (per floats a sample, N(0, 1) seeded by s) and "label"
 * ((3i + s) mod 10 + label_base) of samples [first, first + n) of total;
 * bad >= 0: that sample's first value is 1e30 at step 1 (an inf in fp16).
 * 0 or a negative code. */
int dp_feed_images(dlg_net *net, int s, int first, int n, int total, size_t per, int label_base,
                   int bad);

/* The largest |a - b| over b's trained params (read in plain layout),
 * relative to the largest |b|; bn_stats false: not a batch norm's running
 * statistics (its params 2 and 3), which stay per rank. */
double dp_weight_off(dlg_net *a, dlg_net *b, bool bn_stats);

/* One of the two ranks: its net, what the test shares between the ranks
 * (its reduce's state), and what its thread did. */
typedef struct dp_rank {
    dlg_net *net;
    int rank;          /* 0 or 1 */
    void *shared;      /* the test's state between the two ranks */
    const void *cfg;   /* the test's run config */
    dlg_clip_stats st; /* the test's step's clip stats */
    uint64_t hash;     /* dlg_net_param_hash after the last step */
    int rc;            /* 0, or the first error */
} dp_rank;

/* A rank's step s (its data, its training step): 0 or a negative code. */
typedef int (*dp_step_fn)(dp_rank *r, int s);

/* Runs steps [0, steps) of each rank in a thread of its own, a rank
 * stopping at its first error (printed), then hashes its weights there (on
 * a device a sync: a rank's queued collectives run on the thread that
 * waits for them); asserts that both ranks returned 0. */
void dp_run_ranks(dp_rank r[2], int steps, dp_step_fn step);

#endif
