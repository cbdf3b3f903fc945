#include "nn_testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

/* DLG_NN_HAVE_DNNL: set on this library where oneDNN is built */
#ifdef DLG_NN_HAVE_DNNL
const char *const tu_backends[] = {"ref", "cpu"};
#else
const char *const tu_backends[] = {"ref"};
#endif
const int tu_nbackends = (int)(sizeof tu_backends / sizeof tu_backends[0]);

void tu_on_cpu(void (*check)(const char *backend))
{
#ifdef DLG_NN_HAVE_DNNL
    check("cpu");
#else
    (void)check;
    skip();
#endif
}

static double unif(uint64_t *s) { return (double)(dlg_splitmix_next(s) >> 11) / 9007199254740992.0; }

void tu_fill(float *buf, int64_t n, fill_mode mode, uint64_t seed)
{
    uint64_t s = seed;
    if (mode == FILL_GAUSS) {
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)(sqrt(-2 * log(1 - unif(&s))) * cos(6.283185307179586 * unif(&s)));
        return;
    }
    /* a shuffled grid (k - n/2) * 0.05 + 0.025: no ties, no zeros */
    for (int64_t i = 0; i < n; i++)
        buf[i] = (float)((double)(i - n / 2) * 0.05 + 0.025);
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(dlg_splitmix_next(&s) % (uint64_t)(i + 1));
        float t = buf[i];
        buf[i] = buf[j];
        buf[j] = t;
    }
}

int64_t tu_count(const dlg_net *net, int b)
{
    dlg_shape s;
    if (dlg_net_shape(net, b, &s) < 0)
        return 0;
    int64_t n = 1;
    for (int i = 0; i < s.ndim; i++)
        n *= s.d[i];
    return n;
}

int tu_fill_blob(dlg_net *net, int b, fill_mode mode, uint64_t seed)
{
    int64_t n = tu_count(net, b);
    float *buf = malloc((size_t)n * sizeof(float));
    if (!buf)
        return -1;
    tu_fill(buf, n, mode, seed);
    int rc = dlg_net_write(net, b, DLG_DATA, buf, (size_t)n);
    free(buf);
    return rc;
}

static double objective(dlg_net *net, int out, bool is_loss, const float *r, float *tmp, int64_t n)
{
    if (dlg_net_forward(net) < 0 || dlg_net_read(net, out, DLG_DATA, tmp, (size_t)n) < 0)
        return NAN;
    if (is_loss)
        return tmp[0];
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += (double)tmp[i] * r[i];
    return s;
}

/* Finite differences for one blob against its analytic diff. */
static double check_blob(dlg_net *net, int b, int out, bool is_loss, const float *r, float *tmp,
                         int64_t nout, double eps, int max_n)
{
    int64_t n = tu_count(net, b);
    float *x = malloc((size_t)n * sizeof(float)), *g = malloc((size_t)n * sizeof(float));
    double worst = 0;
    if (!x || !g || dlg_net_read(net, b, DLG_DATA, x, (size_t)n) < 0 ||
        dlg_net_read(net, b, DLG_DIFF, g, (size_t)n) < 0)
        worst = INFINITY;
    int64_t step = n > max_n ? (n + max_n - 1) / max_n : 1;
    for (int64_t i = 0; i < n && worst < INFINITY; i += step) {
        float orig = x[i];
        x[i] = (float)(orig + eps);
        double up = (double)x[i] - orig;
        dlg_net_write(net, b, DLG_DATA, x, (size_t)n);
        double fp = objective(net, out, is_loss, r, tmp, nout);
        x[i] = (float)(orig - eps);
        double down = (double)orig - x[i];
        dlg_net_write(net, b, DLG_DATA, x, (size_t)n);
        double fm = objective(net, out, is_loss, r, tmp, nout);
        x[i] = orig;
        double num = (fp - fm) / (up + down), ana = g[i];
        double err = fabs(num - ana) / fmax(1.0, fmax(fabs(num), fabs(ana)));
        if (!(err <= worst))
            worst = isnan(err) ? INFINITY : err;
        if (!(err <= 1e-3))
            fprintf(stderr, "  blob %d elem %lld: analytic %.7g numeric %.7g\n", b, (long long)i,
                    ana, num);
    }
    if (x)
        dlg_net_write(net, b, DLG_DATA, x, (size_t)n);
    free(x);
    free(g);
    return worst;
}

double tu_gradcheck(dlg_net *net, int out, bool is_loss, const int *check, int ncheck, double eps,
                    int max_per_blob)
{
    int64_t nout = tu_count(net, out);
    float *r = malloc((size_t)nout * sizeof(float)), *tmp = malloc((size_t)nout * sizeof(float));
    double worst = INFINITY;
    if (!r || !tmp)
        goto out;
    tu_fill(r, nout, FILL_GAUSS, 99);
    if (dlg_net_forward(net) < 0 ||
        (!is_loss && dlg_net_write(net, out, DLG_DIFF, r, (size_t)nout) < 0) ||
        dlg_net_backward(net) < 0)
        goto out;
    worst = 0;
    for (int i = 0; i < ncheck; i++) {
        double e = check_blob(net, check[i], out, is_loss, r, tmp, nout, eps, max_per_blob);
        worst = e > worst ? e : worst;
    }
out:
    if (dlg_net_status(net) < 0)
        fprintf(stderr, "gradcheck: %s\n", dlg_net_error(net));
    free(r);
    free(tmp);
    return worst;
}

