/* The best cell of a group and the knee of each axis, and which cells
 * they are chosen among (model_rank.h). */
#include "model.h"
#include "model_build.h"
#include "model_rank.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cell at the best cell's coordinates but value v on axis a, or -1.
 * coord is scratch of naxes entries (never the best cell's own: moving
 * those would make it match every probe). */
static long slice_cell(const rep_group *g, size_t a, size_t v, size_t *coord)
{
    memcpy(coord, g->cells[g->best].coord, g->naxes * sizeof *coord);
    coord[a] = v;
    return rep_group_find(g, coord);
}

/* Where cell c stands in the ranking, lower first: a whole measurement
 * before a repetition cut short (partial: it timed a fraction of one
 * repetition, which a stop interrupted), a cell that ran with the limits
 * its axes name before one that ran without (unenforced: no cgroup
 * applied them, so it measured another configuration than its column
 * says), and memory before the cache (a cache-bound STREAM cell measured
 * the cache, not the memory its group sizes).  A cell ranks only beside
 * those of the best's tier: the others rank where no cell placed before
 * them ran. */
static int rank_tier(const rep_cell *c)
{
    return (c->partial ? 4 : 0) + (c->unenforced ? 2 : 0) + (c->bn == REP_BN_CACHE);
}

bool rep_cell_ranked(const rep_group *g, const rep_cell *c)
{
    return c->ok && (!g->has_best || rank_tier(c) <= rank_tier(&g->cells[g->best]));
}

/* Value x against value y of axis ax (<0, 0, >0): known orders ascending,
 * equal ones and those of no order (text, "-", a disk without a profile)
 * by their text, after the known: the same whatever order the rows came
 * in (an axis keeps values of no order as first seen). */
static int value_cmp(const rep_axis *ax, size_t x, size_t y)
{
    double ox = ax->order[x], oy = ax->order[y];
    if (isnan(ox) != isnan(oy))
        return isnan(ox) ? 1 : -1;
    if (!isnan(ox) && ox != oy)
        return ox < oy ? -1 : 1;
    return strcmp(ax->vals[x], ax->vals[y]);
}

/* Where the knee search visits value x against value y: the ordered
 * values as the axis sorts them (equal ones, as disks of one bandwidth
 * and different IOPS, as they were found); then those of no order by
 * their text, not as first seen. */
static int visit_cmp(const rep_axis *ax, size_t x, size_t y)
{
    bool nx = isnan(ax->order[x]) != 0, ny = isnan(ax->order[y]) != 0;
    if (nx && ny)
        return strcmp(ax->vals[x], ax->vals[y]);
    return nx != ny ? (nx ? 1 : -1) : (x > y) - (x < y);
}

/* Axis a's value indices in visit_cmp's order (the axis holds them so but
 * for the values of no order: nearly in place); NULL out of memory. */
static size_t *values_in_order(const rep_axis *ax)
{
    size_t *idx = malloc((ax->n + 1) * sizeof *idx);
    for (size_t i = 0; idx && i < ax->n; i++) {
        size_t j = i;
        for (; j > 0 && visit_cmp(ax, idx[j - 1], i) > 0; j--)
            idx[j] = idx[j - 1];
        idx[j] = i;
    }
    return idx;
}

/* The half-width of the 95% interval of cell c's throughput less the
 * target (target x the best's): both are measured, so both intervals
 * count; the target's alone (a point) let a best of 130 +- 100 show 100
 * +- 2 short of it "beyond its CI". */
static double target_gap_ci(const rep_cell *c, const rep_cell *best, double target)
{
    double tci = target * best->ci;
    return sqrt(c->ci * c->ci + tci * tci);
}

/* Cell c falls short of target x best beyond both intervals, or failed;
 * one repetition (c's or the best's) has no CI: nothing shows it short. */
static bool short_clear(const rep_cell *c, const rep_cell *best, double target)
{
    return !c->ok ||
           (c->repeats >= 2 && best->repeats >= 2 && target * best->thr - c->thr > target_gap_ci(c, best, target));
}

