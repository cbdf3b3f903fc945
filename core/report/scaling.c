/* Measured scaling over ranks (scaling.h).  Groups differ by `ranks`
 * and `nodes` (model.c), so a rate summed over N ranks is never pooled
 * with one rank's; here the two are set side by side, cell by cell. */
#define _GNU_SOURCE
#include "scaling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "units.h"

static bool same(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* The same runs, whatever their ranks: the same job with the same
 * settings (a job re-run with another sleep is no scaling of it). */
static bool same_runs(const rep_group *a, const rep_group *b)
{
    return same(a->job, b->job) && same(a->workload, b->workload) && same(a->mode, b->mode) &&
           same(a->precision, b->precision) && same(a->device, b->device) && rep_group_same_settings(a, b);
}

/* Both on one host (a host named in both and equal). */
static bool same_host(const rep_group *a, const rep_group *b)
{
    return a->host && b->host && same(a->host, b->host);
}

long rep_group_one_rank(const rep_model *m, size_t gi)
{
    long any = -1;
    for (size_t i = 0; i < m->n; i++) /* the rows of one host first, where its job ran on several */
        if (m->g[i].ranks == 1 && same_runs(&m->g[i], &m->g[gi])) {
            if (same_host(&m->g[i], &m->g[gi]))
                return (long)i;
            any = any < 0 ? (long)i : any;
        }
    return any;
}

/* Cell cg of group g's value of key: "-" where g did not sweep it. */
static const char *value_of(const rep_group *g, size_t cg, const char *key)
{
    long a = rep_group_axis(g, key);
    return a < 0 ? "-" : g->axes[a].vals[g->cells[cg].coord[a]];
}

/* The cell of group to with the values of cell c of group from on every
 * axis of either, measured ok at both; -1 if none. */
static long matching_cell(const rep_group *from, size_t c, const rep_group *to)
{
    if (!from->cells[c].ok)
        return -1;
    for (size_t a = 0; a < from->naxes; a++) /* an axis only from swept: to's cells sit at "-" */
        if (rep_group_axis(to, from->axes[a].key) < 0 && !same(from->axes[a].vals[from->cells[c].coord[a]], "-"))
            return -1;
    size_t *coord = calloc(to->naxes + 1, sizeof *coord);
    if (!coord)
        return -1;
    bool found = true;
    for (size_t a = 0; a < to->naxes && found; a++) {
        const char *v = value_of(from, c, to->axes[a].key);
        found = false;
        for (size_t k = 0; k < to->axes[a].n && !found; k++)
            if (same(to->axes[a].vals[k], v)) {
                coord[a] = k;
                found = true;
            }
    }
    long hit = found ? rep_group_find(to, coord) : -1;
    free(coord);
    return hit >= 0 && to->cells[hit].ok && to->cells[hit].thr > 0 ? hit : -1;
}

static rep_scaling none(void)
{
    return (rep_scaling){0, NAN, -1, -1, -1};
}

/* The measurement of group gn's cell cn against g1's of its values. */
static rep_scaling pair(const rep_model *m, size_t gn, size_t cn, size_t g1)
{
    const rep_group *g = &m->g[gn];
    long c1 = matching_cell(g, cn, &m->g[g1]);
    if (c1 < 0)
        return none();
    return (rep_scaling){g->ranks, g->cells[cn].thr / ((double)g->ranks * m->g[g1].cells[c1].thr), (long)gn,
                         (long)cn, c1};
}

rep_scaling rep_group_scaling(const rep_model *m, size_t gi)
{
    const rep_group *g = &m->g[gi];
    long g1 = rep_group_one_rank(m, gi);
    if (g->ranks <= 1 || g1 < 0 || !g->has_best || g->collective)
        return none();
    rep_scaling s = pair(m, gi, g->best, (size_t)g1);
    for (size_t c = 0; c < g->ncells && s.n == 0; c++) {
        rep_scaling t = pair(m, gi, c, (size_t)g1); /* the fastest matched cell, as the best would be */
        if (t.n && (s.n == 0 || g->cells[c].thr > g->cells[s.cell_n].thr))
            s = t;
    }
    return s;
}

bool rep_group_scaled(const rep_model *m, size_t g1)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->g[i].ranks > 1 && same_runs(&m->g[i], &m->g[g1]) && m->g[g1].ranks == 1)
            return true;
    return false;
}

