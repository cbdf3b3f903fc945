/* Builder API: each call appends one layer, infers shapes and returns the
 * id of its output blob.  Errors are sticky (see nn.h). */
#include "net.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* msg, with ": out of memory" where code is DLG_ENOMEM and msg does not
 * say it: a backend's call reports its out of memory by code alone */
static void say_out_of_memory(char *msg, size_t len, int code)
{
    size_t n = strlen(msg);
    if (code == DLG_ENOMEM && !strstr(msg, "out of") && n < len)
        snprintf(msg + n, len - n, ": out of memory");
}

int dlg_net_fail(dlg_net *net, int code, const char *fmt, ...)
{
    if (net->err == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(net->msg, sizeof net->msg, fmt, ap);
        va_end(ap);
        say_out_of_memory(net->msg, sizeof net->msg, code);
        net->err = -code;
    }
    return -code;
}

int dlg_net_complain(dlg_net *net, int code, const char *fmt, ...)
{
    if (net->err == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(net->msg, sizeof net->msg, fmt, ap);
        va_end(ap);
    }
    return -code;
}

int dlg_net_create(dlg_net **out, const char *name)
{
    dlg_net *net = calloc(1, sizeof *net);
    if (!net)
        return -DLG_ENOMEM;
    net->name = strdup(name ? name : "net");
    if (!net->name) {
        free(net);
        return -DLG_ENOMEM;
    }
    net->wfill = (dlg_filler){DLG_FILL_GAUSSIAN, 0.01f};
    net->bfill = (dlg_filler){DLG_FILL_CONSTANT, 0.0f};
    *out = net;
    return 0;
}

void dlg_net_destroy(dlg_net *net)
{
    if (!net)
        return;
    dlg_net_free_memory(net);
    for (int i = 0; i < net->nblobs; i++)
        free(net->blobs[i].name);
    for (int i = 0; i < net->nnodes; i++) {
        free((char *)net->nodes[i].l.name);
        free(net->nodes[i].bottoms);
        free(net->nodes[i].tops);
    }
    free(net->blobs);
    free(net->nodes);
    free(net->name);
    free(net);
}

int dlg_net_status(const dlg_net *net) { return net ? net->err : -DLG_EINVAL; }
const char *dlg_net_error(const dlg_net *net) { return net ? net->msg : "no net"; }

void dlg_net_set_fillers(dlg_net *net, dlg_filler weight, dlg_filler bias)
{
    net->wfill = weight;
    net->bfill = bias;
}

void dlg_net_set_pool_rounding(dlg_net *net, dlg_pool_rounding rounding)
{
    if (rounding != DLG_POOL_CEIL && rounding != DLG_POOL_FLOOR) {
        dlg_net_fail(net, DLG_EINVAL, "nn: net '%s': pool rounding %d is neither ceil (%d) nor "
                     "floor (%d)", net->name, (int)rounding, DLG_POOL_CEIL, DLG_POOL_FLOOR);
        return;
    }
    net->pool_floor = rounding == DLG_POOL_FLOOR;
}

int dlg_net_blob(const dlg_net *net, const char *name)
{
    for (int i = 0; i < net->nblobs; i++)
        if (strcmp(net->blobs[i].name, name) == 0)
            return i;
    return -DLG_EINVAL;
}

int dlg_net_add_blob(dlg_net *net, const char *name, const dlg_shape *shape)
{
    if (dlg_net_blob(net, name) >= 0)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s': duplicate blob name '%s'", net->name,
                            name);
    int64_t count = 1;
    for (int i = 0; i < shape->ndim; i++) {
        if (shape->d[i] <= 0)
            return dlg_net_fail(net, DLG_EINVAL,
                                "nn: blob '%s': dimension %d is %lld (must be positive)", name, i,
                                (long long)shape->d[i]);
        if (!dlg_mul_ok(count, shape->d[i], &count) || count > DLG_NN_MAX_COUNT)
            return dlg_net_fail(net, DLG_EINVAL,
                                "nn: blob '%s': more than %lld elements (dimension %d is %lld)",
                                name, (long long)DLG_NN_MAX_COUNT, i, (long long)shape->d[i]);
    }
    if (net->nblobs == net->cap_blobs) {
        int cap = net->cap_blobs ? 2 * net->cap_blobs : 64;
        dlg_blob *b = realloc(net->blobs, (size_t)cap * sizeof *b);
        if (!b)
            return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory adding blob '%s'", name);
        net->blobs = b;
        net->cap_blobs = cap;
    }
    dlg_blob *b = &net->blobs[net->nblobs];
    memset(b, 0, sizeof *b);
    b->name = strdup(name);
    if (!b->name)
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory adding blob '%s'", name);
    b->t.shape = *shape;
    b->t.dtype = DLG_F32;
    b->t.count = count;
    b->producer = -1;
    b->alias_of = -1;
    return net->nblobs++;
}

