/* cuda_check's dynamic loss-scaling case (fp16 backends): a tiny net
 * trained three steps beside the ref backend.
 *   1 clean:    the update equals ref's (so the SGD step removed the scale),
 *               dlg_net_grad_norm equals ref's (it divides the scale out),
 *               scale 65536, nothing skipped;
 *   2 overflow: an input beyond fp16's range (inf once stored as fp16)
 *               makes every gradient non-finite: the weights stay bitwise
 *               unchanged, the scale halves, one step is skipped;
 *   3 clean:    the weights move again, the scale stays halved. */
#include "cuda_check_scale.h"

#include <dlgauge/nn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4
#define IN 8
#define OUT 5

typedef struct tiny {
    dlg_net *net;
    int x, y, loss, w;
} tiny;

static int tiny_open(tiny *t, const char *backend)
{
    memset(t, 0, sizeof *t);
    dlg_net_create(&t->net, "loss_scale");
    t->x = dlg_input(t->net, "x", N, IN, 1, 1);
    t->y = dlg_labels(t->net, "y", N);
    int f = dlg_fc(t->net, "fc", t->x, OUT);
    t->loss = dlg_softmax_loss(t->net, "loss", f, t->y);
    dlg_plan_opts o = {.backend = backend, .train = true, .seed = 3};
    if (dlg_net_plan(t->net, &o) < 0)
        return -1;
    t->w = dlg_net_param(t->net, "fc", 0);
    return t->w < 0 ? -1 : 0;
}

static const dlg_sgd sgd = {0.1f, 0.9f, 1e-4f};

/* forward, backward (norm read in between), SGD; weights after in w */
static int step(tiny *t, float x0, double *norm, float *w)
{
    float x[N * IN], y[N];
    for (int i = 0; i < N * IN; i++) /* on the fp16 grid: both nets see the same */
        x[i] = x0 * (float)((i * 37 % 17) - 8) / 8.f;
    for (int i = 0; i < N; i++)
        y[i] = (float)(i % OUT);
    if (dlg_net_write(t->net, t->x, DLG_DATA, x, N * IN) < 0 ||
        dlg_net_write(t->net, t->y, DLG_DATA, y, N) < 0 || dlg_net_forward(t->net) < 0 ||
        dlg_net_backward(t->net) < 0 || dlg_net_grad_norm(t->net, norm) < 0 ||
        dlg_net_sgd_step(t->net, &sgd) < 0)
        return -1;
    return dlg_net_read(t->net, t->w, DLG_DATA, w, OUT * IN) < 0 ? -1 : 0;
}

static int expect(bool ok, const char *what)
{
    if (!ok)
        printf("    loss_scale: %s\n", what);
    return ok ? 0 : 1;
}

int check_loss_scale(const char *backend)
{
    tiny d, r;
    float w0[OUT * IN], w1[OUT * IN], w2[OUT * IN], w3[OUT * IN], r0[OUT * IN], r1[OUT * IN];
    double nd = 0, nr = 0, n2 = 0, n3 = 0;
    float scale = 0;
    int64_t skipped = -1;
    int fails = 0;
    if (tiny_open(&d, backend) < 0 || tiny_open(&r, "ref") < 0 ||
        dlg_net_read(d.net, d.w, DLG_DATA, w0, OUT * IN) < 0 ||
        dlg_net_read(r.net, r.w, DLG_DATA, r0, OUT * IN) < 0) {
        printf("  %-16s FAIL setup: %s %s\n", "loss_scale", dlg_net_error(d.net),
               dlg_net_error(r.net));
        fails = 1;
        goto out;
    }
    /* 1: clean, against ref */
    if (step(&d, 1.f, &nd, w1) < 0 || step(&r, 1.f, &nr, r1) < 0) {
        printf("  %-16s FAIL step 1: %s %s\n", "loss_scale", dlg_net_error(d.net),
               dlg_net_error(r.net));
        fails = 1;
        goto out;
    }
    double dmax = 0, derr = 0;
    for (int i = 0; i < OUT * IN; i++) {
        dmax = fmax(dmax, fabs((double)r1[i] - r0[i]));
        derr = fmax(derr, fabs(((double)w1[i] - w0[i]) - ((double)r1[i] - r0[i])));
    }
    double w0max = 0, w0err = 0;
    for (int i = 0; i < OUT * IN; i++) {
        w0max = fmax(w0max, fabs((double)r0[i]));
        w0err = fmax(w0err, fabs((double)w0[i] - r0[i]));
    }
    fails += expect(w0err <= 1e-6 * w0max, "initial weights differ from ref's");
    fails += expect(dmax > 0 && derr <= 2e-2 * dmax, "step 1 update differs from ref's");
    fails += expect(fabs(nd - nr) <= 2e-2 * nr, "grad norm differs from ref's (scale not divided out?)");
    fails += expect(dlg_net_loss_scale(d.net, &scale, &skipped) == 1 && scale == 65536.f &&
                        skipped == 0,
                    "after a clean step: scale 65536, 0 skipped");
    /* 2: overflow: 1e5 > 65504 is inf in fp16 */
    if (step(&d, 1e5f, &n2, w2) < 0) {
        printf("  %-16s FAIL step 2: %s\n", "loss_scale", dlg_net_error(d.net));
        fails = 1;
        goto out;
    }
    fails += expect(!isfinite(n2), "overflow step: grad norm finite");
    fails += expect(memcmp(w1, w2, sizeof w1) == 0, "overflow step changed the weights");
    fails += expect(dlg_net_loss_scale(d.net, &scale, &skipped) == 1 && scale == 32768.f &&
                        skipped == 1,
                    "after an overflow: scale 32768, 1 skipped");
    /* 3: clean again */
    if (step(&d, 1.f, &n3, w3) < 0) {
        printf("  %-16s FAIL step 3: %s\n", "loss_scale", dlg_net_error(d.net));
        fails = 1;
        goto out;
    }
    bool moved = false, finite = true;
    for (int i = 0; i < OUT * IN; i++) {
        moved |= w3[i] != w2[i];
        finite &= isfinite(w3[i]) != 0;
    }
    fails += expect(moved && finite && isfinite(n3), "the clean step after did not update");
    fails += expect(dlg_net_loss_scale(d.net, &scale, &skipped) == 1 && scale == 32768.f &&
                        skipped == 1,
                    "after the next clean step: scale 32768, 1 skipped");
    printf("  %-16s %s  step-1 update err %.2e, norm %.4g vs ref %.4g, scale %g, skipped %lld\n",
           "loss_scale", fails ? "FAIL" : "ok  ", dmax > 0 ? derr / dmax : 0.0, nd, nr, scale,
           (long long)skipped);
out:
    dlg_net_destroy(d.net);
    dlg_net_destroy(r.net);
    return fails ? 1 : 0;
}