rep_scaling rep_scaling_for(const rep_model *m, size_t g1, size_t c, long gpus)
{
    long pick = -1;
    for (size_t i = 0; i < m->n; i++) {
        const rep_group *g = &m->g[i];
        bool one_node = g->ranks > 1 && g->ranks <= gpus && g->nodes == 1; /* an instance is one machine */
        if (one_node && same_runs(g, &m->g[g1]) && rep_group_scaling(m, i).n &&
            (pick < 0 || g->ranks > m->g[pick].ranks))
            pick = (long)i;
    }
    if (pick < 0)
        return none();
    const rep_group *gn = &m->g[pick];
    long cn = matching_cell(&m->g[g1], c, gn); /* the same values, measured at N ranks */
    rep_scaling s = cn >= 0 ? pair(m, (size_t)pick, (size_t)cn, g1) : none();
    return s.n ? s : rep_group_scaling(m, (size_t)pick);
}

long rep_scaling_other_nodes(const rep_model *m, size_t g1, long gpus)
{
    long pick = -1;
    for (size_t i = 0; i < m->n; i++) {
        const rep_group *g = &m->g[i];
        if (g->ranks < 2 || g->ranks > gpus || !g->has_best || !same_runs(g, &m->g[g1]))
            continue;
        if (g->nodes == 1)
            return -1; /* measured on one machine: the efficiency's own case */
        if (pick < 0 || g->ranks > m->g[pick].ranks)
            pick = (long)i;
    }
    return pick;
}

void rep_scaling_text(const rep_model *m, size_t gi, char *buf, size_t len)
{
    const rep_group *g = &m->g[gi];
    buf[0] = '\0';
    if (g->ranks <= 1 || !g->has_best)
        return;
    if (g->collective) { /* 1 rank's "allreduce" is a local copy: no baseline */
        snprintf(buf, len, "scaling: none for a link's rate (busbw_factor): compare busbw_bytes_per_s across "
                 "rank counts instead");
        return;
    }
    long g1 = rep_group_one_rank(m, gi);
    rep_scaling s = rep_group_scaling(m, gi);
    char rk[64];
    rep_group_ranks_text(g, rk, sizeof rk);
    if (g1 < 0) {
        snprintf(buf, len, "scaling: not measured: no run of this job at 1 rank to compare the %s with "
                 "(run it without mpirun too)", rk);
        return;
    }
    if (s.n == 0) {
        snprintf(buf, len, "scaling: not measured: no cell was measured at 1 rank and at %s with the same "
                 "values", rk);
        return;
    }
    char lab[256], rn[64], r1[64], span[160] = "";
    rep_cell_label(g, &g->cells[s.cell_n], lab, sizeof lab);
    dlg_format_rate(g->cells[s.cell_n].thr, g->unit, rn, sizeof rn);
    dlg_format_rate(m->g[g1].cells[s.cell_1].thr, m->g[g1].unit, r1, sizeof r1);
    if (g->nodes > 1) /* one instance is one machine: recommend.c takes 1-node groups only */
        snprintf(span, sizeof span, "; it spans %ld nodes (the network between them included): no instance's "
                 "efficiency", g->nodes);
    snprintf(buf, len, "scaling: efficiency %.2f at %s = %s / (%ld x %s at 1 rank), %s%s%s", s.eff, rk, rn, s.n,
             r1, lab, s.cell_n == (long)g->best ? " (the best)" : "", span);
}