/* Appends a node with the given inputs, runs shape inference, returns its
 * first output blob. */
static int add_node(dlg_net *net, const char *name, dlg_layer_type type, int nb, const int *bottoms,
                    const dlg_node *proto)
{
    if (net->err)
        return net->err;
    if (net->planned)
        return dlg_net_fail(net, DLG_EINVAL, "nn: layer '%s' added after dlg_net_plan", name);
    if (!name || !*name)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s': layer without a name", net->name);
    for (int i = 0; i < net->nnodes; i++)
        if (strcmp(net->nodes[i].l.name, name) == 0)
            return dlg_net_fail(net, DLG_EINVAL, "nn: duplicate layer name '%s'", name);
    for (int i = 0; i < nb; i++)
        if (bottoms[i] < 0 || bottoms[i] >= net->nblobs || net->blobs[bottoms[i]].is_param)
            return dlg_net_fail(net, DLG_EINVAL, "nn: layer '%s': input %d is not a blob id (%d)",
                                name, i, bottoms[i]);
    if (net->nnodes == net->cap_nodes) {
        int cap = net->cap_nodes ? 2 * net->cap_nodes : 64;
        dlg_node *n = realloc(net->nodes, (size_t)cap * sizeof *n);
        if (!n)
            return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory adding layer '%s'", name);
        net->nodes = n;
        net->cap_nodes = cap;
    }
    dlg_node *n = &net->nodes[net->nnodes];
    *n = *proto;
    n->l.type = type;
    n->l.name = strdup(name);
    n->l.nbottom = nb;
    n->bottoms = malloc((size_t)(nb ? nb : 1) * sizeof(int));
    if (!n->l.name || !n->bottoms) {
        free((char *)n->l.name);
        free(n->bottoms);
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory adding layer '%s'", name);
    }
    memcpy(n->bottoms, bottoms, (size_t)nb * sizeof(int));
    for (int i = 0; i < DLG_LAYER_MAX_PARAMS; i++)
        n->params[i] = -1;
    net->nnodes++;
    int rc = dlg_layer_infer(net, n);
    if (rc < 0)
        return rc;
    return n->tops[0];
}

static int add_input(dlg_net *net, const char *name, dlg_shape s, bool label)
{
    if (net->err)
        return net->err;
    if (net->planned)
        return dlg_net_fail(net, DLG_EINVAL, "nn: input '%s' added after dlg_net_plan", name);
    int id = dlg_net_add_blob(net, name, &s);
    if (id >= 0) {
        net->blobs[id].is_input = true;
        net->blobs[id].is_label = label;
    }
    return id;
}

int dlg_input(dlg_net *net, const char *name, int n, int c, int h, int w)
{
    return add_input(net, name, dlg_shape4(n, c, h, w), false);
}

int dlg_labels(dlg_net *net, const char *name, int n)
{
    return add_input(net, name, dlg_shape4(n, 1, 1, 1), true);
}

int dlg_conv_ex(dlg_net *net, const char *name, int x, const dlg_conv_spec *s)
{
    dlg_node p = {0};
    p.l.p.conv = (dlg_conv_param){s->kh,
                                  s->kw,
                                  s->sh,
                                  s->sw,
                                  s->ph,
                                  s->pw,
                                  s->dh ? s->dh : 1,
                                  s->dw ? s->dw : 1,
                                  s->groups ? s->groups : 1,
                                  !s->no_bias,
                                  NULL,
                                  false,
                                  false,
                                  false};
    p.nparams = s->out_c; /* carried to inference: output channels */
    return add_node(net, name, DLG_L_CONV, 1, &x, &p);
}

