/* Global gradient norm and scaling, for gradient clipping, and the loss
 * scale of backends that scale the loss (the norm divides it out).  Host-memory
 * backends (ref, and cpu which shares ref's memory) are read in place;
 * backends with clip hooks (cuda) do both on the device, and
 * dlg_net_clip_grads decides there too, without a wait; others go
 * through download/upload in fixed-size chunks, so nothing is allocated
 * either way (the hooks' list of the gradients is the net's, made at plan
 * time). */
#include "net.h"
#include "ref/ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNK 4096

bool dlg_bk_host_memory(const dlg_backend *bk)
{
    return bk == &dlg_backend_ref || bk->fallback == &dlg_backend_ref;
}

static int trained_params(const dlg_net *net)
{
    int n = 0;
    for (int b = 0; b < net->nblobs; b++)
        n += dlg_blob_trained(&net->blobs[b]);
    return n;
}

int dlg_net_plan_grad_list(dlg_net *net)
{
    int n = trained_params(net);
    if (!net->train || n == 0)
        return 0;
    net->grad_p = malloc((size_t)n * sizeof *net->grad_p);
    net->grad_c = malloc((size_t)n * sizeof *net->grad_c);
    if (!net->grad_p || !net->grad_c)
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory for the gradient list");
    net->grad_cap = n;
    return 0;
}

void dlg_net_free_grad_list(dlg_net *net)
{
    free(net->grad_p);
    free(net->grad_c);
    net->grad_p = NULL;
    net->grad_c = NULL;
    net->grad_cap = 0;
}

/* The params' gradients as (pointer, floats) lists for a backend's clip
 * and collective hooks, in the net's plan-time arrays (refilled each call:
 * cheap, and always the blobs' current memory). */
int dlg_net_list_grads(dlg_net *net, int *n)
{
    *n = 0;
    for (int b = 0; b < net->nblobs; b++) {
        const dlg_blob *bl = &net->blobs[b];
        if (!dlg_blob_trained(bl))
            continue;
        if (*n == net->grad_cap) /* not planned for training: nothing to grow in a step */
            return dlg_net_fail(net, DLG_EINTERNAL, "nn: the gradient list was not planned");
        net->grad_p[*n] = bl->t.diff;
        net->grad_c[(*n)++] = dlg_tensor_elems(&bl->t);
    }
    return 0;
}

/* Sum of squares / scaling of every gradient through the backend's hooks. */
static int device_sumsq(dlg_net *net, double *total)
{
    int n, rc = dlg_net_list_grads(net, &n);
    if (!rc && (rc = net->bk->grad_sumsq(net->ctx, (const float *const *)net->grad_p, net->grad_c,
                                         n, total)) < 0)
        rc = dlg_net_fail(net, -rc, "nn: backend %s: gradient norm failed", net->bk->name);
    return rc;
}

/* The whole clip through the backend's hook, enqueued; a failure is
 * described in err, not made sticky (a step may run inside a capture). */
static int device_clip(dlg_net *net, double max_norm, char *err, size_t errlen)
{
    int n, rc = dlg_net_list_grads(net, &n);
    if (!rc && (rc = net->bk->grad_clip(net->ctx, net->grad_p, net->grad_c, n, max_norm)) < 0)
        snprintf(err, errlen, "nn: backend %s: gradient clipping failed", net->bk->name);
    return rc;
}

static int device_scale(dlg_net *net, float factor)
{
    int n, rc = dlg_net_list_grads(net, &n);
    if (!rc && (rc = net->bk->grad_scale(net->ctx, net->grad_p, net->grad_c, n, factor)) < 0)
        rc = dlg_net_fail(net, -rc, "nn: backend %s: scaling the gradients failed",
                          net->bk->name);
    return rc;
}

/* A net planned for training, and this thread bound to its device. */
static int ready(dlg_net *net)
{
    if (net->err)
        return net->err;
    if (!net->planned || !net->train)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s' is not planned for training",
                            net->name);
    int rc = net->bk->bind ? net->bk->bind(net->ctx) : 0;
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: cannot bind this thread", net->bk->name);
    return 0;
}

static double sumsq_host(const float *g, int64_t n)
{
    double s = 0;
#ifdef _OPENMP
#pragma omp parallel for reduction(+ : s) schedule(static)
#endif
    for (int64_t i = 0; i < n; i++)
        s += (double)g[i] * g[i];
    return s;
}

static int sumsq_chunked(dlg_net *net, const float *g, int64_t n, double *out)
{
    float buf[CHUNK];
    double s = 0;
    for (int64_t off = 0; off < n; off += CHUNK) {
        int64_t k = n - off < CHUNK ? n - off : CHUNK;
        int rc = net->bk->download(net->ctx, buf, g + off, (size_t)k * sizeof(float));
        if (rc < 0)
            return rc;
        for (int64_t i = 0; i < k; i++)
            s += (double)buf[i] * buf[i];
    }
    *out = s;
    return 0;
}

/* The factor the stored gradients carry (the loss scale, and the ranks
 * they were summed over: grad_reduce.c), 1 without. */
static int grad_factor(dlg_net *net, double *f)
{
    float scale = 1.f;
    int64_t skipped = 0;
    int rc = net->bk->loss_scale ? net->bk->loss_scale(net->ctx, &scale, &skipped) : 0;
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: reading the loss scale failed",
                            net->bk->name);
    *f = (rc > 0 ? (double)scale : 1.0) * (net->grad_sum > 1 ? net->grad_sum : 1);
    return 0;
}

