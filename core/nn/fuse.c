/* Plan-time fusion.  1. A ReLU that is the only reader of a batch norm's
 * output is folded into the batch norm when the backend's batch-norm
 * kernels say they can apply it (fuses_relu); in a training plan, so is
 * one that alone reads a convolution's output, when the convolution
 * kernels can (fuses_relu: forward applies it as the output is written,
 * backward masks dy by y > 0 in place before using it), which saves the
 * ReLU's forward pass and one activation.  2. In an inference plan, a
 * convolution takes over, in this order, the batch norm, the eltwise add
 * and the ReLU that each alone read its output, when its kernels can apply
 * them (fuses_epilogue): on the running statistics a batch norm is a
 * per-channel affine map, the add's other operand becomes a second input,
 * and the convolution applies all three as it writes its output (oneDNN
 * post-ops).  A folded node stays in the net (layer listings and
 * FLOP counts do not change) but runs nothing; its producer writes the
 * folded node's output blob, and the blob in between is never allocated.
 * 3. An eltwise add no convolution took over (every one, in training)
 * takes over a ReLU that alone reads its output, when the add kernels can
 * (fuses_relu).
 * Saves a pass over the activation each way and, in training, one
 * activation and one gradient per fused pair.
 * 4. In training, an add whose output only a split reads (a ResNet block's
 * output feeds the next block's branch and shortcut) takes over the
 * split's backward when the add kernels can (sums_top_parts): it sums the
 * split's output gradients in the pass that applies its ReLU and writes
 * both input gradients; the split's sum and the add's output gradient are
 * gone (8 passes over the tensor become 5).
 * 4b. In training, a batch norm takes over the eltwise add that alone reads
 * its output (ResNet's last batch norm of a block and the shortcut's add)
 * when its kernels can (fuses_residual): the add's other operand becomes
 * its second input, it applies the add (and the ReLU after it, folded as
 * in 1.) as it writes its output, and its backward gives the shortcut the
 * masked gradient; with 4. it sums the split's gradients too.  The add's
 * pass and the batch norm's output and gradient are gone.
 * 5. In an inference plan a dropout is the identity: the layer producing
 * its input, when the dropout alone reads that, writes the dropout's
 * output, and the dropout runs nothing (no copy, one activation less). */
#include "net.h"

#include <math.h>
#include <stdlib.h>

static bool kernels_fuse_relu(const dlg_backend *bk, dlg_layer_type type)
{
    const dlg_kernels *k = bk->kernels[type];
    const dlg_kernels *f = bk->fallback ? bk->fallback->kernels[type] : NULL;
    /* either may end up running the layer (accepts/setup fall back) */
    return k && k->fuses_relu && (!f || f->fuses_relu);
}

static bool conv_kernels_fold(const dlg_backend *bk)
{
    const dlg_kernels *k = bk->kernels[DLG_L_CONV];
    const dlg_kernels *f = bk->fallback ? bk->fallback->kernels[DLG_L_CONV] : NULL;
    return k && k->fuses_epilogue && (!f || f->fuses_epilogue);
}

void dlg_bn_fold(const dlg_layer *bn, float *scale, float *shift)
{
    const float *gamma = bn->param[0]->data, *beta = bn->param[1]->data;
    const float *mean = bn->param[2]->data, *var = bn->param[3]->data;
    for (int64_t c = 0; c < bn->top[0]->shape.d[1]; c++) {
        double s = gamma[c] / sqrt((double)var[c] + bn->p.bn.eps);
        scale[c] = (float)s;
        shift[c] = (float)(beta[c] - mean[c] * s);
    }
}

/* Node `into` takes over node `from`, the only reader of its output: it
 * writes from's output blob, its own is never stored, `from` runs nothing. */
static void fold(dlg_net *net, int into, int from)
{
    dlg_node *a = &net->nodes[into], *b = &net->nodes[from];
    dlg_blob *mid = &net->blobs[a->tops[0]];
    b->fused = true;
    a->tops[0] = b->tops[0];
    net->blobs[b->tops[0]].producer = into;
    mid->dead = true;
    mid->needs_grad = false;
}