/* Whether the knee cell's interval (with the best's) keeps it within
 * twice the tolerance of the best (2 x target - 1: 90% at a target of
 * 95%), and how low, as a share of the best, that interval lets it be.
 * A knee of 96 +- 60 is "not significantly below" a best of 100 +- 2,
 * which is no evidence that it reaches 95; one of 96 +- 2 may miss 95 by
 * a point or two, which the target, itself a tolerance, forgives. */
static void judge_reach(rep_knee *k, const rep_cell *knee, const rep_cell *best, bool is_best, double target)
{
    k->reach_low = best->thr > 0 ? (knee->thr - target_gap_ci(knee, best, target)) / best->thr : 1;
    k->reach_clear = is_best || k->reach_low >= 2 * target - 1;
}

/* Knee of axis a: on the slice through the best cell, the smallest value
 * reaching target x best; whether the intervals settle it (reach_clear,
 * below_clear) and, where not, the smallest value below it that they do
 * not show short (cheaper). */
void rep_group_find_knee(rep_group *g, size_t a, double target, size_t *coord)
{
    rep_knee *k = &g->knees[a];
    const rep_cell *best = &g->cells[g->best];
    k->unordered = true;
    k->val = best->coord[a];
    k->cell = g->best;
    k->ratio = 1;
    k->below = -1;
    k->below_clear = true;
    k->reach_clear = true;
    k->reach_low = 1;
    k->cheaper = -1;
    for (size_t v = 0; v < g->axes[a].n; v++) {
        k->npoints += slice_cell(g, a, v, coord) >= 0;
        k->unordered &= isnan(g->axes[a].order[v]) != 0;
    }
    /* "smallest value" means nothing without an order (unknown disks sort
     * last: unlimited), nor on a duration: the shortest sleep or step
     * reaching the target is no resource to buy */
    k->unordered |= g->axes[a].kind == REP_AX_DURATION;
    /* the best's value on an axis whose limit it ran without says nothing
     * of what it needed (only cells without it are ranked beside it) */
    unsigned limit = rep_limit_bit(g->axes[a].key);
    k->unenforced = (best->unenforced & limit) != 0;
    k->unordered |= k->unenforced;
    if (k->unordered)
        return;
    size_t *order = values_in_order(&g->axes[a]);
    long prev = -1;
    for (size_t i = 0; i < g->axes[a].n; i++) {
        size_t v = order ? order[i] : i;
        long c = slice_cell(g, a, v, coord);
        if (c < 0)
            continue;
        const rep_cell *cell = &g->cells[c];
        if (cell->ok && (!rep_cell_ranked(g, cell) || (cell->unenforced & limit)))
            continue; /* neither the knee nor the value below it */
        if (cell->ok && cell->thr >= target * best->thr) {
            k->val = v;
            k->cell = (size_t)c;
            k->ratio = best->thr > 0 ? cell->thr / best->thr : 1;
            k->significant = best->thr - cell->thr > sqrt(best->ci * best->ci + cell->ci * cell->ci);
            judge_reach(k, cell, best, (size_t)c == g->best, target);
            if (prev >= 0) {
                k->below = prev;
                k->below_clear = short_clear(&g->cells[prev], best, target);
            }
            break;
        }
        /* below the target, but by less than the intervals: the knee may be here */
        bool measured = cell->ok && cell->repeats >= 2 && best->repeats >= 2;
        if (k->cheaper < 0 && measured && !short_clear(cell, best, target))
            k->cheaper = c;
        prev = c;
    }
    /* the intervals were there to judge it by and left it open */
    k->uncertain = g->cells[k->cell].repeats >= 2 && best->repeats >= 2 && (!k->reach_clear || k->cheaper >= 0);
    free(order);
}

/* The axes a tie is broken on, first: the resources an instance sells. */
static const char *const tie_keys[] = {"cpus", "memory", "storage"};

