/* dlgauge compare: groups matched by identity, cells by their axis values
 * as text (the sides may sweep different values, or different axes), and
 * every matched cell judged. */
#define _GNU_SOURCE
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "mem_out.h"
#include "model_rows.h"
#include "report.h"
#include "stats.h"

static bool same(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* Groups of one identity match (rep_group_same_identity: rows of
 * different `ranks` or `nodes` are different cells).  Where a side holds
 * several groups of one identity (its rows ran with other settings or on
 * other hosts), each is matched first with the other side's of the same
 * settings on the same host (level 2), then of the same settings (1);
 * what is left, by identity alone (0), in order: the sides may differ on
 * purpose (another instance, another storage), which is what is compared. */
static bool matches(const rep_group *a, const rep_group *b, int level)
{
    if (!rep_group_same_identity(a, b))
        return false;
    bool hosts = a->host && b->host && same(a->host, b->host);
    return level == 0 || (rep_group_same_settings(a, b) && (level == 1 || hosts));
}

static int add_key(rep_cmp_group *cg, const char *key)
{
    for (size_t k = 0; k < cg->nkeys; k++)
        if (same(cg->keys[k], key))
            return 0;
    char **nk = realloc(cg->keys, (cg->nkeys + 1) * sizeof *nk);
    if (!nk)
        return -1;
    cg->keys = nk;
    if (!(nk[cg->nkeys] = strdup(key)))
        return -1;
    cg->nkeys++;
    return 0;
}

/* The union of both sides' axes, base's first. */
static int union_keys(rep_cmp_group *cg)
{
    const rep_group *side[2] = {cg->base, cg->new};
    for (int s = 0; s < 2; s++)
        for (size_t a = 0; side[s] && a < side[s]->naxes; a++)
            if (add_key(cg, side[s]->axes[a].key) != 0)
                return -1;
    return 0;
}

/* A cell's value of key: its axis value, else (a key this side did not
 * sweep) what its row's `config` says the cell ran with, else "-". */
static const char *cell_value(const rep_group *g, const rep_cell *c, const char *key, char *buf, size_t len)
{
    long a = rep_group_axis(g, key);
    if (a >= 0 && !same(g->axes[a].vals[c->coord[a]], "-"))
        return g->axes[a].vals[c->coord[a]];
    const char *cfg = c->row ? rep_str(c->row, "config") : NULL;
    char k[128];
    for (const char *p = cfg; p && rep_config_next(&p, k, sizeof k, buf, len);)
        if (same(k, key))
            return buf;
    return "-";
}

/* Match key (values joined by \x1f), label ("k=v k=v") and values of a
 * cell; vals may be NULL. */
static int cell_names(const rep_cmp_group *cg, const rep_group *g, const rep_cell *c, char **key, char **label,
                      char **vals)
{
    rep_mem_out km, lm;
    FILE *kf = rep_mem_open(&km), *lf = rep_mem_open(&lm);
    if (!kf || !lf) {
        if (kf)
            rep_mem_close(kf, &km);
        if (lf)
            rep_mem_close(lf, &lm);
        free(km.buf);
        free(lm.buf);
        return -1;
    }
    char buf[256];
    int rc = 0;
    for (size_t k = 0; k < cg->nkeys; k++) {
        const char *v = cell_value(g, c, cg->keys[k], buf, sizeof buf);
        fprintf(kf, "%s\x1f", v);
        fprintf(lf, "%s%s=%s", k ? " " : "", cg->keys[k], v);
        if (vals && !(vals[k] = strdup(v)))
            rc = -1;
    }
    if (cg->nkeys == 0)
        fputs("(one cell)", lf);
    rc |= rep_mem_close(kf, &km) | rep_mem_close(lf, &lm); /* a short key would match the wrong cell */
    *key = km.buf;
    *label = lm.buf;
    return rc ? -1 : 0;
}

/* sd of a cell's mean, from its CI where the rows gave no stddev. */
static double cell_sd(const rep_cell *c)
{
    if (c->sd > 0 || !(c->ci > 0) || c->repeats < 2)
        return c->sd;
    return c->ci * sqrt(c->repeats) / dlg_t_quantile_975((size_t)c->repeats - 1);
}

/* Any gate given: a cell newly failing, or missing from new, fails it. */
static bool any_gate(const rep_compare *c)
{
    return c->gate || c->latency_gate;
}

/* Whether ratio new/base lies beyond a limit (a fraction: -0.05, +0.10)
 * by more than rounding: 95/100 - 1 is -0.050000000000000044 in doubles,
 * so 100 -> 95 failed --fail-below -5% while 100 -> 90 passed -10%; the
 * gate fails "by more than PCT", never exactly at it. */
static bool below_limit(double ratio, double limit)
{
    return ratio < (1 + limit) * (1 - 1e-9);
}

static bool above_limit(double ratio, double limit)
{
    return ratio > (1 + limit) * (1 + 1e-9);
}

/* The --latency statistics: their result fields, and how a cell's runs'
 * figures pool (its maxima to the largest, the others to a mean). */
static const struct latency_stat {
    const char *stat, *field;
    rep_pool how;
} latency_stats[] = {
    {"p50", "latency_p50_us", REP_POOL_MEAN},   {"p90", "latency_p90_us", REP_POOL_MEAN},
    {"p99", "latency_p99_us", REP_POOL_MEAN},   {"p999", "latency_p999_us", REP_POOL_MEAN},
    {"mean", "latency_mean_us", REP_POOL_MEAN}, {"max", "latency_max_us", REP_POOL_MAX},
};

static const struct latency_stat *latency_stat(const char *stat)
{
    for (size_t i = 0; stat && i < sizeof latency_stats / sizeof *latency_stats; i++)
        if (same(stat, latency_stats[i].stat))
            return &latency_stats[i];
    return NULL;
}

const char *rep_cmp_latency_field(const char *stat)
{
    const struct latency_stat *l = latency_stat(stat);
    return l ? l->field : NULL;
}

/* The compared latency of a matched cell where both sides ran; its rise
 * beyond the limit fails the latency gate.  A percentile is one figure
 * over every timed step of a cell, with no spread to test it by. */
static void judge_latency(rep_cmp_cell *cc, const rep_cmp_group *cg, rep_compare *c)
{
    cc->lat_base = cc->lat_new = cc->lat_delta = NAN;
    if (!c->latency || !cc->base->ok || !cc->new->ok)
        return;
    size_t gb = (size_t)(cg->base - c->base.model.g), gn = (size_t)(cg->new - c->new.model.g);
    cc->lat_base = c->base.lat[gb][cc->base - cg->base->cells];
    cc->lat_new = c->new.lat[gn][cc->new - cg->new->cells];
    if (isnan(cc->lat_base) || isnan(cc->lat_new)) {
        c->nlat_missing++;
        return;
    }
    if (!(cc->lat_base > 0)) {
        c->nlat_zero_base++; /* no rise to measure from 0: counted in the footer, not passed in silence */
        return;
    }
    cc->lat_delta = cc->lat_new / cc->lat_base - 1;
    cc->lat_regression = c->latency_gate && above_limit(cc->lat_delta + 1, c->fail_above_latency);
    cc->regression |= cc->lat_regression;
}

static void judge(rep_cmp_cell *cc, rep_compare *c)
{
    const rep_cell *b = cc->base, *n = cc->new;
    cc->ratio = cc->delta = NAN;
    cc->w = (rep_welch){NAN, NAN, NAN};
    if (!b->ok || !n->ok) {
        cc->verdict = !b->ok && !n->ok ? REP_CMP_BOTH_FAIL : b->ok ? REP_CMP_NEW_FAIL : REP_CMP_FIXED;
        cc->regression = cc->thr_regression = any_gate(c) && cc->verdict == REP_CMP_NEW_FAIL; /* whatever the statistics */
        return;
    }
    if (b->thr > 0) {
        cc->ratio = n->thr / b->thr;
        cc->delta = cc->ratio - 1;
    }
    cc->w = rep_welch_test(b->thr, cell_sd(b), b->repeats, n->thr, cell_sd(n), n->repeats);
    if (isnan(cc->w.p))
        cc->verdict = REP_CMP_NO_CI; /* one repeat: no evidence either way, never a regression */
    else if (cc->w.p < c->alpha)
        cc->verdict = n->thr < b->thr ? REP_CMP_SLOWER : REP_CMP_FASTER;
    else
        cc->verdict = REP_CMP_SAME;
    c->nno_ci += cc->verdict == REP_CMP_NO_CI; /* counted in the footer: -90% passing says nothing else */
    cc->regression = cc->thr_regression = c->gate && cc->verdict == REP_CMP_SLOWER && below_limit(cc->ratio, c->fail_below);
    /* an OOM in one of new's runs, its other runs pooled as the figure: an
     * intermittent failure is no pass for a CI gate, unless base's runs
     * failed so too (then it is said, not gated) */
    cc->runs_regression = any_gate(c) && n->nfailed && !b->nfailed;
    cc->regression |= cc->runs_regression;
}

static rep_cmp_cell *new_cell(rep_cmp_group *cg)
{
    rep_cmp_cell *nc = realloc(cg->cells, (cg->ncells + 1) * sizeof *nc);
    if (!nc)
        return NULL;
    cg->cells = nc;
    memset(&nc[cg->ncells], 0, sizeof *nc);
    return &nc[cg->ncells++];
}

/* Every cell of side g (in its axis order) not yet placed: matched with
 * the other side's cell of the same values where there is one. */
static int place_cells(rep_cmp_group *cg, const rep_group *g, const rep_group *other, bool is_base, char **okeys,
                       bool *taken)
{
    size_t *order = rep_group_cell_order(g);
    if (!order)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < g->ncells && !rc; i++) {
        const rep_cell *cell = &g->cells[order[i]];
        if (!is_base && taken[order[i]])
            continue;
        char *key = NULL, *label = NULL;
        rep_cmp_cell *cc = new_cell(cg);
        rc = !cc || !(cc->vals = calloc(cg->nkeys + 1, sizeof *cc->vals)) ? -1 : 0;
        rc = rc || cell_names(cg, g, cell, &key, &label, cc->vals) != 0 ? -1 : 0;
        if (!rc) {
            cc->label = label;
            label = NULL;
            *(is_base ? &cc->base : &cc->new) = cell;
            for (size_t j = 0; is_base && other && j < other->ncells && !cc->new; j++)
                if (!taken[j] && same(okeys[j], key)) {
                    taken[j] = true;
                    cc->new = &other->cells[j];
                }
        }
        free(key);
        free(label);
    }
    free(order);
    return rc;
}

