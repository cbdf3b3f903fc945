/* cuda_check's sequence-layer cases (embedding, LSTM, a small tied LSTM
 * language model), the bad-id check and the lstm-ptb benchmark
 * (cuda_check_seq.c). */
#ifndef DLG_CUDA_CHECK_SEQ_H
#define DLG_CUDA_CHECK_SEQ_H

#include "cuda_check.h"

/* Layer cases for run_case (cuda_check.c). */
void seq_case_embed(dlg_net *n, netio *io);   /* ids with repeats: scatter-add */
void seq_case_lstm(dlg_net *n, netio *io);    /* one layer, I != H, hT/cT */
void seq_case_lstm_4d(dlg_net *n, netio *io); /* 4-d x, h0, c0 (rows in NCHW order) */
void seq_case_lstm2(dlg_net *n, netio *io);   /* two stacked, different H */
void seq_case_lstm_lm(dlg_net *n, netio *io); /* embedding, 2 LSTMs, tied decoder, loss */

/* An id outside 0..vocab-1 must surface as -DLG_EINVAL (at the latest
 * when a result is read back), never as a silent zero row.  0 = ok. */
int seq_check_bad_id(const char *backend);

/* cuda_check bench lstm-ptb train|infer BACKEND BATCH [WARMUP ITERS]:
 * the lstm-ptb workload's step (PTB medium: hidden 650, 2 layers, bptt
 * 35, vocabulary 10000, dropout 0.2, untied, clip 0.25, SGD lr 20) on
 * synthetic ids; prints the bench line with tokens/s. */
int seq_bench_lm(int argc, char **argv);

#endif