/* reader[b]: the last layer reading blob b; uses[b]: how many read it. */
static void count_readers(const dlg_net *net, int *reader, int *uses)
{
    for (int b = 0; b < net->nblobs; b++)
        uses[b] = 0;
    for (int i = 0; i < net->nnodes; i++)
        for (int j = 0; j < net->nodes[i].l.nbottom; j++) {
            reader[net->nodes[i].bottoms[j]] = i;
            uses[net->nodes[i].bottoms[j]]++;
        }
}

/* The only reader of node i's first output, if it has `type`; else -1.
 * Only an LSTM has more outputs (its final states), and only a dropout
 * folds into it. */
static int sole_reader(const dlg_net *net, int i, dlg_layer_type type, const int *reader,
                       const int *uses)
{
    const dlg_node *n = &net->nodes[i];
    if (n->l.ntop < 1)
        return -1;
    int t = n->tops[0];
    const dlg_blob *b = &net->blobs[t];
    if (uses[t] != 1 || b->keep || b->alias_of >= 0)
        return -1;
    const dlg_node *r = &net->nodes[reader[t]];
    return r->l.type == type && !r->fused ? reader[t] : -1;
}

/* The add node r, the only reader of node i's output (a convolution or a
 * batch norm), becomes part of node i if its other operand is ready when
 * i runs: that operand turns into i's second input.  1: folded. */
static int fold_add(dlg_net *net, int i, int r)
{
    dlg_node *c = &net->nodes[i], *a = &net->nodes[r];
    int other = a->bottoms[0] == c->tops[0] ? a->bottoms[1] : a->bottoms[0];
    if (net->blobs[other].producer >= i || other == c->tops[0])
        return 0; /* computed after node i, or the same blob twice */
    int *b = realloc(c->bottoms, 2 * sizeof *b);
    if (!b)
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
    c->bottoms = b;
    c->bottoms[1] = other;
    c->l.nbottom = 2;
    if (c->l.type == DLG_L_CONV)
        c->l.p.conv.residual = true;
    else
        c->l.p.bn.residual = true;
    fold(net, i, r);
    return 1;
}

/* Conv i takes over the batch norm, add and ReLU after it (see the top). */
static int fold_epilogue(dlg_net *net, int i, const int *reader, const int *uses)
{
    dlg_conv_param *p = &net->nodes[i].l.p.conv;
    int r = sole_reader(net, i, DLG_L_BN, reader, uses);
    if (r >= 0) {
        p->bn = &net->nodes[r].l;
        p->relu = net->nodes[r].l.p.bn.relu; /* applied last, by the convolution */
        fold(net, i, r);
    }
    if (!p->relu && (r = sole_reader(net, i, DLG_L_ADD, reader, uses)) >= 0) {
        int rc = fold_add(net, i, r);
        if (rc < 0)
            return rc;
    }
    if (!p->relu && (r = sole_reader(net, i, DLG_L_RELU, reader, uses)) >= 0) {
        p->relu = true;
        fold(net, i, r);
    }
    return 0;
}

/* Every `type` node (batch norm, add, convolution) takes over a ReLU that
 * alone reads its output. */
static void fold_relus(dlg_net *net, dlg_layer_type type, const int *reader, const int *uses)
{
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        int r = n->l.type == type && !n->fused ? sole_reader(net, i, DLG_L_RELU, reader, uses) : -1;
        if (r < 0)
            continue;
        if (type == DLG_L_BN)
            n->l.p.bn.relu = true;
        else if (type == DLG_L_CONV)
            n->l.p.conv.relu = true;
        else
            n->l.p.add.relu = true;
        fold(net, i, r);
    }
}

/* The batch-norm kernels (and the fallback's) honour residual and top_parts. */
static bool bn_kernels_fold_add(const dlg_backend *bk)
{
    const dlg_kernels *k = bk->kernels[DLG_L_BN];
    const dlg_kernels *f = bk->fallback ? bk->fallback->kernels[DLG_L_BN] : NULL;
    return k && k->fuses_residual && (!f || f->fuses_residual);
}