int dlg_conv_dilated(dlg_net *net, const char *name, int x, int out_c, int k, int stride, int pad,
                     int dilation, int groups)
{
    dlg_conv_spec s = {out_c, k, k, stride, stride, pad, pad, dilation, dilation, groups, false};
    return dlg_conv_ex(net, name, x, &s);
}

int dlg_conv(dlg_net *net, const char *name, int x, int out_c, int k, int stride, int pad,
             int groups)
{
    return dlg_conv_dilated(net, name, x, out_c, k, stride, pad, 1, groups);
}

static int pool(dlg_net *net, const char *name, int x, dlg_pool_mode m, int k, int s, int pad,
                bool global)
{
    dlg_node p = {0};
    p.l.p.pool = (dlg_pool_param){m, k, k, s, s, pad, pad, global, net->pool_floor};
    return add_node(net, name, DLG_L_POOL, 1, &x, &p);
}

int dlg_max_pool(dlg_net *net, const char *name, int x, int k, int stride, int pad)
{
    return pool(net, name, x, DLG_POOL_MAX, k, stride, pad, false);
}

int dlg_avg_pool(dlg_net *net, const char *name, int x, int k, int stride, int pad)
{
    return pool(net, name, x, DLG_POOL_AVG, k, stride, pad, false);
}

int dlg_global_avg_pool(dlg_net *net, const char *name, int x)
{
    return pool(net, name, x, DLG_POOL_AVG, 0, 1, 0, true);
}

int dlg_lrn(dlg_net *net, const char *name, int x, int size, float alpha, float beta, float k)
{
    dlg_node p = {0};
    p.l.p.lrn = (dlg_lrn_param){size, alpha, beta, k};
    return add_node(net, name, DLG_L_LRN, 1, &x, &p);
}

int dlg_relu(dlg_net *net, const char *name, int x)
{
    dlg_node p = {0};
    return add_node(net, name, DLG_L_RELU, 1, &x, &p);
}

int dlg_batchnorm(dlg_net *net, const char *name, int x, float eps)
{
    dlg_node p = {0};
    p.l.p.bn = (dlg_bn_param){.eps = eps, .momentum = 0.1f};
    return add_node(net, name, DLG_L_BN, 1, &x, &p);
}

int dlg_fc(dlg_net *net, const char *name, int x, int out)
{
    dlg_node p = {0};
    p.nparams = out;
    return add_node(net, name, DLG_L_FC, 1, &x, &p);
}

int dlg_dropout(dlg_net *net, const char *name, int x, float ratio)
{
    dlg_node p = {0};
    p.l.p.dropout_ratio = ratio;
    return add_node(net, name, DLG_L_DROPOUT, 1, &x, &p);
}

int dlg_concat(dlg_net *net, const char *name, int n, const int *xs)
{
    dlg_node p = {0};
    if (n < 1 && !net->err)
        return dlg_net_fail(net, DLG_EINVAL, "nn: concat '%s' needs at least one input", name);
    return add_node(net, name, DLG_L_CONCAT, n, xs, &p);
}

int dlg_add(dlg_net *net, const char *name, int a, int b)
{
    dlg_node p = {0};
    int xs[2] = {a, b};
    return add_node(net, name, DLG_L_ADD, 2, xs, &p);
}

int dlg_softmax(dlg_net *net, const char *name, int x)
{
    dlg_node p = {0};
    return add_node(net, name, DLG_L_SOFTMAX, 1, &x, &p);
}

int dlg_softmax_loss(dlg_net *net, const char *name, int logits, int labels)
{
    return dlg_softmax_loss_weighted(net, name, logits, labels, 1.0f);
}

int dlg_softmax_loss_weighted(dlg_net *net, const char *name, int logits, int labels,
                              float weight)
{
    dlg_node p = {0};
    int xs[2] = {logits, labels};
    if (!net->err && !(weight > 0 && weight < 1e6f))
        return dlg_net_fail(net, DLG_EINVAL, "nn: loss '%s': weight %g is not in (0, 1e6)", name,
                            (double)weight);
    p.l.p.loss_weight = weight;
    return add_node(net, name, DLG_L_LOSS, 2, xs, &p);
}

int dlg_net_add_node(dlg_net *net, const char *name, dlg_layer_type type, int nb,
                     const int *bottoms, const dlg_node *proto)
{
    return add_node(net, name, type, nb, bottoms, proto);
}
