/* Whole steps (dlg_net_train_step, dlg_net_infer_step), which a backend
 * may capture and replay, and step timing on the device timeline. */
#include "input.h"
#include "net.h"

#include <stdio.h>

typedef struct step_arg {
    dlg_net *net;
    const dlg_sgd *sgd;
    dlg_clip_stats *clip; /* NULL: no clipping */
    double max_norm;
} step_arg;

/* The clip between backward and SGD, then the SGD step: on the host the
 * clip factor scales the step's lr where that equals scaling the
 * gradients (no weight decay); on the device it is 1. */
static int clip_and_sgd(step_arg *a, char *err, size_t errlen)
{
    float f = 1;
    bool by_lr = a->sgd->weight_decay == 0;
    /* a device clip measures the stored gradients: summed over N ranks,
     * their norm is N times the mean's (dlg_net_clip_read divides it out;
     * the factor's 1e-6 guard becomes 1e-6 / N) */
    double max_norm = a->max_norm;
    if (dlg_net_clips_on_device(a->net) && a->net->grad_sum > 1)
        max_norm *= a->net->grad_sum;
    int rc = dlg_net_run_clip(a->net, max_norm, a->clip, by_lr ? &f : NULL, err, errlen);
    if (rc)
        return rc;
    dlg_sgd sgd = dlg_net_reduced_sgd(a->net, a->sgd);
    sgd.lr *= f;
    return dlg_net_run_sgd(a->net, &sgd, err, errlen);
}

/* The eager step that run_step launches, possibly inside a capture. */
static int launch(void *varg, char *err, size_t errlen)
{
    step_arg *a = varg;
    int rc = dlg_net_run_forward(a->net, err, errlen);
    if (!rc && a->sgd)
        rc = dlg_net_run_backward(a->net, err, errlen);
    if (!rc && a->sgd) /* across ranks: the clip and update see the mean gradient */
        rc = dlg_net_run_reduce(a->net, err, errlen);
    if (!rc && a->sgd) /* the same on a device: enqueued, no host wait */
        rc = dlg_net_run_dev_reduce(a->net, err, errlen);
    if (!rc && a->sgd && a->clip)
        return clip_and_sgd(a, err, errlen);
    if (!rc && a->sgd) {
        dlg_sgd sgd = dlg_net_reduced_sgd(a->net, a->sgd); /* a sum over ranks: their mean */
        rc = dlg_net_run_sgd(a->net, &sgd, err, errlen);
    }
    return rc;
}

/* The first layer a capture cannot contain: kernels that say no_graph,
 * or a layer on the fallback backend (another memory space's calls). */
static const char *blocker(const dlg_net *net)
{
    for (int i = 0; i < net->nnodes; i++) {
        const dlg_node *n = &net->nodes[i];
        if (n->fused)
            continue;
        if (n->k->no_graph || (net->fctx && n->kctx == net->fctx))
            return n->l.name;
    }
    return NULL;
}

/* Whether the backend may capture this step: a clip it does on the host
 * decides on the host (a captured graph would keep one step's factor), and
 * a host gradient reduce calls the host.  A device reduce stays in the
 * capture: NCCL's collectives are enqueued on the stream and may be
 * captured (NCCL >= 2.9), every rank's step issues the same allreduces in
 * the same order whether it replays or runs eagerly, and the communicator
 * is opened before the backend's run_step, never while capturing.  Only a
 * device reduce set or removed after a train step ran makes the train
 * steps eager: a graph captured before would replay the old one. */
static bool use_run_step(const dlg_net *net, const step_arg *a)
{
    if (a->sgd && (net->reduce_fn || net->dev_eager))
        return false;
    return net->bk->run_step && (!a->clip || dlg_net_clips_on_device(net));
}

static int run_step(dlg_net *net, step_arg *a)
{
    const dlg_sgd *sgd = a->sgd;
    int rc = dlg_net_ready_bound(net);
    if (rc)
        return rc;
    if (sgd && !net->train)
        return dlg_net_fail(net, DLG_EINVAL, "nn: net '%s' was planned without train", net->name);
    /* the first step that reduces on a device joins the ranks (collective) */
    if (sgd && (rc = dlg_net_dev_reduce_open(net)) < 0)
        return rc;
    net->trained |= sgd != NULL; /* a graph may hold this step's reduce (or none) */
    char err[256] = "";
    bool took = false;
    /* inputs written asynchronously: waited for and copied in on the
     * device before the step, outside any capture (input.h) */
    if ((rc = dlg_input_take(net, &took, err, sizeof err)) < 0)
        return dlg_net_fail(net, -rc, "%s", err);
    if (use_run_step(net, a)) {
        dlg_step_fn f = {.launch = launch,
                         .arg = a,
                         .sgd = sgd,
                         .train = net->nnodes > 0 && net->nodes[0].l.train,
                         .blocker = blocker(net),
                         .clip = a->clip != NULL,
                         .max_norm = a->clip ? a->max_norm : 0,
                         .err = err,
                         .errlen = sizeof err};
        rc = net->bk->run_step(net->ctx, &f);
    } else
        rc = launch(a, err, sizeof err);
    if (rc < 0)
        return dlg_net_fail(net, -rc, "%s", err[0] ? err
                                                   : "nn: a step failed (see the backend's note)");
    if (took)
        dlg_input_mark(net);
    net->steps++;
    return dlg_net_prof_settle(net);
}

int dlg_net_step_stats(const dlg_net *net, dlg_step_stats *out)
{
    *out = (dlg_step_stats){net->steps, 0, 0};
    if (!net->planned || !net->bk)
        return -DLG_EINVAL;
    if (net->bk->step_stats)
        net->bk->step_stats(net->ctx, out);
    return 0;
}

int dlg_net_train_step(dlg_net *net, const dlg_sgd *sgd)
{
    if (!sgd)
        return dlg_net_fail(net, DLG_EINVAL, "nn: dlg_net_train_step without SGD parameters");
    step_arg a = {net, sgd, NULL, 0};
    return run_step(net, &a);
}

int dlg_net_train_step_clip(dlg_net *net, const dlg_sgd *sgd, double max_norm,
                            dlg_clip_stats *st)
{
    if (!sgd || !st)
        return dlg_net_fail(net, DLG_EINVAL,
                            "nn: dlg_net_train_step_clip without SGD parameters or clip stats");
    step_arg a = {net, sgd, st, max_norm};
    return run_step(net, &a);
}

int dlg_net_infer_step(dlg_net *net)
{
    step_arg a = {net, NULL, NULL, 0};
    return run_step(net, &a);
}

int dlg_net_timer_begin(dlg_net *net)
{
    int rc = dlg_net_ready_bound(net);
    if (rc)
        return rc;
    if (!net->bk->timer_begin)
        return -DLG_ENOTSUP;
    if ((rc = net->bk->timer_begin(net->ctx)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: step timer failed", net->bk->name);
    net->timer_open = true;
    return 0;
}

int dlg_net_timer_end(dlg_net *net, uint64_t *elapsed_ns)
{
    *elapsed_ns = 0;
    int rc = dlg_net_ready_bound(net);
    if (rc)
        return rc;
    if (!net->bk->timer_end)
        return -DLG_ENOTSUP;
    net->timer_open = false;
    if ((rc = net->bk->timer_end(net->ctx, elapsed_ns)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: step timer failed (end without begin?)",
                            net->bk->name);
    return dlg_net_prof_settle(net); /* the timed work is done: no wait */
}
