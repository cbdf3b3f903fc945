/* Planning: split layers for shared blobs, gradient flags, one-time
 * allocation of every activation, gradient, momentum and workspace, and
 * per-layer kernel setup on the chosen backend. */
#include "input.h"
#include "net.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A blob read by k > 1 layers gets a split layer with k outputs that share
 * its data but have their own diffs, which the split sums in backward (as
 * Caffe does).  Kernels therefore always overwrite bottom diffs. */
static int insert_splits(dlg_net *net)
{
    int nb = net->nblobs, nn = net->nnodes;
    int *uses = calloc((size_t)nb, sizeof(int));
    int *split = malloc((size_t)nb * sizeof(int));
    int *order = malloc((size_t)(nn + nb) * sizeof(int));
    int rc = 0;
    if (!uses || !split || !order) {
        rc = dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
        goto out;
    }
    for (int i = 0; i < nn; i++)
        for (int j = 0; j < net->nodes[i].l.nbottom; j++)
            uses[net->nodes[i].bottoms[j]]++;
    for (int b = 0; b < nb; b++) {
        split[b] = -1;
        if (uses[b] < 2)
            continue;
        if (net->nnodes == net->cap_nodes) {
            dlg_node *p = realloc(net->nodes, (size_t)(2 * net->cap_nodes) * sizeof *p);
            if (!p) {
                rc = dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
                goto out;
            }
            net->nodes = p;
            net->cap_nodes *= 2;
        }
        dlg_node *s = &net->nodes[net->nnodes];
        memset(s, 0, sizeof *s);
        char name[300];
        snprintf(name, sizeof name, "%s/split", net->blobs[b].name);
        s->l.type = DLG_L_SPLIT;
        s->l.name = strdup(name);
        s->l.nbottom = 1;
        s->l.ntop = uses[b];
        s->bottoms = malloc(sizeof(int));
        s->tops = malloc((size_t)uses[b] * sizeof(int));
        for (int i = 0; i < DLG_LAYER_MAX_PARAMS; i++)
            s->params[i] = -1;
        split[b] = net->nnodes++;
        if (!s->l.name || !s->bottoms || !s->tops) {
            rc = dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
            goto out;
        }
        s->bottoms[0] = b;
        for (int k = 0; k < uses[b]; k++) {
            snprintf(name, sizeof name, "%s/split%d", net->blobs[b].name, k);
            dlg_shape sh = net->blobs[b].t.shape;
            int id = dlg_net_add_blob(net, name, &sh);
            if (id < 0) {
                rc = id;
                goto out;
            }
            net->blobs[id].alias_of = b;
            net->nodes[split[b]].tops[k] = id;
        }
        uses[b] = 0; /* reused below as the next output to hand out */
    }
    /* rewire consumers, then order: splits of inputs first, each other
     * split right after the layer producing its blob */
    int no = 0;
    for (int b = 0; b < nb; b++)
        if (split[b] >= 0 && net->blobs[b].producer < 0)
            order[no++] = split[b];
    for (int i = 0; i < nn; i++) {
        dlg_node *n = &net->nodes[i];
        for (int j = 0; j < n->l.nbottom; j++) {
            int b = n->bottoms[j];
            if (split[b] >= 0)
                n->bottoms[j] = net->nodes[split[b]].tops[uses[b]++];
        }
        order[no++] = i;
        for (int t = 0; t < n->l.ntop; t++)
            if (split[n->tops[t]] >= 0)
                order[no++] = split[n->tops[t]];
    }
    dlg_node *sorted = malloc((size_t)net->cap_nodes * sizeof *sorted);
    if (!sorted) {
        rc = dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
        goto out;
    }
    for (int i = 0; i < no; i++)
        sorted[i] = net->nodes[order[i]];
    free(net->nodes);
    net->nodes = sorted;
    for (int i = 0; i < no; i++)
        for (int t = 0; t < sorted[i].l.ntop; t++)
            net->blobs[sorted[i].tops[t]].producer = i;
out:
    free(uses);
    free(split);
    free(order);
    return rc;
}

