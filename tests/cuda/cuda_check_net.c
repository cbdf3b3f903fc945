#include "cuda_check_net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cc_small_net(dlg_net *n, int nb, bool dropout, int *x, int *y)
{
    *x = dlg_input(n, "x", nb, 3, 16, 16);
    *y = dlg_labels(n, "y", nb);
    int h = dlg_conv(n, "conv", *x, 8, 3, 1, 1, 1);
    h = dlg_batchnorm(n, "bn", h, 1e-5f);
    h = dlg_relu(n, "relu", h);
    h = dlg_max_pool(n, "pool", h, 2, 2, 0);
    if (dropout)
        h = dlg_dropout(n, "drop", h, 0.3f);
    h = dlg_fc(n, "fc", h, 10);
    return dlg_softmax_loss(n, "loss", h, *y);
}

size_t cc_count(const dlg_net *n, int blob)
{
    dlg_shape s;
    dlg_net_shape(n, blob, &s);
    size_t c = 1;
    for (int i = 0; i < s.ndim; i++)
        c *= (size_t)s.d[i];
    return c;
}

/* Reads the params into out (NULL: only counts them); their count, or -1. */
static long read_into(dlg_net *n, float *out)
{
    size_t off = 0;
    for (int i = 0; i < dlg_net_layer_count(n); i++) {
        dlg_layer_info li;
        dlg_net_layer_info(n, i, &li);
        for (int k = 0;; k++) {
            int b = dlg_net_param(n, li.name, k);
            if (b < 0)
                break;
            size_t c = cc_count(n, b);
            if (out && dlg_net_read(n, b, DLG_DATA, out + off, c) < 0)
                return -1;
            off += c;
        }
    }
    return (long)off;
}

float *cc_read_params(dlg_net *n, size_t *count)
{
    long total = read_into(n, NULL);
    float *p = total > 0 ? malloc((size_t)total * sizeof *p) : NULL;
    if (p && read_into(n, p) != total) {
        free(p);
        p = NULL;
    }
    *count = p ? (size_t)total : 0;
    return p;
}

double cc_rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0, m = 1e-30;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0)
            d = fmax(d, isfinite(a[i]) && isfinite(b[i]) ? fabs((double)a[i] - b[i]) : INFINITY);
        m = fmax(m, fabs((double)b[i]));
    }
    return d / m;
}
