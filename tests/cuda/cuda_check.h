/* What cuda_check's layer cases share with the files beside it
 * (cuda_check_seq.c): how a case names its net's inputs and outputs. */
#ifndef DLG_CUDA_CHECK_H
#define DLG_CUDA_CHECK_H

#include <dlgauge/nn.h>

#include <stdbool.h>

#define MAXIO 8

/* in: inputs drawn at random, their gradients compared; label: class
 * labels (-1: none); out: the output compared (the loss if `loss`);
 * ids: token ids drawn in [0, vocab) (vocab 0: none); extra: more outputs
 * (an LSTM's final states), compared after forward and given random
 * gradients before backward. */
typedef struct netio {
    int in[MAXIO], nin, label, out;
    bool loss;
    int ids, vocab;
    int extra[MAXIO], nextra;
} netio;

typedef void (*build_fn)(dlg_net *net, netio *io);

#endif
