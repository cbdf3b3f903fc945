/* What cuda_check's graphs and input cases share (and the layer cases a
 * blob's size): their small net, its parameters read back, and how far
 * two runs' floats are apart. */
#ifndef DLG_CUDA_CHECK_NET_H
#define DLG_CUDA_CHECK_NET_H

#include <dlgauge/nn.h>

#include <stdbool.h>
#include <stddef.h>

/* conv, batch norm, ReLU, max pooling, dropout (if asked), fc and softmax
 * loss over nb 3x16x16 inputs *x with class labels *y; returns the loss
 * blob, < 0 on an error. */
int cc_small_net(dlg_net *n, int nb, bool dropout, int *x, int *y);

/* The number of floats in blob. */
size_t cc_count(const dlg_net *n, int blob);

/* Every parameter of the net, in layer order, concatenated in a malloc'ed
 * array of *count floats; NULL if one cannot be read or memory runs out. */
float *cc_read_params(dlg_net *n, size_t *count);

/* max |a - b| / max |b| over n floats: 0 when bitwise equal, infinite
 * where a difference is not finite. */
double cc_rel_diff(const float *a, const float *b, size_t n);

#endif