static bool is_tie_key(const char *key)
{
    for (size_t i = 0; i < sizeof tie_keys / sizeof *tie_keys; i++)
        if (strcmp(key, tie_keys[i]) == 0)
            return true;
    return false;
}

/* Between two cells of equal throughput, x has the smaller resources:
 * the first axis where they differ, of cpus, memory, storage and then the
 * others by name, has x's value first (value_cmp).  Any row order then
 * picks the same best, and the same knees through it. */
static bool fewer_resources(const rep_group *g, const rep_cell *x, const rep_cell *y)
{
    for (size_t i = 0; i < sizeof tie_keys / sizeof *tie_keys; i++) {
        long a = rep_group_axis(g, tie_keys[i]);
        int d = a < 0 ? 0 : value_cmp(&g->axes[a], x->coord[a], y->coord[a]);
        if (d)
            return d < 0;
    }
    for (const char *prev = NULL;;) { /* the other axes, by name */
        long next = -1;
        for (size_t a = 0; a < g->naxes; a++) {
            const char *key = g->axes[a].key;
            if (!is_tie_key(key) && (!prev || strcmp(key, prev) > 0) &&
                (next < 0 || strcmp(key, g->axes[next].key) < 0))
                next = (long)a;
        }
        if (next < 0)
            return false;
        int d = value_cmp(&g->axes[next], x->coord[next], y->coord[next]);
        if (d)
            return d < 0;
        prev = g->axes[next].key;
    }
}

/* The best cell: the fastest ok one of the highest tier (rank_tier: a
 * whole measurement of memory before a partial one, or the cache's); of
 * equal throughput, the one of smaller resources. */
void rep_group_pick_best(rep_group *g)
{
    for (size_t c = 0; c < g->ncells; c++) {
        const rep_cell *cell = &g->cells[c], *best = g->has_best ? &g->cells[g->best] : NULL;
        if (!cell->ok)
            continue;
        int tc = rank_tier(cell), tb = best ? rank_tier(best) : 0;
        bool faster = best && cell->thr > best->thr;
        bool tie = best && cell->thr == best->thr && fewer_resources(g, cell, best);
        if (!best || tc < tb || (tc == tb && (faster || tie))) {
            g->best = c;
            g->has_best = true;
        }
    }
}

size_t rep_group_unranked(const rep_group *g)
{
    size_t n = 0;
    for (size_t c = 0; g->has_best && c < g->ncells; c++)
        n += g->cells[c].ok && !rep_cell_ranked(g, &g->cells[c]);
    return n;
}

/* Cell c is measured but no point of axis a's knee: left out of the
 * ranking, or run without the limit a sets. */
static bool off_knee(const rep_group *g, size_t a, const rep_cell *c)
{
    return c->ok && (!rep_cell_ranked(g, c) || (c->unenforced & rep_limit_bit(g->axes[a].key)));
}

/* The first cell below axis a's knee on the slice through the best that
 * is measured but no point of its knee, or -1. */
static long unranked_below(const rep_group *g, size_t a)
{
    if (!g->has_best || a >= g->naxes)
        return -1;
    size_t *coord = malloc((g->naxes + 1) * sizeof *coord);
    long found = -1;
    for (size_t v = 0; coord && v < g->knees[a].val && found < 0; v++) {
        long c = slice_cell(g, a, v, coord);
        if (c >= 0 && off_knee(g, a, &g->cells[c]))
            found = c;
    }
    free(coord);
    return found;
}

bool rep_knee_below_unranked(const rep_group *g, size_t a)
{
    return unranked_below(g, a) >= 0;
}

/* Why the ok cell c is left out beside the best: the first tier where
 * it stands below the best (rank_tier). */
rep_left_out rep_cell_left_out(const rep_group *g, const rep_cell *c)
{
    const rep_cell *best = &g->cells[g->best];
    if (c->partial && !best->partial)
        return REP_LEFT_PARTIAL;
    return c->unenforced && !best->unenforced ? REP_LEFT_UNENFORCED : REP_LEFT_CACHE;
}

