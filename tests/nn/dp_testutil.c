#include "dp_testutil.h"

#include "nn_testutil.h"

#include <dlgauge/plugin.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

void dp_conv_layers(dlg_net *net, int n, int img, int conv2, bool bn)
{
    int x = dlg_input(net, "data", n, 3, img, img), y = dlg_labels(net, "label", n);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_XAVIER, 0},
                        (dlg_filler){DLG_FILL_GAUSSIAN, 0.1f});
    x = dlg_conv(net, "conv1", x, 8, 3, 1, 1, 1);
    if (bn)
        x = dlg_batchnorm(net, "bn1", x, 1e-5f);
    x = dlg_relu(net, "relu1", x);
    x = dlg_max_pool(net, "pool1", x, 2, 2, 0);
    x = dlg_conv(net, "conv2", x, conv2, 3, 1, 1, 1);
    x = dlg_relu(net, "relu2", x);
    dlg_softmax_loss(net, "loss", dlg_fc(net, "fc", x, 10), y);
}

dlg_net *dp_plan(dlg_net *net, const dlg_plan_opts *po)
{
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, po) < 0) {
        fprintf(stderr, "dp net on %s: %s\n", po->backend, dlg_net_error(net));
        dlg_net_destroy(net);
        return NULL;
    }
    return net;
}

dlg_net *dp_inference_net(const char *backend, int img)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "inf"), 0);
    int x = dlg_input(net, "data", 2, 3, img, img), y = dlg_labels(net, "label", 2);
    dlg_softmax_loss(net, "loss", dlg_fc(net, "fc", x, 4), y);
    dlg_plan_opts po = {.backend = backend, .train = false, .seed = 1};
    assert_int_equal(dlg_net_plan(net, &po), 0);
    return net;
}

int dp_feed_lm(dlg_net *net, int s, int first, int n, int total, int steps, int vocab, int dim)
{
    float *ids = malloc((size_t)(steps * n) * sizeof(float));
    float *y = malloc((size_t)(steps * n) * sizeof(float));
    float *st = malloc((size_t)(total * dim) * sizeof(float));
    int rc = ids && y && st ? 0 : -DLG_ENOMEM;
    for (int t = 0; !rc && t < steps; t++)
        for (int b = 0; b < n; b++) {
            int g = t * total + first + b;
            ids[t * n + b] = (float)((g * 5 + 3 * s + 1) % vocab);
            y[t * n + b] = (float)((g * 7 + s + 2) % vocab);
        }
    if (!rc) {
        rc |= dlg_net_write(net, dlg_net_blob(net, "ids"), DLG_DATA, ids, (size_t)(steps * n));
        rc |= dlg_net_write(net, dlg_net_blob(net, "y"), DLG_DATA, y, (size_t)(steps * n));
    }
    const char *state[2] = {"h0", "c0"};
    for (int i = 0; !rc && i < 2; i++) {
        tu_fill(st, (int64_t)total * dim, FILL_GAUSS, 100u + (uint64_t)(s * 2 + i));
        rc |= dlg_net_write(net, dlg_net_blob(net, state[i]), DLG_DATA, st + first * dim,
                            (size_t)(n * dim));
    }
    free(ids);
    free(y);
    free(st);
    return rc;
}

int dp_feed_images(dlg_net *net, int s, int first, int n, int total, size_t per, int label_base,
                   int bad)
{
    float *img = malloc((size_t)total * per * sizeof(float));
    float *lab = malloc((size_t)total * sizeof(float));
    int rc = img && lab ? 0 : -DLG_ENOMEM;
    if (!rc) {
        tu_fill(img, (int64_t)((size_t)total * per), FILL_GAUSS, 200u + (uint64_t)s);
        if (bad >= 0 && s == 1)
            img[(size_t)bad * per] = 1e30f;
        for (int i = 0; i < total; i++)
            lab[i] = (float)((i * 3 + s) % 10 + label_base);
        rc |= dlg_net_write(net, dlg_net_blob(net, "data"), DLG_DATA, img + (size_t)first * per,
                            (size_t)n * per);
        rc |= dlg_net_write(net, dlg_net_blob(net, "label"), DLG_DATA, lab + first, (size_t)n);
    }
    free(img);
    free(lab);
    return rc;
}

double dp_weight_off(dlg_net *a, dlg_net *b, bool bn_stats)
{
    double off = 0, big = 0;
    for (int i = 0; i < dlg_net_layer_count(b); i++) {
        dlg_layer_info li;
        assert_int_equal(dlg_net_layer_info(b, i, &li), 0);
        bool skip = !bn_stats && strcmp(li.type, "batchnorm") == 0;
        for (int p = 0; p < (skip ? 2 : 4); p++) {
            int pb = dlg_net_param(b, li.name, p);
            if (pb < 0)
                continue;
            int64_t n = tu_count(b, pb);
            float *wa = tu_read_copy(a, pb), *wb = tu_read_copy(b, pb);
            assert_non_null(wa);
            assert_non_null(wb);
            for (int64_t e = 0; e < n; e++) {
                off = fmax(off, fabs((double)wa[e] - wb[e]));
                big = fmax(big, fabs((double)wb[e]));
            }
            free(wa);
            free(wb);
        }
    }
    return off / big;
}

typedef struct rank_thread {
    dp_rank *r;
    int steps;
    dp_step_fn step;
} rank_thread;

static void *rank_main(void *arg)
{
    rank_thread *t = arg;
    dp_rank *r = t->r;
    for (int s = 0; s < t->steps && !r->rc; s++)
        r->rc = t->step(r, s);
    if (!r->rc)
        r->rc = dlg_net_param_hash(r->net, &r->hash);
    if (r->rc)
        fprintf(stderr, "rank %d: %s\n", r->rank, dlg_net_error(r->net));
    return NULL;
}

void dp_run_ranks(dp_rank r[2], int steps, dp_step_fn step)
{
    rank_thread t[2];
    pthread_t tid[2];
    for (int i = 0; i < 2; i++) {
        t[i] = (rank_thread){&r[i], steps, step};
        assert_int_equal(pthread_create(&tid[i], NULL, rank_main, &t[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(tid[i], NULL);
    assert_int_equal(r[0].rc, 0);
    assert_int_equal(r[1].rc, 0);
}
