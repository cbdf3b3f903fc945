/* Per-layer profile (dlg_plan_opts.profile): run.c times every kernel
 * call, by the host clock or, on a backend whose kernels run
 * asynchronously, by marks on the device timeline read here; the times
 * are read, reset and summed by layer kind. */
#include "net.h"

#include <stdlib.h>
#include <string.h>

int dlg_net_prof_open(dlg_net *net)
{
    if (!net->profile || !net->bk->prof_mark)
        return 0;
    /* a forward and a backward pass: a start and at most one end a node each */
    int cap = 2 * net->nnodes + 2;
    net->prof_what = malloc((size_t)cap * sizeof *net->prof_what);
    net->prof_ns = malloc((size_t)cap * sizeof *net->prof_ns);
    if (!net->prof_what || !net->prof_ns) {
        dlg_net_prof_free(net);
        return dlg_net_fail(net, DLG_ENOMEM, "nn: net '%s': out of memory for the profile's marks",
                            net->name);
    }
    char err[256] = "";
    int rc = net->bk->prof_open(net->ctx, cap, err, sizeof err);
    if (rc < 0) {
        dlg_net_prof_free(net);
        return dlg_net_fail(net, -rc, "nn: backend %s: profile = true: %s", net->bk->name,
                            *err ? err : "cannot make its marks");
    }
    net->prof_cap = cap;
    return 0;
}

void dlg_net_prof_free(dlg_net *net)
{
    free(net->prof_what);
    free(net->prof_ns);
    net->prof_what = NULL;
    net->prof_ns = NULL;
    net->prof_cap = net->prof_used = 0;
}

static int mark(dlg_net *net, int what)
{
    int rc = net->bk->prof_mark(net->ctx, net->prof_used);
    if (rc < 0)
        return rc;
    net->prof_what[net->prof_used++] = what;
    return 0;
}

int dlg_net_prof_pass(dlg_net *net)
{
    int rc;
    if (net->prof_used + net->nnodes + 1 > net->prof_cap && (rc = dlg_net_prof_read(net)) < 0)
        return rc;
    return mark(net, -1);
}

int dlg_net_prof_node(dlg_net *net, int i, bool backward)
{
    return mark(net, 2 * i + backward);
}

int dlg_net_prof_read(dlg_net *net)
{
    int n = net->prof_used;
    if (n < 2)
        return 0; /* no mark ends a node */
    net->prof_used = 0;
    int rc = net->bk->prof_read(net->ctx, n, net->prof_ns);
    if (rc < 0)
        return rc;
    for (int m = 1; m < n; m++) {
        int what = net->prof_what[m];
        if (what < 0)
            continue;
        dlg_node *nd = &net->nodes[what / 2];
        if (what % 2)
            nd->bwd_ns += net->prof_ns[m - 1];
        else
            nd->fwd_ns += net->prof_ns[m - 1];
    }
    return 0;
}

int dlg_net_prof_settle(dlg_net *net)
{
    int rc;
    if (net->timer_open || (rc = dlg_net_prof_read(net)) >= 0)
        return 0;
    return dlg_net_fail(net, -rc, "nn: profile = true: backend %s could not read the device "
                        "timeline's marks", net->bk->name);
}

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
    net->prof_used = 0; /* marks not read yet time what the reset drops */
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