/* Every batch norm without a ReLU takes over an add that alone reads its
 * output (training; see the top). */
static int fold_bn_adds(dlg_net *net, const int *reader, const int *uses)
{
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        int r = n->l.type == DLG_L_BN && !n->fused && !n->l.p.bn.relu
                    ? sole_reader(net, i, DLG_L_ADD, reader, uses)
                    : -1;
        int rc = r >= 0 ? fold_add(net, i, r) : 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The add kernels (and the fallback's) honour top_parts. */
static bool kernels_sum_parts(const dlg_backend *bk)
{
    const dlg_kernels *k = bk->kernels[DLG_L_ADD];
    const dlg_kernels *f = bk->fallback ? bk->fallback->kernels[DLG_L_ADD] : NULL;
    return k && k->sums_top_parts && (!f || f->sums_top_parts);
}

/* Every add (and batch norm that took over one) whose output only a
 * split reads takes over the split's backward (see the top): the split's
 * outputs' gradients become the node's top_parts (bound in plan.c), its
 * own output's gradient is not needed. */
static void fold_split_grads(dlg_net *net, const int *reader, const int *uses, bool adds)
{
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *n = &net->nodes[i];
        bool takes = n->l.type == DLG_L_ADD ? adds : n->l.type == DLG_L_BN && n->l.p.bn.residual;
        int s = takes && !n->fused && n->need_backward ? sole_reader(net, i, DLG_L_SPLIT, reader, uses) : -1;
        if (s < 0)
            continue;
        net->nodes[s].bwd_into = i;
        n->grad_split = s;
        net->blobs[n->tops[0]].needs_grad = false;
    }
}

/* Every running node whose output only a dropout reads takes it over
 * (inference plans; see the top). */
static void fold_dropouts(dlg_net *net, const int *reader, const int *uses)
{
    for (int i = 0; i < net->nnodes; i++) {
        int r = net->nodes[i].fused ? -1 : sole_reader(net, i, DLG_L_DROPOUT, reader, uses);
        if (r >= 0)
            fold(net, i, r);
    }
}

int dlg_net_fuse(dlg_net *net)
{
    for (int i = 0; i < net->nnodes; i++)
        net->nodes[i].bwd_into = net->nodes[i].grad_split = -1;
    bool bn = kernels_fuse_relu(net->bk, DLG_L_BN), add = kernels_fuse_relu(net->bk, DLG_L_ADD);
    bool conv = !net->train && conv_kernels_fold(net->bk);
    bool conv_relu = net->train && kernels_fuse_relu(net->bk, DLG_L_CONV);
    bool parts = net->train && kernels_sum_parts(net->bk);
    bool bn_add = net->train && bn_kernels_fold_add(net->bk);
    if (net->keep_all)
        return 0;
    int *reader = malloc((size_t)net->nblobs * sizeof(int));
    int *uses = malloc((size_t)net->nblobs * sizeof(int));
    if (!reader || !uses) {
        free(reader);
        free(uses);
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
    }
    count_readers(net, reader, uses);
    int rc = bn_add ? fold_bn_adds(net, reader, uses) : 0;
    if (bn && !rc) /* after the adds: a block's last ReLU follows them */
        fold_relus(net, DLG_L_BN, reader, uses);
    if (conv_relu)
        fold_relus(net, DLG_L_CONV, reader, uses);
    for (int i = 0; i < net->nnodes && conv && !rc; i++)
        if (net->nodes[i].l.type == DLG_L_CONV)
            rc = fold_epilogue(net, i, reader, uses);
    if (add && !rc) /* the adds no convolution took over (all, in training) */
        fold_relus(net, DLG_L_ADD, reader, uses);
    if ((parts || bn_add) && !rc)
        fold_split_grads(net, reader, uses, parts);
    if (!net->train && !rc) /* last: the producer may have taken over others */
        fold_dropouts(net, reader, uses);
    free(reader);
    free(uses);
    return rc;
}
