/* Sequence layers: embedding and LSTM builders, their shape and parameter
 * rules, and decoder tying.  Kernels live in ref/ref_lstm.c and
 * cpu/cpu_lstm.c. */
#include "net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dlg_embedding(dlg_net *net, const char *name, int ids, int vocab, int dim)
{
    dlg_node p = {0};
    p.l.p.embed.vocab = vocab;
    p.nparams = dim; /* carried to inference, as conv/fc do */
    return dlg_net_add_node(net, name, DLG_L_EMBED, 1, &ids, &p);
}

int dlg_lstm(dlg_net *net, const char *name, int x, int h0, int c0, int hidden, int steps,
             int *hT, int *cT)
{
    dlg_node p = {0};
    p.l.p.lstm = (dlg_lstm_param){steps, hidden};
    int xs[3] = {x, h0, c0};
    int y = dlg_net_add_node(net, name, DLG_L_LSTM, 3, xs, &p);
    if (y >= 0) {
        const dlg_node *n = &net->nodes[net->nnodes - 1];
        if (hT)
            *hT = n->tops[1];
        if (cT)
            *cT = n->tops[2];
    }
    return y;
}

/* U(-a, a) through the Xavier filler: bound sqrt(3 / fan_in) = a. */
static int64_t fan_for_bound(double a) { return (int64_t)llround(3.0 / (a * a)); }

static int infer_embed(dlg_net *net, dlg_node *n, const dlg_shape *ids)
{
    int64_t dim = n->nparams, vocab = n->l.p.embed.vocab;
    n->nparams = 0;
    if (vocab < 1 || dim < 1)
        return dlg_net_fail(net, DLG_EINVAL, "nn: embedding '%s': vocab and dim must be positive",
                            n->l.name);
    if (dlg_shape_inner(ids) != 1)
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: embedding '%s': ids must be one per row (N x 1 x 1 x 1)",
                            n->l.name);
    int rc = dlg_layer_add_top(net, n, n->l.name, dlg_shape4(ids->d[0], dim, 1, 1));
    if (!rc)
        rc = dlg_layer_add_param(net, n, dlg_shape4(vocab, dim, 1, 1),
                                 (dlg_filler){DLG_FILL_XAVIER, 0}, fan_for_bound(0.1), 1, 1);
    return rc;
}

/* Adds the tops after the first (LSTM: hT, cT). */
static int add_more_tops(dlg_net *net, dlg_node *n, int count, const char *const *suffix,
                         dlg_shape s)
{
    int *t = realloc(n->tops, (size_t)count * sizeof(int));
    if (!t)
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory in layer '%s'", n->l.name);
    n->tops = t;
    for (int i = 1; i < count; i++) {
        char name[300];
        snprintf(name, sizeof name, "%s/%s", n->l.name, suffix[i - 1]);
        int id = dlg_net_add_blob(net, name, &s);
        if (id < 0)
            return id;
        net->blobs[id].producer = (int)(n - net->nodes);
        n->tops[i] = id;
        n->l.ntop = i + 1;
    }
    return 0;
}

static int infer_lstm(dlg_net *net, dlg_node *n, const dlg_shape *x)
{
    const dlg_lstm_param *p = &n->l.p.lstm;
    int64_t H = p->hidden, T = p->steps, I = dlg_shape_inner(x);
    if (H < 1 || T < 1)
        return dlg_net_fail(net, DLG_EINVAL, "nn: lstm '%s': hidden and steps must be positive",
                            n->l.name);
    if (x->d[0] % T)
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: lstm '%s': %lld input rows are not a multiple of %lld steps",
                            n->l.name, (long long)x->d[0], (long long)T);
    int64_t B = x->d[0] / T;
    for (int i = 1; i < 3; i++) {
        const dlg_blob *s = &net->blobs[n->bottoms[i]];
        if (s->t.count != B * H || s->t.shape.d[0] != B)
            return dlg_net_fail(net, DLG_EINVAL,
                                "nn: lstm '%s': initial state '%s' must be %lld x %lld (batch x "
                                "hidden), has %lld values",
                                n->l.name, s->name, (long long)B, (long long)H,
                                (long long)s->t.count);
    }
    static const char *const suffix[2] = {"hT", "cT"};
    int rc = dlg_layer_add_top(net, n, n->l.name, dlg_shape4(x->d[0], H, 1, 1));
    if (!rc)
        rc = add_more_tops(net, n, 3, suffix, dlg_shape4(B, H, 1, 1));
    dlg_filler f = {DLG_FILL_XAVIER, 0};
    int64_t fan = 3 * H; /* bound 1/sqrt(H) */
    if (!rc)
        rc = dlg_layer_add_param(net, n, dlg_shape4(I, 4 * H, 1, 1), f, fan, 1, 1);
    if (!rc)
        rc = dlg_layer_add_param(net, n, dlg_shape4(H, 4 * H, 1, 1), f, fan, 1, 1);
    dlg_shape bs = {1, {4 * H, 1, 1, 1, 1}};
    if (!rc)
        rc = dlg_layer_add_param(net, n, bs, f, fan, 1, 0);
    if (!rc) /* both weight blobs exist, so this stays far from overflow */
        n->macs = 4 * H * (I + H);
    return rc;
}