/* Which blobs need gradients, which layers run backward. */
static void mark_grads(dlg_net *net, bool train)
{
    for (int b = 0; b < net->nblobs; b++) {
        dlg_blob *bl = &net->blobs[b];
        bl->needs_grad = train && ((bl->is_param && bl->lr_mult > 0) ||
                                   (bl->is_input && !bl->is_label && net->input_grads));
    }
    /* a layer's backward writes the gradient of every param it has once it
     * writes any (the kernels take them together): a frozen weight or bias
     * beside a trained one gets a gradient that SGD then skips */
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        bool any = false;
        for (int j = 0; j < n->l.nparam; j++)
            any |= net->blobs[n->params[j]].needs_grad;
        for (int j = 0; any && j < n->l.nparam; j++)
            net->blobs[n->params[j]].needs_grad |= !net->blobs[n->params[j]].is_state;
    }
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        bool nb = false;
        for (int j = 0; j < n->l.nbottom; j++)
            nb |= net->blobs[n->bottoms[j]].needs_grad;
        for (int j = 0; j < n->l.nparam; j++)
            nb |= net->blobs[n->params[j]].needs_grad;
        n->need_backward = train && nb;
        for (int t = 0; t < n->l.ntop; t++)
            net->blobs[n->tops[t]].needs_grad = n->need_backward;
    }
}

static int bind_tensors(dlg_net *net)
{
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        dlg_layer *l = &n->l;
        l->bottom = calloc((size_t)l->nbottom, sizeof *l->bottom);
        l->top = calloc((size_t)l->ntop, sizeof *l->top);
        l->prop_down = calloc((size_t)l->nbottom, sizeof *l->prop_down);
        if (!l->bottom || !l->top || !l->prop_down)
            return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
        for (int j = 0; j < l->nbottom; j++) {
            l->bottom[j] = &net->blobs[n->bottoms[j]].t;
            l->prop_down[j] = net->blobs[n->bottoms[j]].needs_grad;
        }
        for (int j = 0; j < l->ntop; j++)
            l->top[j] = &net->blobs[n->tops[j]].t;
        l->param_grad = false;
        for (int j = 0; j < l->nparam; j++) {
            l->param[j] = &net->blobs[n->params[j]].t;
            l->param_grad |= net->blobs[n->params[j]].needs_grad;
        }
        l->train = net->train;
        l->backward = n->need_backward;
        l->seed = net->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));
    }
    /* an add that took over a split's backward reads its outputs' diffs */
    for (int i = 0; i < net->nnodes; i++) {
        dlg_layer *l = &net->nodes[i].l;
        int split = net->nodes[i].grad_split;
        const dlg_node *s = split >= 0 ? &net->nodes[split] : NULL;
        l->ntop_parts = s ? s->l.ntop : 0;
        l->top_parts = s ? s->l.top : NULL;
    }
    return 0;
}

/* The backend's kernels where they accept the layer, else the fallback's. */
static int choose_kernels(dlg_net *net)
{
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        const dlg_kernels *k = net->bk->kernels[n->l.type];
        n->kctx = net->ctx;
        if (n->fused)
            continue;
        if (!k || (k->accepts && !k->accepts(&n->l))) {
            k = net->bk->fallback ? net->bk->fallback->kernels[n->l.type] : NULL;
            n->kctx = net->fctx;
        }
        if (!k)
            return dlg_net_fail(net, DLG_ENOTSUP, "nn: layer '%s' (%s): backend %s cannot run it",
                                n->l.name, dlg_layer_type_name(n->l.type), net->bk->name);
        n->k = k;
    }
    return 0;
}

/* A blob may take a backend layout iff it is read, and every reader
 * handles such layouts (a split only if all of its outputs may). */
static int mark_opaque(dlg_net *net)
{
    bool *all = malloc((size_t)net->nblobs * sizeof(bool));
    int *uses = calloc((size_t)net->nblobs, sizeof(int));
    if (!all || !uses) {
        free(all);
        free(uses);
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
    }
    for (int b = 0; b < net->nblobs; b++)
        all[b] = true;
    /* a param read by one layer may take that layer's layout */
    for (int i = 0; i < net->nnodes; i++)
        for (int j = 0; j < net->nodes[i].l.nparam; j++)
            uses[net->nodes[i].params[j]]++;
    for (int b = 0; b < net->nblobs; b++)
        if (net->blobs[b].is_param)
            net->blobs[b].t.opaque_ok = uses[b] == 1 && net->bk->read_opaque;
    for (int i = net->nnodes - 1; i >= 0; i--) {
        dlg_node *n = &net->nodes[i];
        if (n->fused)
            continue;
        bool aware = n->k->any_layout;
        for (int t = 0; t < n->l.ntop; t++) {
            int b = n->tops[t];
            net->blobs[b].t.opaque_ok = uses[b] > 0 && all[b];
            if (n->l.type == DLG_L_SPLIT)
                aware &= net->blobs[b].t.opaque_ok;
        }
        for (int j = 0; j < n->l.nbottom; j++) {
            uses[n->bottoms[j]]++;
            all[n->bottoms[j]] &= aware;
        }
    }
    free(all);
    free(uses);
    return 0;
}

