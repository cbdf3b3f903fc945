/* Planning entry, forward/backward/SGD and host access to blobs. */
#include "input.h"
#include "net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What a backend's failed open said, or its code's meaning where it said
 * nothing (a bare -DLG_ENOMEM). */
static const char *open_why(const char *err, int rc)
{
    return *err ? err : rc == -DLG_ENOMEM ? "out of memory" : "cannot be opened";
}

int dlg_net_plan(dlg_net *net, const dlg_plan_opts *opts)
{
    if (net->err)
        return net->err;
    if (net->planned)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s' is already planned", net->name);
    if (net->nnodes == 0)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s' has no layers", net->name);
    const char *name = opts && opts->backend ? opts->backend : "cpu";
    char why[512] = "";
    const dlg_backend *bk = dlg_backend_lookup(name, why, sizeof why);
    if (!bk)
        return dlg_net_fail(net, DLG_ENOTSUP, "nn: backend %s: %s", name, why);
    dlg_backend_opts bo = {0};
    if (opts)
        bo = (dlg_backend_opts){opts->threads, opts->algo_cache, opts->workspace_bytes,
                                opts->deterministic, opts->graphs, opts->half_nchw,
                                opts->direct_conv, opts->stop, opts->stop_ctx, opts->note, opts->note_ctx};
    char err[256] = "";
    int rc = bk->open(&bo, &net->ctx, err, sizeof err);
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: %s", name, open_why(err, rc));
    net->bk = bk;
    if (bk->fallback && (rc = bk->fallback->open(&bo, &net->fctx, err, sizeof err)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: %s", bk->fallback->name, open_why(err, rc));
    net->train = opts && opts->train;
    net->input_grads = opts && opts->input_grads;
    net->seed = opts ? opts->seed : 0;
    net->keep_all = opts && opts->keep_all;
    net->profile = opts && opts->profile;
    net->planned = true;
    net->stop = opts ? opts->stop : NULL;
    net->stop_ctx = opts ? opts->stop_ctx : NULL;
    rc = dlg_net_plan_memory(net);
    net->stop = NULL; /* its ctx may not outlive the plan */
    net->stop_ctx = NULL;
    return rc ? rc : dlg_net_prof_open(net);
}

int dlg_net_keep(dlg_net *net, int blob)
{
    if (net->err)
        return net->err;
    if (net->planned)
        return dlg_net_complain(net, DLG_EINVAL, "nn: net '%s': dlg_net_keep after planning",
                                net->name);
    if (blob < 0 || blob >= net->nblobs)
        return dlg_net_complain(net, DLG_EINVAL, "nn: no blob with id %d", blob);
    net->blobs[blob].keep = true;
    return 0;
}

uint64_t dlg_net_memory_bytes(const dlg_net *net)
{
    if (!net->planned || !net->bk)
        return 0;
    size_t ws = 0;
    for (int i = 0; i < net->nnodes; i++)
        ws = net->nodes[i].ws > ws ? net->nodes[i].ws : ws;
    return (uint64_t)(net->own_bytes + net->arena_bytes[0] + net->arena_bytes[1] + ws);
}

int dlg_net_set_train(dlg_net *net, bool train)
{
    if (net->err)
        return net->err;
    if (!net->planned)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s' is not planned", net->name);
    if (train && !net->train)
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: net '%s' was planned for inference; plan with train = true",
                            net->name);
    for (int i = 0; i < net->nnodes; i++)
        net->nodes[i].l.train = train;
    return 0;
}

int dlg_net_ready(dlg_net *net)
{
    if (net->err)
        return net->err;
    if (!net->planned)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s' is not planned", net->name);
    return 0;
}

/* dlg_net_ready(), and the calling thread bound to the backend */
int dlg_net_ready_bound(dlg_net *net)
{
    int rc = dlg_net_ready(net);
    if (!rc && net->bk->bind && (rc = net->bk->bind(net->ctx)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: cannot bind this thread", net->bk->name);
    return rc;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The profile's marks on a device timeline failed: what the pass says. */
static int mark_failed(int rc, const dlg_net *net, const char *where, char *err, size_t errlen)
{
    snprintf(err, errlen, "nn: profile = true: backend %s could not mark the device timeline %s",
             net->bk->name, where);
    return rc;
}

int dlg_net_run_forward(dlg_net *net, char *err, size_t errlen)
{
    bool marks = net->prof_cap > 0; /* else the host clock times each call */
    int rc;
    if (marks && (rc = dlg_net_prof_pass(net)) < 0)
        return mark_failed(rc, net, "before the forward pass", err, errlen);
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        if (n->fused)
            continue;
        uint64_t t0 = net->profile && !marks ? now_ns() : 0;
        rc = n->k->forward(n->kctx, &n->l, n->state);
        if (net->profile) {
            if (!marks)
                n->fwd_ns += now_ns() - t0;
            else if (rc >= 0 && (rc = dlg_net_prof_node(net, i, false)) < 0)
                return mark_failed(rc, net, "after a layer's forward", err, errlen);
            n->fwd_calls++;
        }
        if (rc < 0) {
            snprintf(err, errlen, "nn: forward of layer '%s' (%s) failed%s", n->l.name,
                     dlg_layer_type_name(n->l.type),
                     rc == -DLG_EINVAL ? ": bad input (e.g. a label outside 0..K-1)" : "");
            return rc;
        }
    }
    return 0;
}

/* Why a backward kernel may refuse to run, for the message. */
static const char *backward_hint(const dlg_node *n, int rc)
{
    if (rc == -DLG_EINVAL)
        return ": bad input (e.g. a label outside 0..K-1)";
    if (rc == -DLG_ENOTSUP && !n->l.train)
        return ": the backend cannot run it in test mode (dlg_net_set_train(net, false)); "
               "switch back to training before backward";
    return "";
}

int dlg_net_run_backward(dlg_net *net, char *err, size_t errlen)
{
    net->grad_sum = 1; /* fresh gradients: this rank's own */
    bool marks = net->prof_cap > 0;
    int rc;
    if (marks && (rc = dlg_net_prof_pass(net)) < 0)
        return mark_failed(rc, net, "before the backward pass", err, errlen);
    for (int i = net->nnodes - 1; i >= 0; i--) {
        dlg_node *n = &net->nodes[i];
        if (!n->need_backward || n->fused || n->bwd_into >= 0)
            continue;
        uint64_t t0 = net->profile && !marks ? now_ns() : 0;
        rc = n->k->backward(n->kctx, &n->l, n->state);
        if (net->profile && !marks)
            n->bwd_ns += now_ns() - t0;
        else if (net->profile && rc >= 0 && (rc = dlg_net_prof_node(net, i, true)) < 0)
            return mark_failed(rc, net, "after a layer's backward", err, errlen);
        if (rc < 0) {
            snprintf(err, errlen, "nn: backward of layer '%s' (%s) on backend %s failed%s",
                     n->l.name, dlg_layer_type_name(n->l.type), net->bk->name,
                     backward_hint(n, rc));
            return rc;
        }
    }
    return 0;
}

/* One sgd_all() call over every trained param; the lists live on the
 * stack (no allocation per step) unless the net has very many params. */
#define DLG_SGD_STACK 1024
static int sgd_all(dlg_net *net, const dlg_sgd *sgd, char *err, size_t errlen)
{
    dlg_tensor *w_st[DLG_SGD_STACK];
    float mult_st[2 * DLG_SGD_STACK];
    int n = 0, rc = 0;
    for (int b = 0; b < net->nblobs; b++)
        n += dlg_blob_trained(&net->blobs[b]);
    bool heap = n > DLG_SGD_STACK;
    dlg_tensor **w = heap ? malloc((size_t)n * sizeof *w) : w_st;
    float *mult = heap ? malloc(2 * (size_t)n * sizeof *mult) : mult_st;
    if (!w || !mult) {
        snprintf(err, errlen, "nn: out of memory for the SGD list");
        rc = -DLG_ENOMEM;
    }
    for (int b = 0, k = 0; b < net->nblobs && !rc; b++) {
        dlg_blob *bl = &net->blobs[b];
        if (!dlg_blob_trained(bl))
            continue;
        w[k] = &bl->t;
        mult[k] = bl->lr_mult;
        mult[n + k] = bl->decay_mult;
        k++;
    }
    if (!rc && n && (rc = net->bk->sgd_all(net->ctx, w, mult, mult + n, n, sgd)) < 0)
        snprintf(err, errlen, "nn: SGD update of net '%s' failed%s", net->name,
                 rc == -DLG_ENOMEM ? ": out of memory" : "");
    if (heap) {
        free(w);
        free(mult);
    }
    return rc;
}

int dlg_net_run_sgd(dlg_net *net, const dlg_sgd *sgd, char *err, size_t errlen)
{
    for (int b = 0; b < net->nblobs; b++) /* params change: caches derived from them go stale */
        net->blobs[b].t.version += dlg_blob_trained(&net->blobs[b]);
    if (net->bk->sgd_all)
        return sgd_all(net, sgd, err, errlen);
    for (int b = 0; b < net->nblobs; b++) {
        dlg_blob *bl = &net->blobs[b];
        if (!dlg_blob_trained(bl))
            continue;
        int rc = net->bk->sgd(net->ctx, &bl->t, sgd->lr * bl->lr_mult, sgd->momentum,
                              sgd->weight_decay * bl->decay_mult);
        if (rc < 0) {
            snprintf(err, errlen, "nn: SGD update of '%s' failed", bl->name);
            return rc;
        }
    }
    return 0;
}

int dlg_net_forward(dlg_net *net)
{
    char err[256];
    bool took;
    int rc = dlg_net_ready_bound(net);
    if (!rc && (rc = dlg_input_take(net, &took, err, sizeof err)) < 0)
        return dlg_net_fail(net, -rc, "%s", err);
    if (!rc && (rc = dlg_net_run_forward(net, err, sizeof err)) < 0)
        return dlg_net_fail(net, -rc, "%s", err);
    return rc ? rc : dlg_net_prof_settle(net);
}

int dlg_net_backward(dlg_net *net)
{
    char err[256];
    int rc = dlg_net_ready_bound(net);
    if (!rc && !net->train)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s' was planned without train", net->name);
    if (!rc && (rc = dlg_net_run_backward(net, err, sizeof err)) < 0)
        return dlg_net_fail(net, -rc, "%s", err);
    return rc ? rc : dlg_net_prof_settle(net);
}

int dlg_net_sgd_step(dlg_net *net, const dlg_sgd *sgd)
{
    char err[256];
    int rc = dlg_net_ready_bound(net);
    /* an inference plan has no gradients: SGD would silently do nothing */
    if (!rc && !net->train)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s' was planned without train", net->name);
    if (!rc && !sgd)
        return dlg_net_fail(net, DLG_EINVAL, "nn: dlg_net_sgd_step without SGD parameters");
    if (!rc && (rc = dlg_net_run_sgd(net, sgd, err, sizeof err)) < 0)
        return dlg_net_fail(net, -rc, "%s", err);
    return rc;
}

int dlg_net_host_io(dlg_net *net, int blob, dlg_which which, size_t count, void **mem)
{
    int rc = dlg_net_ready(net);
    if (rc)
        return rc;
    if (blob < 0 || blob >= net->nblobs)
        return dlg_net_complain(net, DLG_EINVAL, "nn: no blob with id %d", blob);
    dlg_blob *b = &net->blobs[blob];
    if (count != (size_t)b->t.count)
        return dlg_net_complain(net, DLG_EINVAL, "nn: blob '%s' holds %lld floats, not %zu",
                                b->name, (long long)b->t.count, count);
    if (b->dead)
        return dlg_net_complain(net, DLG_EINVAL,
                                "nn: blob '%s': the layer reading it was folded into the one "
                                "writing it, so it is never stored; plan with keep_all or mark "
                                "it with dlg_net_keep",
                                b->name);
    if (which == DLG_DIFF ? b->shared_diff : b->shared_data)
        return dlg_net_complain(net, DLG_EINVAL,
                                "nn: blob '%s': its %s memory is reused by later layers; plan "
                                "with keep_all or mark it with dlg_net_keep",
                                b->name, which == DLG_DIFF ? "gradient" : "activation");
    *mem = which == DLG_DIFF ? b->t.diff : b->t.data;
    if (!*mem && b->producer >= 0 && net->nodes[b->producer].grad_split >= 0)
        return dlg_net_complain(net, DLG_EINVAL,
                                "nn: blob '%s': its gradient is summed inside layer '%s' from the "
                                "split after it, never stored; plan with keep_all or mark it "
                                "with dlg_net_keep",
                                b->name, net->nodes[b->producer].l.name);
    if (!*mem)
        return dlg_net_complain(net, DLG_EINVAL, "nn: blob '%s' has no gradient in this plan",
                                b->name);
    return 0;
}

int dlg_net_write(dlg_net *net, int blob, dlg_which which, const float *src, size_t count)
{
    void *mem;
    int rc = dlg_net_host_io(net, blob, which, count, &mem);
    if (rc)
        return rc;
    if (which == DLG_DATA)
        dlg_input_drop(net, blob); /* the last write wins */
    dlg_tensor *t = &net->blobs[blob].t;
    t->version += which == DLG_DATA;
    if (t->layout)
        rc = net->bk->write_opaque(net->ctx, t, mem, src);
    else
        rc = net->bk->upload(net->ctx, mem, src, count * sizeof(float));
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: writing blob '%s' failed", net->blobs[blob].name);
    return rc;
}

int dlg_net_read(dlg_net *net, int blob, dlg_which which, float *dst, size_t count)
{
    void *mem;
    int rc = dlg_net_host_io(net, blob, which, count, &mem);
    if (rc)
        return rc;
    const dlg_tensor *t = &net->blobs[blob].t;
    if (t->layout)
        rc = net->bk->read_opaque(net->ctx, t, mem, dst);
    else
        rc = net->bk->download(net->ctx, dst, mem, count * sizeof(float));
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: reading blob '%s' failed", net->blobs[blob].name);
    return rc;
}

int dlg_net_param(const dlg_net *net, const char *layer, int index)
{
    for (int i = 0; i < net->nnodes; i++)
        if (strcmp(net->nodes[i].l.name, layer) == 0) {
            if (index < 0 || index >= net->nodes[i].l.nparam)
                return -DLG_EINVAL;
            return net->nodes[i].params[index];
        }
    return -DLG_EINVAL;
}

int dlg_net_shape(const dlg_net *net, int blob, dlg_shape *out)
{
    if (blob < 0 || blob >= net->nblobs)
        return -DLG_EINVAL;
    *out = net->blobs[blob].t.shape;
    return 0;
}

int64_t dlg_net_param_total(const dlg_net *net)
{
    int64_t s = 0;
    for (int i = 0; i < net->nnodes; i++)
        s += net->nodes[i].nparams;
    return s;
}

int64_t dlg_net_macs_total(const dlg_net *net)
{
    int64_t s = 0;
    for (int i = 0; i < net->nnodes; i++)
        s += net->nodes[i].macs;
    return s;
}

/* A recurrent layer's backward runs its data gradient through time
 * whether or not its input takes one. */
static int64_t step_macs_of(const dlg_net *net, const dlg_node *n)
{
    if (!n->need_backward)
        return n->macs;
    bool wgrad = false, dgrad = n->l.type == DLG_L_LSTM;
    for (int j = 0; j < n->l.nparam; j++)
        wgrad |= net->blobs[n->params[j]].needs_grad && !net->blobs[n->params[j]].is_state;
    for (int j = 0; j < n->l.nbottom; j++)
        dgrad |= net->blobs[n->bottoms[j]].needs_grad;
    return n->macs * (1 + (int64_t)wgrad + (int64_t)dgrad);
}

int64_t dlg_net_step_macs(const dlg_net *net)
{
    if (!net->planned)
        return -DLG_EINVAL;
    int64_t s = 0;
    for (int i = 0; i < net->nnodes; i++)
        s += step_macs_of(net, &net->nodes[i]);
    return s;
}

int dlg_net_layer_count(const dlg_net *net) { return net->nnodes; }

int dlg_net_layer_info(const dlg_net *net, int index, dlg_layer_info *out)
{
    if (index < 0 || index >= net->nnodes)
        return -DLG_EINVAL;
    const dlg_node *n = &net->nodes[index];
    out->name = n->l.name;
    out->type = dlg_layer_type_name(n->l.type);
    out->params = n->nparams;
    out->macs = n->macs;
    out->out = net->blobs[n->tops[0]].t.shape;
    return 0;
}

const char *dlg_net_layer_impl(const dlg_net *net, int index)
{
    if (!net->planned || index < 0 || index >= net->nnodes)
        return NULL;
    const dlg_node *n = &net->nodes[index];
    if (n->fused)
        return "fused";
    const char *s = n->k && n->k->impl && n->state ? n->k->impl(n->state) : NULL;
    if (s)
        return s;
    return n->kctx == net->fctx && net->bk->fallback ? net->bk->fallback->name : net->bk->name;
}
