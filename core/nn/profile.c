/* Per-layer profile (dlg_plan_opts.profile): run.c times every kernel
 * call; here the times are read, reset and summed by layer kind. */
#include "net.h"

#include <stdlib.h>
#include <string.h>

int dlg_net_layer_time(const dlg_net *net, int index, uint64_t *fwd_ns, uint64_t *bwd_ns,
                       uint64_t *calls)
{
    if (index < 0 || index >= net->nnodes)
        return -DLG_EINVAL;
    if (!net->profile)
        return -DLG_ENOTSUP;
    const dlg_node *n = &net->nodes[index];
    *fwd_ns = n->fwd_ns;
    *bwd_ns = n->bwd_ns;
    *calls = n->fwd_calls;
    return 0;
}

void dlg_net_layer_time_reset(dlg_net *net)
{
    for (int i = 0; i < net->nnodes; i++)
        net->nodes[i].fwd_ns = net->nodes[i].bwd_ns = net->nodes[i].fwd_calls = 0;
}

typedef struct layer_ns {
    int layer;
    uint64_t ns; /* forward + backward */
} layer_ns;

static int slower_first(const void *a, const void *b)
{
    const layer_ns *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : x->layer - y->layer;
}

int dlg_net_layers_by_time(const dlg_net *net, int *layers, int max)
{
    if (!net->profile)
        return -DLG_ENOTSUP;
    layer_ns *t = calloc((size_t)net->nnodes + 1, sizeof *t);
    if (!t)
        return -DLG_ENOMEM;
    for (int i = 0; i < net->nnodes; i++)
        t[i] = (layer_ns){i, net->nodes[i].fwd_ns + net->nodes[i].bwd_ns};
    qsort(t, (size_t)net->nnodes, sizeof *t, slower_first);
    int m = net->nnodes < max ? net->nnodes : max;
    for (int i = 0; i < m; i++)
        layers[i] = t[i].layer;
    free(t);
    return m;
}

static int by_time(const void *a, const void *b)
{
    const dlg_layer_kind *x = a, *y = b;
    uint64_t tx = x->fwd_ns + x->bwd_ns, ty = y->fwd_ns + y->bwd_ns;
    return tx < ty ? 1 : tx > ty ? -1 : 0;
}

int dlg_net_layer_kinds(const dlg_net *net, dlg_layer_kind *out, int max)
{
    if (!net->profile || !net->planned)
        return -DLG_ENOTSUP;
    dlg_layer_kind *k = calloc((size_t)net->nnodes + 1, sizeof *k);
    if (!k)
        return -DLG_ENOMEM;
    int nk = 0;
    for (int i = 0; i < net->nnodes; i++) {
        const dlg_node *n = &net->nodes[i];
        if (n->fused)
            continue;
        const char *type = dlg_layer_type_name(n->l.type), *impl = dlg_net_layer_impl(net, i);
        int j = 0;
        while (j < nk && (strcmp(k[j].type, type) || strcmp(k[j].impl, impl)))
            j++;
        if (j == nk)
            k[nk++] = (dlg_layer_kind){.type = type, .impl = impl};
        k[j].fwd_ns += n->fwd_ns;
        k[j].bwd_ns += n->bwd_ns;
        k[j].layers++;
    }
    qsort(k, (size_t)nk, sizeof *k, by_time);
    int m = nk < max ? nk : max;
    memcpy(out, k, (size_t)(m > 0 ? m : 0) * sizeof *k);
    free(k);
    return nk;
}