bool dlg_net_plan_stopped(dlg_net *net)
{
    if (!net->stop || !net->stop(net->stop_ctx))
        return false;
    dlg_net_fail(net, DLG_ESTOP, "nn: planning '%s' stopped, as asked", net->name);
    return true;
}

static int setup_kernels(dlg_net *net)
{
    size_t ws = 0;
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        char err[256] = "";
        n->ws = 0;
        /* a layer's setup may take a second (a cpu convolution times its
         * algorithms, cuda searches them): a stop is asked before each */
        if (dlg_net_plan_stopped(net))
            return net->err;
        if (n->fused)
            continue;
        int rc = n->k->setup(n->kctx, &n->l, &n->state, &n->ws, err, sizeof err);
        bool opaque_in = false;
        for (int j = 0; j < n->l.nbottom; j++)
            opaque_in |= n->l.bottom[j]->layout != NULL;
        if (rc == -DLG_ENOTSUP && n->kctx == net->ctx && net->bk->fallback &&
            net->bk->fallback->kernels[n->l.type] && !opaque_in) {
            n->k = net->bk->fallback->kernels[n->l.type];
            n->kctx = net->fctx;
            for (int t = 0; t < n->l.ntop; t++)
                n->l.top[t]->layout = NULL;
            rc = n->k->setup(n->kctx, &n->l, &n->state, &n->ws, err, sizeof err);
        }
        if (rc < 0) {
            n->state = NULL;
            return dlg_net_fail(net, -rc, "nn: layer '%s' (%s) on backend %s: %s", n->l.name,
                                dlg_layer_type_name(n->l.type), net->bk->name,
                                *err                  ? err
                                : rc == -DLG_ENOMEM ? "out of memory"
                                                    : "not supported");
        }
        if (n->ws > ws)
            ws = n->ws;
    }
    if (ws && !(net->ws = net->bk->alloc(net->ctx, ws)))
        return dlg_net_fail(net, DLG_ENOMEM, "nn: net '%s': out of memory for a %zu-byte workspace",
                            net->name, ws);
    for (int i = 0; i < net->nnodes; i++)
        net->nodes[i].l.ws = net->ws;
    return 0;
}

int dlg_net_plan_memory(dlg_net *net)
{
    int rc = insert_splits(net);
    if (!rc) {
        mark_grads(net, net->train);
        rc = dlg_net_fuse(net);
    }
    if (!rc)
        rc = bind_tensors(net);
    if (!rc)
        rc = choose_kernels(net);
    if (!rc)
        rc = mark_opaque(net);
    if (!rc) {
        dlg_net_offer_in_place(net);
        rc = setup_kernels(net);
    }
    if (!rc) {
        dlg_net_take_in_place(net);
        rc = dlg_net_alloc_blobs(net);
    }
    if (!rc)
        rc = dlg_net_init_params(net);
    if (!rc)
        rc = dlg_net_plan_grad_list(net);
    return rc;
}

void dlg_net_free_memory(dlg_net *net)
{
    if (!net->bk)
        return;
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        if (n->k && n->k->destroy && n->state)
            n->k->destroy(n->kctx, n->state);
        n->state = NULL;
        free(n->l.bottom);
        free(n->l.top);
        free(n->l.prop_down);
        n->l.bottom = n->l.top = n->l.top_parts = NULL; /* top_parts: a split's top */
        n->l.prop_down = NULL;
    }
    dlg_input_free(net);
    dlg_net_prof_free(net);
    dlg_net_free_grad_list(net);
    dlg_net_free_reduce(net);
    dlg_net_free_blobs(net);
    net->bk->free(net->ctx, net->ws);
    net->ws = NULL;
    if (net->fctx)
        net->bk->fallback->close(net->fctx);
    net->bk->close(net->ctx);
    net->bk = NULL;
    net->ctx = net->fctx = NULL;
}