static int match_cells(rep_cmp_group *cg)
{
    size_t nn = cg->new ? cg->new->ncells : 0;
    char **nkeys = calloc(nn + 1, sizeof *nkeys);
    bool *taken = calloc(nn + 1, sizeof *taken);
    int rc = nkeys && taken ? 0 : -1;
    for (size_t j = 0; j < nn && !rc; j++) {
        char *label = NULL;
        rc = cell_names(cg, cg->new, &cg->new->cells[j], &nkeys[j], &label, NULL);
        free(label);
    }
    if (!rc && cg->base)
        rc = place_cells(cg, cg->base, cg->new, true, nkeys, taken);
    if (!rc && cg->new)
        rc = place_cells(cg, cg->new, cg->base, false, nkeys, taken);
    for (size_t j = 0; nkeys && j < nn; j++)
        free(nkeys[j]);
    free(nkeys);
    free(taken);
    return rc;
}

/* Judges the matched cells; geometric mean of new/base where both ran. */
static void judge_group(rep_cmp_group *cg, rep_compare *c, double *logsum)
{
    double sum = 0;
    if (cg->unit_differs) {
        /* images/s in base, bytes/s in new: the benchmark as measured is
         * gone from new, no pass for a CI gate (as a cell missing from new) */
        cg->regression = any_gate(c) && !c->allow_missing;
        c->nregressions += cg->regression ? cg->base->ncells : 0;
    }
    for (size_t i = 0; i < cg->ncells; i++) {
        rep_cmp_cell *cc = &cg->cells[i];
        if (cc->base && !cc->new) {
            /* a benchmark that vanished from new is no pass for a CI gate */
            cc->regression = any_gate(c) && !c->allow_missing;
            c->nregressions += cc->regression;
        }
        if (!cc->base || !cc->new)
            continue;
        judge(cc, c);
        judge_latency(cc, cg, c);
        c->nregressions += cc->regression;
        if (cc->ratio > 0 && isfinite(cc->ratio)) {
            sum += log(cc->ratio);
            cg->ngeo++;
        }
    }
    cg->geomean = cg->ngeo ? exp(sum / (double)cg->ngeo) : NAN;
    *logsum += sum;
    c->ngeo += cg->ngeo;
}