rep_left_out rep_knee_below_why(const rep_group *g, size_t a)
{
    long c = unranked_below(g, a);
    if (c >= 0 && rep_cell_ranked(g, &g->cells[c]))
        return REP_LEFT_UNENFORCED; /* ranked, but not on this axis: it ran without its limit */
    return c >= 0 ? rep_cell_left_out(g, &g->cells[c]) : REP_LEFT_CACHE;
}

/* Appends to buf (at *at) what the limits not enforced did to g: its ok
 * cells that ran without a limit their axes name are left out beside
 * cells that ran with it; where the best is one of them, they rank among
 * themselves and its limits have no knee. */
static void unenforced_note(const rep_group *g, size_t ok, char *buf, size_t len, size_t *at)
{
    size_t left = 0, ran = 0;
    unsigned bits = 0, best = g->cells[g->best].unenforced;
    for (size_t c = 0; c < g->ncells; c++) {
        const rep_cell *cell = &g->cells[c];
        if (!cell->ok || !cell->unenforced)
            continue;
        ran++;
        if (!rep_cell_ranked(g, cell) && rep_cell_left_out(g, cell) == REP_LEFT_UNENFORCED) {
            bits |= cell->unenforced;
            left++;
        }
    }
    const char *sep = *at ? "; " : "";
    int n = 0;
    if (best) {
        const char *names = rep_limit_names(best);
        n = snprintf(buf + *at, len - *at,
                     "%s%s not enforced: %zu of %zu measured cells ran without their %s limit (%s = false: no "
                     "cgroup applied it), the best among them: %s has no knee (the recommendation sizes it as if "
                     "not swept)",
                     sep, names, ran, ok, names, rep_limit_field(best), names);
    } else if (left) {
        const char *names = rep_limit_names(bits);
        n = snprintf(buf + *at, len - *at,
                     "%s%s not enforced: %zu of %zu measured cells ran without their %s limit (%s = false: no "
                     "cgroup applied it): left out of the best and the knees beside cells that ran with it",
                     sep, names, left, ok, names, rep_limit_field(bits));
    }
    if (n > 0)
        *at = (size_t)n < len - *at ? *at + (size_t)n : len - 1;
}

void rep_group_rank_note(const rep_group *g, char *buf, size_t len)
{
    size_t cache = 0, partial = 0, ok = 0;
    buf[0] = 0;
    for (size_t c = 0; c < g->ncells; c++) {
        const rep_cell *cell = &g->cells[c];
        ok += cell->ok;
        if (cell->ok && !rep_cell_ranked(g, cell)) {
            rep_left_out why = rep_cell_left_out(g, cell);
            partial += why == REP_LEFT_PARTIAL;
            cache += why == REP_LEFT_CACHE;
        }
    }
    int n = 0;
    if (partial)
        n = snprintf(buf, len,
                     "partial: %zu of %zu measured cells were cut short (status partial: a repetition a stop "
                     "interrupted, which --resume measures again): left out of the best and the knees beside cells "
                     "measured whole",
                     partial, ok);
    size_t at = n > 0 && (size_t)n < len ? (size_t)n : 0;
    if (g->has_best)
        unenforced_note(g, ok, buf, len, &at);
    const char *sep = at ? "; " : "";
    if (cache)
        snprintf(buf + at, len - at,
                 "%scache-bound: %zu of %zu measured cells kept their arrays in the last-level cache and measured "
                 "the cache, not memory: left out of the best and the knees",
                 sep, cache, ok);
    else if (g->has_best && g->cells[g->best].bn == REP_BN_CACHE)
        snprintf(buf + at, len - at,
                 "%scache-bound: every measured cell kept its arrays in the last-level cache: the best and the knees "
                 "are the cache's bandwidth, not memory's (arrays of 4x the cache or more measure memory)",
                 sep);
}