int dlg_net_loss_scale(dlg_net *net, float *scale, int64_t *skipped)
{
    *scale = 1.f;
    *skipped = 0;
    int rc = net->err;
    if (rc || !net->planned || !net->train || !net->bk->loss_scale)
        return rc; /* an inference plan scales nothing */
    if (net->bk->bind && (rc = net->bk->bind(net->ctx)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: cannot bind this thread", net->bk->name);
    rc = net->bk->loss_scale(net->ctx, scale, skipped);
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: reading the loss scale failed",
                            net->bk->name);
    return rc;
}

int dlg_net_grad_norm(dlg_net *net, double *norm)
{
    int rc = ready(net);
    if (rc)
        return rc;
    double total = 0;
    if (net->bk->grad_sumsq && (rc = device_sumsq(net, &total)) < 0)
        return rc;
    if (!net->bk->grad_sumsq && net->bk->sync && (rc = net->bk->sync(net->ctx)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: sync failed", net->bk->name);
    for (int b = 0; b < net->nblobs && !net->bk->grad_sumsq; b++) {
        const dlg_blob *bl = &net->blobs[b];
        if (!dlg_blob_trained(bl))
            continue;
        double s = 0;
        if (dlg_bk_host_memory(net->bk))
            s = sumsq_host(bl->t.diff, dlg_tensor_elems(&bl->t));
        else if ((rc = sumsq_chunked(net, bl->t.diff, dlg_tensor_elems(&bl->t), &s)) < 0)
            return dlg_net_fail(net, -rc, "nn: reading the gradient of '%s' failed", bl->name);
        total += s;
    }
    double f = 1.0;
    if ((rc = grad_factor(net, &f)) < 0)
        return rc;
    *norm = sqrt(total) / f;
    return 0;
}

static int scale_chunked(dlg_net *net, float *g, int64_t n, float f)
{
    float buf[CHUNK];
    for (int64_t off = 0; off < n; off += CHUNK) {
        int64_t k = n - off < CHUNK ? n - off : CHUNK;
        int rc = net->bk->download(net->ctx, buf, g + off, (size_t)k * sizeof(float));
        for (int64_t i = 0; i < k && !rc; i++)
            buf[i] *= f;
        if (rc < 0 || (rc = net->bk->upload(net->ctx, g + off, buf, (size_t)k * sizeof(float))) < 0)
            return rc;
    }
    return 0;
}

int dlg_net_scale_grads(dlg_net *net, float factor)
{
    int rc = ready(net);
    if (rc)
        return rc;
    if (net->bk->grad_scale)
        return device_scale(net, factor);
    for (int b = 0; b < net->nblobs; b++) {
        const dlg_blob *bl = &net->blobs[b];
        if (!dlg_blob_trained(bl))
            continue;
        float *g = bl->t.diff;
        if (dlg_bk_host_memory(net->bk)) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
            for (int64_t i = 0; i < dlg_tensor_elems(&bl->t); i++)
                g[i] *= factor;
        } else if ((rc = scale_chunked(net, g, dlg_tensor_elems(&bl->t), factor)) < 0) {
            return dlg_net_fail(net, -rc, "nn: scaling the gradient of '%s' failed", bl->name);
        }
    }
    return 0;
}

bool dlg_net_clips_on_device(const dlg_net *net)
{
    return net->bk->grad_clip && net->bk->clip_stats;
}

int dlg_net_run_clip(dlg_net *net, double max_norm, dlg_clip_stats *st, float *lr_factor,
                     char *err, size_t errlen)
{
    if (lr_factor)
        *lr_factor = 1;
    if (dlg_net_clips_on_device(net))
        return device_clip(net, max_norm, err, errlen);
    double norm = 0;
    int rc = dlg_net_grad_norm(net, &norm);
    if (rc < 0)
        return rc;
    st->norm = norm;
    if (!(max_norm > 0 && norm > max_norm))
        return 0;
    st->clipped++;
    float f = (float)(max_norm / (norm + 1e-6));
    /* exact only for Caffe's momentum (h = m*h + lr*g, nn.h's dlg_sgd):
     * the factor enters the history once, as scaled gradients would */
    if (lr_factor) {
        *lr_factor = f;
        return 0;
    }
    return dlg_net_scale_grads(net, f);
}

int dlg_net_clip_grads(dlg_net *net, double max_norm, dlg_clip_stats *st, float *lr_factor)
{
    int rc = ready(net);
    if (lr_factor)
        *lr_factor = 1;
    if (rc)
        return rc;
    char err[256] = "";
    if ((rc = dlg_net_run_clip(net, max_norm, st, lr_factor, err, sizeof err)) < 0 && err[0])
        return dlg_net_fail(net, -rc, "%s", err);
    return rc;
}

int dlg_net_clip_read(dlg_net *net, dlg_clip_stats *st)
{
    int rc = ready(net);
    if (rc || !dlg_net_clips_on_device(net))
        return rc;
    rc = net->bk->clip_stats(net->ctx, &st->norm, &st->clipped);
    if (rc >= 0 && net->grad_sum > 1) /* measured on the sum over the ranks (step.c) */
        st->norm /= net->grad_sum;
    if (rc == -DLG_EINVAL) /* the device's flag: the norm of a bad step */
        return dlg_net_fail(net, DLG_EINVAL, "%s: the gradient norm is meaningless", DLG_NN_BAD_INPUT);
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: reading the gradient norm failed",
                            net->bk->name);
    return 0;
}
