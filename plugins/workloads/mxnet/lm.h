/* lstm-ptb: the word-level LSTM language model of MXNet's and PyTorch's
 * Penn Treebank examples (embedding, stacked LSTM, dropout, tied or untied
 * decoder, softmax over the vocabulary, truncated BPTT, gradient clipping,
 * plain SGD), reporting tokens/s, loss and perplexity. */
#ifndef DLG_MXNET_LM_H
#define DLG_MXNET_LM_H

#include <dlgauge/plugin.h>

enum lm_opt {
    L_MODE = 0,
    L_DATA,
    L_SIZE,
    L_HIDDEN,
    L_LAYERS,
    L_BPTT,
    L_BATCH,
    L_VOCAB,
    L_DROPOUT,
    L_TIED,
    L_LR,
    L_CLIP,
    L_MOMENTUM,
    L_BACKEND,
    L_DEVICE,
    L_PRECISION,
    L_ALGO_CACHE,
    L_WORKSPACE,
    L_DETERMINISTIC,
    L_GRAPHS,
    L_PROFILE,
    L_COUNT
};

extern const dlg_option lm_options[];
extern const dlg_metric lm_metrics[];

/* workload ops version 3: the option rules setup applies (bptt, batch,
 * layers, device and precision, profile, vocab, the data spec's form),
 * without a file, a device or memory */
int lm_check(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job);
int lm_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state);
int lm_step(void *state, dlg_step *out);
int lm_report(void *state, const dlg_report_api *api, dlg_fields *f);
/* gflops and the profile from the next step on (workload ops version 2) */
int lm_begin_timed(void *state);
void lm_teardown(void *state);

#endif