int dlg_layer_infer_seq(dlg_net *net, dlg_node *n)
{
    dlg_shape x = net->blobs[n->bottoms[0]].t.shape; /* a copy: blobs may move */
    return n->l.type == DLG_L_EMBED ? infer_embed(net, n, &x) : infer_lstm(net, n, &x);
}

static int find_node(const dlg_net *net, const char *name)
{
    for (int i = 0; i < net->nnodes; i++)
        if (strcmp(net->nodes[i].l.name, name) == 0)
            return i;
    return -1;
}

/* Whether fc node fn's weight is some embedding's table. */
static bool tied_fc(const dlg_net *net, const dlg_node *fn)
{
    for (int i = 0; i < net->nnodes; i++)
        if (net->nodes[i].l.type == DLG_L_EMBED && net->nodes[i].params[0] == fn->params[0])
            return true;
    return false;
}

int dlg_net_tie(dlg_net *net, const char *fc, const char *embedding)
{
    if (net->err)
        return net->err;
    if (net->planned)
        return dlg_net_fail(net, DLG_EINVAL, "nn: tie '%s' to '%s' after dlg_net_plan", fc,
                            embedding);
    int f = find_node(net, fc), e = find_node(net, embedding);
    if (f < 0 || e < 0 || net->nodes[f].l.type != DLG_L_FC ||
        net->nodes[e].l.type != DLG_L_EMBED || f < e)
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: tie: need an fc layer '%s' after an embedding layer '%s'", fc,
                            embedding);
    dlg_node *fn = &net->nodes[f], *en = &net->nodes[e];
    /* One decoder per table: a second fc's backward would overwrite the
     * first's gradient, and re-tying an fc would retire the table itself. */
    if (en->l.p.embed.accumulate || tied_fc(net, fn))
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: tie '%s' to '%s': the fc or the embedding is already tied", fc,
                            embedding);
    dlg_blob *w = &net->blobs[fn->params[0]];
    const dlg_blob *table = &net->blobs[en->params[0]];
    if (w->t.count != table->t.count || w->t.shape.d[0] != table->t.shape.d[0])
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: tie '%s' to '%s': weight %lld x %lld differs from table %lld x "
                            "%lld (the decoder input must equal the embedding size)",
                            fc, embedding, (long long)w->t.shape.d[0],
                            (long long)dlg_shape_inner(&w->t.shape),
                            (long long)table->t.shape.d[0],
                            (long long)dlg_shape_inner(&table->t.shape));
    /* The fc's own weight blob is retired (one float, no gradient, never
     * read): blob ids stay stable. */
    fn->nparams -= w->t.count;
    w->is_param = false;
    w->t.shape = dlg_shape4(1, 1, 1, 1);
    w->t.count = 1;
    fn->params[0] = en->params[0];
    /* backward runs the fc first (it overwrites the table's gradient),
     * then the embedding adds its part */
    en->l.p.embed.accumulate = true;
    return 0;
}

int dlg_net_set_param_mult(dlg_net *net, int param_blob, float lr_mult, float decay_mult)
{
    if (net->err)
        return net->err;
    if (net->planned || param_blob < 0 || param_blob >= net->nblobs ||
        !net->blobs[param_blob].is_param || net->blobs[param_blob].is_state || !(lr_mult >= 0) ||
        !(decay_mult >= 0))
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: set_param_mult: blob %d is not a trained parameter of an unplanned "
                            "net (batch-norm statistics are not), or a multiplier is negative",
                            param_blob);
    net->blobs[param_blob].lr_mult = lr_mult;
    net->blobs[param_blob].decay_mult = decay_mult;
    return 0;
}