/* Values a fill draws and uploads between two stop requests: about 10 ms
 * (VGG16's fc6 alone has 103 million, a second of them). */
#define FILL_CHUNK (1 << 20)

/* Values [from, to) of the normal stream `seed` x scale into buf: pairs
 * of values on the cell's OpenMP team (an odd end takes half a pair). */
static void fill_gauss(float *buf, int64_t from, int64_t to, uint64_t seed, double scale)
{
    int64_t k0 = from / 2, k1 = (to + 1) / 2;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (k1 - k0 > 4096)
#endif
    for (int64_t k = k0; k < k1; k++) {
        double a, c;
        dlg_rng_gauss_pair_at(seed, (uint64_t)k, &a, &c);
        if (2 * k >= from)
            buf[2 * k] = (float)(scale * a);
        if (2 * k + 1 < to)
            buf[2 * k + 1] = (float)(scale * c);
    }
}

/* Values [from, to) of blob b into buf, drawn from the stream `seed`.
 * Counter-based (rng.h): the same values whatever the chunks and threads.
 * VGG16's 138 million took 4.4 s drawn one by one here, 1.3 s in pairs on
 * 2 cores. */
static void fill(const dlg_blob *b, float *buf, int64_t from, int64_t to, uint64_t seed)
{
    double v = b->fill.value, fan = b->fan_in > 0 ? (double)b->fan_in : 1.0;
    switch (b->fill.type) {
    case DLG_FILL_GAUSSIAN:
        fill_gauss(buf, from, to, seed, v);
        break;
    case DLG_FILL_MSRA:
        fill_gauss(buf, from, to, seed, sqrt(2.0 / fan));
        break;
    case DLG_FILL_XAVIER: {
        double scale = sqrt(3.0 / fan);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (to - from > 8192)
#endif
        for (int64_t i = from; i < to; i++)
            buf[i] = (float)(scale * (2.0 * dlg_rng_uniform_at(seed, (uint64_t)i) - 1.0));
        break;
    }
    default:
        for (int64_t i = from; i < to; i++)
            buf[i] = (float)v;
    }
}

/* Blob b's initial values (the same whatever the chunks), drawn into buf
 * and uploaded: a plain layout chunk by chunk as drawn, a backend's own
 * whole (a convolution's weights, a few million at most).  A stop is
 * asked before each chunk: 0, -DLG_ESTOP, or the upload's failure. */
static int init_blob(dlg_net *net, dlg_blob *b, float *buf, uint64_t seed)
{
    b->t.version++;
    for (int64_t i = 0; i < b->t.count; i += FILL_CHUNK) {
        if (dlg_net_plan_stopped(net))
            return net->err;
        int64_t end = b->t.count - i < FILL_CHUNK ? b->t.count : i + FILL_CHUNK;
        fill(b, buf, i, end, seed);
        int rc = b->t.layout ? 0
                             : net->bk->upload(net->ctx, (char *)b->t.data + (size_t)i * sizeof(float), buf + i,
                                               (size_t)(end - i) * sizeof(float));
        if (rc < 0)
            return rc;
    }
    return b->t.layout ? net->bk->write_opaque(net->ctx, &b->t, b->t.data, buf) : 0;
}

int dlg_net_init_params(dlg_net *net)
{
    int64_t max = 0;
    for (int b = 0; b < net->nblobs; b++)
        if (net->blobs[b].is_param && net->blobs[b].t.count > max)
            max = net->blobs[b].t.count;
    float *buf = malloc((size_t)(max ? max : 1) * sizeof(float));
    if (!buf)
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory initialising '%s'", net->name);
    int rc = 0;
    for (int b = 0; b < net->nblobs && !rc; b++) {
        dlg_blob *bl = &net->blobs[b];
        if (!bl->is_param)
            continue;
        rc = init_blob(net, bl, buf, net->seed + 0x632be59bd9b4e019ull * (uint64_t)(b + 1));
    }
    free(buf);
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: uploading parameters of '%s' failed", net->name);
    return 0;
}