int tu_write_same(dlg_net *a, dlg_net *b, int blob_a, int blob_b, uint64_t seed, bool positive)
{
    int64_t n = tu_count(a, blob_a);
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!v)
        return -1;
    tu_fill(v, n, FILL_GAUSS, seed);
    for (int64_t i = 0; positive && i < n; i++)
        v[i] = 0.5f + fabsf(v[i]);
    int rc = dlg_net_write(a, blob_a, DLG_DATA, v, (size_t)n);
    if (rc == 0)
        rc = dlg_net_write(b, blob_b, DLG_DATA, v, (size_t)n);
    free(v);
    return rc;
}

double tu_blob_err(dlg_net *a, dlg_net *b, int blob, dlg_which w)
{
    int64_t n = tu_count(b, blob);
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    double d = 0, m = 0;
    int rc = x && y ? 0 : -1;
    if (!rc)
        rc = dlg_net_read(a, blob, w, x, (size_t)n) || dlg_net_read(b, blob, w, y, (size_t)n) ? -1 : 0;
    for (int64_t i = 0; !rc && i < n; i++) {
        d = fmax(d, fabs((double)x[i] - y[i]));
        m = fmax(m, fabs((double)y[i]));
    }
    free(x);
    free(y);
    return rc ? -1 : d / fmax(m, 1e-6);
}

float *tu_read_copy(dlg_net *net, int blob)
{
    int64_t n = tu_count(net, blob);
    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (x && dlg_net_read(net, blob, DLG_DATA, x, (size_t)n) != 0) {
        free(x);
        x = NULL;
    }
    return x;
}

int tu_step_off(dlg_net *ref, dlg_net *net, int blob, const float *before, double *step, double *off)
{
    float *a = tu_read_copy(ref, blob), *b = tu_read_copy(net, blob);
    int64_t n = tu_count(ref, blob);
    *step = *off = 0;
    for (int64_t i = 0; a && b && i < n; i++) {
        *step = fmax(*step, fabs((double)a[i] - before[i]));
        *off = fmax(*off, fabs((double)b[i] - a[i]));
    }
    int rc = a && b ? 0 : -1;
    free(a);
    free(b);
    return rc;
}

/* The ids and targets of tu_lstm_lm, and its initial state. */
static int lm_inputs(dlg_net *net, int64_t n, int vocab)
{
    float *ids = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    int rc = ids && y ? 0 : -1;
    for (int64_t i = 0; !rc && i < n; i++) {
        ids[i] = (float)((i * 5 + 1) % vocab);
        y[i] = (float)((i * 3 + 2) % vocab);
    }
    if (!rc)
        rc = dlg_net_write(net, dlg_net_blob(net, "ids"), DLG_DATA, ids, (size_t)n);
    if (!rc)
        rc = dlg_net_write(net, dlg_net_blob(net, "y"), DLG_DATA, y, (size_t)n);
    if (!rc)
        rc = tu_fill_blob(net, dlg_net_blob(net, "h0"), FILL_GAUSS, 3);
    if (!rc)
        rc = tu_fill_blob(net, dlg_net_blob(net, "c0"), FILL_GAUSS, 4);
    free(ids);
    free(y);
    return rc;
}

void tu_lstm_lm_layers(dlg_net *net, int steps, int batch, int vocab, int dim, bool tied)
{
    int ids = dlg_labels(net, "ids", steps * batch), y = dlg_labels(net, "y", steps * batch);
    int h0 = dlg_input(net, "h0", batch, dim, 1, 1), c0 = dlg_input(net, "c0", batch, dim, 1, 1);
    int e = dlg_embedding(net, "emb", ids, vocab, dim);
    int o = dlg_lstm(net, "lstm", e, h0, c0, dim, steps, NULL, NULL);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f},
                        (dlg_filler){DLG_FILL_GAUSSIAN, 0.3f});
    int logits = dlg_fc(net, "dec", o, vocab);
    if (tied)
        dlg_net_tie(net, "dec", "emb");
    dlg_softmax_loss(net, "loss", logits, y);
}

dlg_net *tu_lstm_lm(const char *backend, int steps, int batch, int vocab, int dim, bool tied)
{
    dlg_net *net;
    if (dlg_net_create(&net, "lm") < 0)
        return NULL;
    tu_lstm_lm_layers(net, steps, batch, vocab, dim, tied);
    dlg_plan_opts po = {.backend = backend, .threads = 2, .train = true, .seed = 5};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &po) < 0 ||
        lm_inputs(net, (int64_t)steps * batch, vocab) < 0) {
        fprintf(stderr, "lstm language model on %s: %s\n", backend, dlg_net_error(net));
        dlg_net_destroy(net);
        return NULL;
    }
    return net;
}
