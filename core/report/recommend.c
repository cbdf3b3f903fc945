/* The recommendation.  Per GPU of an instance, its vCPUs, memory and best
 * attachable disk must reach every knee of every selected group.  Its
 * expected throughput is the best measured cell within the instance's own
 * resources (other axes at their best) times its GPU count: data-parallel
 * scaling, an upper bound.  A host
 * workload (no GPU fed, rep_group.per_gpu false) takes the whole instance
 * and is not multiplied: its GPUs do not run it. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "recommend.h"

static bool is_memory(const rep_axis *ax)
{
    return ax->kind == REP_AX_SIZE && strcmp(ax->key, "memory") == 0;
}

/* Can the instance supply storage value v of the axis? */
static bool has_storage(const rep_instance *in, const rep_axis *ax, size_t v, const rep_disks *disks)
{
    const rep_disk *want = rep_disks_find(disks, ax->vals[v]);
    for (size_t i = 0; i < in->ndisks; i++) {
        if (strcmp(in->disks[i], ax->vals[v]) == 0)
            return true;
        const rep_disk *d = rep_disks_find(disks, in->disks[i]);
        if (want && d && want->bandwidth > 0 && d->bandwidth >= want->bandwidth &&
            (want->iops <= 0 || d->iops <= 0 || d->iops >= want->iops))
            return true;
    }
    return false;
}

/* How many copies of a group's cell an instance runs: one per GPU, or one
 * for a host workload. */
static double copies(const rep_group *g, const rep_instance *in)
{
    return g->per_gpu && in->gpus > 0 ? in->gpus : 1;
}

static bool supplies(const rep_group *g, const rep_instance *in, const rep_axis *ax, size_t v,
                     const rep_disks *disks)
{
    double ncopies = copies(g, in);
    if (ax->kind == REP_AX_CPUS)
        return !isnan(ax->order[v]) && in->vcpus / ncopies + 1e-9 >= ax->order[v];
    if (is_memory(ax))
        return !isnan(ax->order[v]) && in->memory / ncopies + 0.5 >= ax->order[v];
    if (ax->kind == REP_AX_STORAGE)
        return has_storage(in, ax, v, disks);
    return true; /* batch, precision...: not a property of the machine */
}

static bool is_resource(const rep_axis *ax)
{
    return ax->kind == REP_AX_CPUS || is_memory(ax) || ax->kind == REP_AX_STORAGE;
}

/* The best ok cell the instance can run: each resource value one it
 * supplies (more vCPUs, memory or a faster disk can always run a smaller
 * configuration, so a slower larger cell does not count against it), the
 * other axes at the best cell's values.  -1 if none was measured. */
static long best_supplied(const rep_group *g, const rep_instance *in, const rep_disks *disks)
{
    const rep_cell *best = &g->cells[g->best];
    long pick = -1;
    for (size_t c = 0; c < g->ncells; c++) {
        const rep_cell *cell = &g->cells[c];
        bool ok = cell->ok;
        for (size_t a = 0; a < g->naxes && ok; a++) {
            const rep_axis *ax = &g->axes[a];
            ok = is_resource(ax) ? supplies(g, in, ax, cell->coord[a], disks) : cell->coord[a] == best->coord[a];
        }
        if (ok && (pick < 0 || cell->thr > g->cells[pick].thr))
            pick = (long)c;
    }
    return pick;
}

static void fit_group(rep_fit *f, const rep_model *m, size_t gi, const rep_instance *in, const rep_disks *disks)
{
    const rep_group *g = &m->g[gi];
    double ncopies = copies(g, in);
    f->meets = true;
    f->energy_item = NAN;
    for (size_t a = 0; a < g->naxes && f->meets; a++) {
        const rep_axis *ax = &g->axes[a];
        size_t kv = g->knees[a].val;
        if (!is_resource(ax) || supplies(g, in, ax, kv, disks))
            continue;
        f->meets = false;
        char tag[96];
        rep_group_tag(m, gi, tag, sizeof tag);
        snprintf(f->why, sizeof f->why, "%s needs %s %s%s%s", tag, ax->key, ax->kind == REP_AX_STORAGE ? "like " : ">= ",
                 ax->vals[kv], ax->kind != REP_AX_STORAGE && g->per_gpu ? " per GPU" : "");
    }
    long c = best_supplied(g, in, disks);
    if (c >= 0) {
        f->thr = g->cells[c].thr * ncopies;
        f->energy_item = g->cells[c].energy_item;
    } else {
        const rep_cell *best = &g->cells[g->best];
        double lo = best->thr;
        for (size_t a = 0; a < g->naxes; a++)
            if (is_resource(&g->axes[a]) && g->cells[g->knees[a].cell].thr < lo)
                lo = g->cells[g->knees[a].cell].thr;
        f->thr = lo * ncopies;
        f->estimated = true;
    }
    f->cost_per_m = f->thr > 0 ? in->price / (f->thr * 3600.0) * 1e6 : INFINITY;
}

static int cmp_choice(const void *pa, const void *pb)
{
    const rep_choice *a = pa, *b = pb;
    if (a->meets != b->meets)
        return a->meets ? -1 : 1;
    if (a->meets && a->score != b->score)
        return a->score < b->score ? -1 : 1;
    if (a->inst->price != b->inst->price)
        return a->inst->price < b->inst->price ? -1 : 1;
    return strcmp(a->inst->name, b->inst->name);
}

int rep_recommend(rep_reco *out, const rep_model *m, const bool *selected, const rep_catalog *cat,
                  const rep_disks *disks, const char *gpu_filter, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!(out->v = calloc(cat->n + 1, sizeof *out->v)))
        goto oom;
    for (size_t i = 0; i < cat->n; i++) {
        const rep_instance *in = &cat->v[i];
        if (gpu_filter && !strcasestr(in->gpu, gpu_filter))
            continue;
        if (out->currency && strcmp(out->currency, in->currency) != 0) {
            snprintf(err, errlen, "the catalogs price in %s and %s (%s): compare one currency at a time",
                     out->currency, in->currency, in->catalog);
            rep_reco_free(out);
            return -DLG_EINVAL;
        }
        out->currency = in->currency;
        rep_choice *ch = &out->v[out->n++];
        ch->inst = in;
        ch->meets = true;
        if (!(ch->fits = calloc(m->n + 1, sizeof *ch->fits)))
            goto oom;
        for (size_t gi = 0; gi < m->n; gi++) {
            const rep_group *g = &m->g[gi];
            if ((selected && !selected[gi]) || !g->has_best) {
                ch->fits[gi].meets = true;
                continue;
            }
            fit_group(&ch->fits[gi], m, gi, in, disks);
            ch->meets = ch->meets && ch->fits[gi].meets;
            ch->score += ch->fits[gi].cost_per_m;
        }
        out->nmeet += ch->meets;
    }
    qsort(out->v, out->n, sizeof *out->v, cmp_choice);
    return 0;
oom:
    rep_reco_free(out);
    snprintf(err, errlen, "out of memory in the recommendation");
    return -DLG_ENOMEM;
}

void rep_reco_free(rep_reco *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].fits);
    free(r->v);
    memset(r, 0, sizeof *r);
}
