/* Plan-time fusion: a ReLU that is the only reader of a batch norm's output
 * is folded into the batch norm when the backend's batch-norm kernels say
 * they can apply it (fuses_relu).  The ReLU node stays in the net (layer
 * listings and FLOP counts do not change) but runs nothing; the batch norm
 * writes the ReLU's output blob, and its own output blob is never
 * allocated.  Saves one pass over the activation each way and, in
 * training, one activation and one gradient per fused pair. */
#include "net.h"

#include <stdlib.h>

static bool bn_kernels_fuse(const dlg_backend *bk)
{
    const dlg_kernels *k = bk->kernels[DLG_L_BN];
    const dlg_kernels *f = bk->fallback ? bk->fallback->kernels[DLG_L_BN] : NULL;
    /* either may end up running the layer (accepts/setup fall back) */
    return k && k->fuses_relu && (!f || f->fuses_relu);
}

int dlg_net_fuse(dlg_net *net)
{
    if (net->keep_all || !bn_kernels_fuse(net->bk))
        return 0;
    int *reader = malloc((size_t)net->nblobs * sizeof(int));
    int *uses = calloc((size_t)net->nblobs, sizeof(int));
    if (!reader || !uses) {
        free(reader);
        free(uses);
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory planning '%s'", net->name);
    }
    for (int i = 0; i < net->nnodes; i++)
        for (int j = 0; j < net->nodes[i].l.nbottom; j++) {
            reader[net->nodes[i].bottoms[j]] = i;
            uses[net->nodes[i].bottoms[j]]++;
        }
    for (int i = 0; i < net->nnodes; i++) {
        dlg_node *bn = &net->nodes[i];
        int t = bn->tops[0];
        dlg_blob *b = &net->blobs[t];
        if (bn->l.type != DLG_L_BN || uses[t] != 1 || b->keep || b->alias_of >= 0)
            continue;
        dlg_node *r = &net->nodes[reader[t]];
        if (r->l.type != DLG_L_RELU || r->fused)
            continue;
        r->fused = true;
        bn->l.p.bn.relu = true;
        bn->tops[0] = r->tops[0];
        net->blobs[r->tops[0]].producer = i;
        b->dead = true;
        b->needs_grad = false;
    }
    free(reader);
    free(uses);
    return 0;
}
