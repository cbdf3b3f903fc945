/* Measured scaling over ranks in the recommendation's table, line and
 * footnote (scaling.h has the figures).  Every text here is empty where
 * all rows ran at 1 rank, so that such reports read as before, and says
 * nodes only where some group spans several. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "scaling.h"

const char *rep_fit_scaling_text(const rep_fit *f, int gpus, char *buf, size_t len)
{
    if (f->scale_ranks > 0 && f->scale_ranks < gpus)
        snprintf(buf, len, " (measured at %ld ranks, nearest to %d: %.2f)", f->scale_ranks, gpus, f->scale_eff);
    else if (f->scale_ranks > 0)
        snprintf(buf, len, " (measured at %ld ranks: %.2f)", f->scale_ranks, f->scale_eff);
    else if (f->scale_upper && f->span_ranks > 0)
        snprintf(buf, len, " (not measured on one node, only at %ld ranks on %ld nodes: upper bound)", f->span_ranks,
                 f->span_nodes);
    else if (f->scale_upper)
        snprintf(buf, len, " (not measured: upper bound)");
    else
        buf[0] = '\0';
    return buf;
}

void rep_reco_scaling_text(const rep_report *r, char *buf, size_t len, size_t *n)
{
    if (!r->have_reco || r->reco.nmeet == 0)
        return;
    const rep_choice *a = &r->reco.v[0];
    for (size_t gi = 0; gi < r->model.n && *n < len; gi++) {
        char tag[128], how[96];
        if (!rep_reco_selected(r, gi) || !rep_fit_scaling_text(&a->fits[gi], a->inst->gpus, how, sizeof how)[0])
            continue;
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        /* how reads " (...)": its parentheses dropped here */
        *n += (size_t)snprintf(buf + *n, len - *n, "; %s on its %d GPUs: %.*s", tag, a->inst->gpus,
                               (int)strlen(how) - 3, how + 2);
    }
}

/* Some group the report shows ran its ranks across several nodes. */
static bool spans_nodes(const rep_report *r)
{
    for (size_t gi = 0; gi < r->model.n; gi++)
        if (r->model.g[gi].nodes > 1 && r->model.g[gi].has_best && (!r->selected || r->selected[gi]))
            return true;
    return false;
}

void rep_reco_scaling_basis(const rep_report *r, char *buf, size_t len, size_t *n)
{
    bool scaled = false;
    for (size_t gi = 0; gi < r->model.n; gi++)
        scaled = scaled || (rep_reco_selected(r, gi) && r->model.g[gi].per_gpu && rep_group_scaled(&r->model, gi));
    bool spans = spans_nodes(r);
    if (scaled && *n < len)
        *n += (size_t)snprintf(buf + *n, len - *n, "; measured at N ranks: E = on several GPUs the cell times the "
                               "GPUs times the scaling efficiency E = rate(N) / (N x rate(1)) measured with mpirun "
                               "-np N at the most ranks N up to the instance's GPUs%s; not measured: upper bound = "
                               "no such N was measured%s",
                               spans ? " on one node (an instance is one machine; ranks across nodes measured the "
                                       "network between them too)" : "",
                               spans ? " on one node" : "");
    size_t named = 0;
    char tag[128];
    for (size_t gi = 0; gi < r->model.n && *n < len; gi++) {
        const rep_group *g = &r->model.g[gi];
        if (g->ranks <= 1 || !g->has_best || (r->selected && !r->selected[gi]))
            continue;
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        *n += (size_t)snprintf(buf + *n, len - *n, "%s%s", named++ ? ", " : "; groups of several ranks are not priced "
                               "themselves (a rate summed over ranks is no GPU's share; the efficiency they measured "
                               "scales a per-GPU group's 1-rank cells): ", tag);
    }
}