static rep_cmp_group *add_group(rep_compare *c, const rep_group *base, const rep_group *new)
{
    rep_cmp_group *ng = realloc(c->g, (c->n + 1) * sizeof *ng);
    if (!ng)
        return NULL;
    c->g = ng;
    rep_cmp_group *cg = &ng[c->n++];
    memset(cg, 0, sizeof *cg);
    cg->base = base;
    cg->new = new;
    cg->geomean = NAN;
    cg->latency = c->latency;
    cg->latency_limit = c->latency_gate ? c->fail_above_latency : NAN;
    char title[512];
    rep_group_title(base ? base : new, title, sizeof title);
    return (cg->name = strdup(title)) ? cg : NULL;
}

static bool units_differ(const rep_group *a, const rep_group *b)
{
    return a->unit && b->unit && !same(a->unit, b->unit);
}

/* pair[i]: the group of new matched with base's group i, or -1. */
static void pair_groups(const rep_model *bm, const rep_model *nm, long *pair, bool *taken)
{
    for (size_t i = 0; i < bm->n; i++)
        pair[i] = -1;
    for (int level = 2; level >= 0; level--)
        for (size_t i = 0; i < bm->n; i++)
            for (size_t j = 0; pair[i] < 0 && j < nm->n; j++)
                if (!taken[j] && matches(&bm->g[i], &nm->g[j], level)) {
                    taken[j] = true;
                    pair[i] = (long)j;
                }
}

