/* Verdicts about whole groups that change how the recommendation reads:
 * an accelerator no measured configuration keeps fed (the cheapest
 * instance then reaches the best measured rate, not a fed GPU), and cells
 * that ran CPU-contended (their figures understate the instance). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

long rep_group_max_au(const rep_group *g)
{
    long pick = -1;
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cell *c = &g->cells[i];
        if (c->ok && !isnan(c->au) && (pick < 0 || c->au > g->cells[pick].au))
            pick = (long)i;
    }
    return pick;
}

bool rep_group_starved(const rep_group *g)
{
    long c = rep_group_max_au(g);
    return c >= 0 && g->cells[c].au < REP_AU_OK;
}

/* "best AU 0.08, job input-pipeline, storage=local-nvme" */
static void best_au_text(const rep_group *g, char *buf, size_t len)
{
    const rep_cell *c = &g->cells[rep_group_max_au(g)];
    char lab[256];
    rep_cell_label(g, c, lab, sizeof lab);
    snprintf(buf, len, "best AU %.2f, job %s, %s", c->au, g->job, lab);
}

void rep_group_starved_text(const rep_group *g, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!rep_group_starved(g))
        return;
    char best[320];
    best_au_text(g, best, sizeof best);
    snprintf(buf, len,
             "accelerator starved: no configuration measured keeps the accelerator fed (%s; fed = AU >= %.2f): "
             "the knees mark where throughput stops rising, not a fed GPU",
             best, REP_AU_OK);
}

void rep_reco_starved_text(const rep_report *r, char *buf, size_t len, size_t *n)
{
    char tag[128], best[320];
    size_t named = 0;
    for (size_t gi = 0; gi < r->model.n && *n < len; gi++) {
        const rep_group *g = &r->model.g[gi];
        if (!rep_reco_selected(r, gi) || !rep_group_starved(g))
            continue;
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        best_au_text(g, best, sizeof best);
        *n += (size_t)snprintf(buf + *n, len - *n, "%s%s (%s)",
                               named++ ? "; " : "; no configuration measured keeps the accelerator fed for ", tag,
                               best);
    }
    if (named && *n < len)
        *n += (size_t)snprintf(buf + *n, len - *n,
                               ": this is the cheapest instance reaching the best measured rate, not one that "
                               "feeds the GPU");
}

void rep_reco_contended_note(const rep_report *r, char *buf, size_t len)
{
    size_t n = 0, named = 0;
    char tag[128];
    buf[0] = '\0';
    for (size_t gi = 0; gi < r->model.n && n < len; gi++) {
        const rep_group *g = &r->model.g[gi];
        size_t k = 0, ok = 0;
        for (size_t i = 0; i < g->ncells; i++) {
            ok += g->cells[i].ok;
            k += g->cells[i].bn == REP_BN_CONTENDED;
        }
        if (!rep_reco_selected(r, gi) || !k)
            continue;
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        n += (size_t)snprintf(buf + n, len - n, "%s%s (%zu of %zu cells%s)",
                              named++ ? ", " : "note: CPU-contended cells (runnable but waiting for a CPU, or its "
                                               "time stolen by the hypervisor) in ",
                              tag, k, ok, g->cells[g->best].bn == REP_BN_CONTENDED ? ", the best among them" : "");
    }
    if (named && n < len)
        snprintf(buf + n, len - n,
                 ": their figures understate what an instance would do, and the expected throughput with "
                 "them; rerun them on an idle host");
}