/* Groups in base order, then those only in new. */
static int match_groups(rep_compare *c)
{
    const rep_model *bm = &c->base.model, *nm = &c->new.model;
    bool *taken = calloc(nm->n + 1, sizeof *taken);
    long *pair = malloc((bm->n + 1) * sizeof *pair);
    if (!taken || !pair) {
        free(taken);
        free(pair);
        return -1;
    }
    pair_groups(bm, nm, pair, taken);
    int rc = 0;
    for (size_t i = 0; i < bm->n + nm->n && !rc; i++) {
        const rep_group *b = i < bm->n ? &bm->g[i] : NULL, *n = i < bm->n ? NULL : &nm->g[i - bm->n];
        if (b && pair[i] >= 0)
            n = &nm->g[pair[i]];
        if (!b && taken[i - bm->n])
            continue;
        rep_cmp_group *cg = add_group(c, b, n);
        rc = cg ? 0 : -1;
        if (!rc && b && n && units_differ(b, n))
            cg->unit_differs = true; /* images/s against bytes/s: no ratio means anything */
        else if (!rc && b) /* a group only in base too: each of its cells is missing from new */
            rc = union_keys(cg) != 0 || match_cells(cg) != 0 ? -1 : 0;
    }
    free(taken);
    free(pair);
    return rc;
}

int rep_compare_build(rep_compare *c, char *err, size_t errlen)
{
    c->geomean = NAN;
    const struct latency_stat *l = latency_stat(c->latency);
    if (c->latency && !l) {
        snprintf(err, errlen, "--latency '%s': p50, p90, p99, p999, mean or max", c->latency);
        return -DLG_EINVAL;
    }
    if (l && (rep_model_cell_field(&c->base.model, &c->base.rows, l->field, l->how, &c->base.lat) != 0 ||
              rep_model_cell_field(&c->new.model, &c->new.rows, l->field, l->how, &c->new.lat) != 0)) {
        snprintf(err, errlen, "out of memory gathering step latencies");
        return -DLG_ENOMEM;
    }
    if (match_groups(c) != 0) {
        snprintf(err, errlen, "out of memory matching the two sides");
        return -DLG_ENOMEM;
    }
    double logsum = 0;
    for (size_t i = 0; i < c->n; i++)
        judge_group(&c->g[i], c, &logsum);
    c->geomean = c->ngeo ? exp(logsum / (double)c->ngeo) : NAN;
    return 0;
}

void rep_compare_free(rep_compare *c)
{
    for (size_t i = 0; i < c->n; i++) {
        rep_cmp_group *cg = &c->g[i];
        for (size_t k = 0; k < cg->nkeys; k++)
            free(cg->keys[k]);
        for (size_t j = 0; j < cg->ncells; j++) {
            for (size_t k = 0; cg->cells[j].vals && k < cg->nkeys; k++)
                free(cg->cells[j].vals[k]);
            free(cg->cells[j].vals);
            free(cg->cells[j].label);
        }
        free(cg->keys);
        free(cg->cells);
        free(cg->name);
    }
    free(c->g);
    rep_model_cell_field_free(&c->base.model, c->base.lat);
    rep_model_cell_field_free(&c->new.model, c->new.lat);
    c->base.lat = c->new.lat = NULL;
    rep_model_free(&c->base.model);
    rep_model_free(&c->new.model);
    rep_rows_free(&c->base.rows);
    rep_rows_free(&c->new.rows);
    c->g = NULL;
    c->n = 0;
}
