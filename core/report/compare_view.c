/* dlgauge compare's content as tables and lines, shared by the terminal
 * and Markdown outputs so that both say the same thing. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare_view.h"
#include "report.h"
#include "units.h"

const char *rep_cmp_verdict_name(rep_cmp_verdict v)
{
    switch (v) {
    case REP_CMP_SAME:
        return "~";
    case REP_CMP_FASTER:
        return "faster";
    case REP_CMP_SLOWER:
        return "slower";
    case REP_CMP_NO_CI:
        return "~ (no CI)";
    case REP_CMP_NEW_FAIL:
        return "NEW FAILURE";
    case REP_CMP_FIXED:
        return "fixed";
    case REP_CMP_BOTH_FAIL:
        return "fails in both";
    }
    return "?";
}

/* What failed in a cell that ran no repetition: "error x2, timeout x1". */
static const char *status_of(const rep_cell *c, char *buf, size_t len)
{
    rep_cell_failures_text(c, buf, len);
    return buf;
}

/* "failed in 1 of 2 new runs (oom)": a cell that ran, whose figure is
 * the runs that worked (side: "new" or "base"). */
static void runs_failed_text(const rep_cell *c, const char *side, char *buf, size_t len)
{
    char st[160];
    snprintf(buf, len, "failed in %zu of %zu %s runs (%s)", c->nfailed, c->nok + c->nfailed, side,
             status_of(c, st, sizeof st));
}

void rep_cmp_regression_text(const rep_cmp_group *g, const rep_cmp_cell *cc, char *buf, size_t len)
{
    char b[64], n[64], st[256];
    const char *sep = g->nkeys ? ": " : "", *label = g->nkeys ? cc->label : ""; /* one cell: the group says it */
    dlg_format_rate(cc->base->thr, g->base->unit, b, sizeof b);
    if (!cc->new) {
        snprintf(buf, len, "%s%s%s: missing from new; base %s %s", g->name, sep, label,
                 cc->base->ok ? "ran at" : "failed:", cc->base->ok ? b : status_of(cc->base, st, sizeof st));
        return;
    }
    if (cc->verdict == REP_CMP_NEW_FAIL) {
        snprintf(buf, len, "%s%s%s: newly failing (%s); base ran at %s", g->name, sep, label, status_of(cc->new, st, sizeof st), b);
        return;
    }
    dlg_format_rate(cc->new->thr, g->new->unit, n, sizeof n);
    char part[3][512];
    size_t np = 0;
    if (cc->thr_regression)
        snprintf(part[np++], sizeof *part, "%s -> %s (%+.1f%%, p=%.2g)", b, n, 100 * cc->delta, cc->w.p);
    if (cc->lat_regression) {
        dlg_format_latency_us(cc->lat_base, b, sizeof b);
        dlg_format_latency_us(cc->lat_new, n, sizeof n);
        snprintf(part[np++], sizeof *part, "%s step latency %s -> %s (%+.1f%%, limit +%.1f%%)", g->latency, b, n,
                 100 * cc->lat_delta, 100 * g->latency_limit);
    }
    if (cc->runs_regression) {
        runs_failed_text(cc->new, "new", st, sizeof st);
        snprintf(part[np++], sizeof *part, "%s, in none of base's", st);
    }
    /* a cell failing several gates: one line, its reasons "; "-separated */
    size_t k = (size_t)snprintf(buf, len, "%s%s%s: ", g->name, sep, label);
    for (size_t i = 0; i < np && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "; " : "", part[i]);
}

void rep_cmp_unit_regression_text(const rep_cmp_group *g, char *buf, size_t len)
{
    snprintf(buf, len, "%s: base counts %s, new counts %s (%zu cell%s not compared)", g->name, g->base->unit,
             g->new->unit, g->base->ncells, g->base->ncells == 1 ? "" : "s");
}

static int style_of(rep_cmp_verdict v)
{
    switch (v) {
    case REP_CMP_SLOWER:
    case REP_CMP_NEW_FAIL:
        return REP_ST_BAD;
    case REP_CMP_FASTER:
    case REP_CMP_FIXED:
        return REP_ST_GOOD;
    default:
        return REP_ST_PLAIN;
    }
}

/* Throughput and CI of one side's cell: the status where it failed, "-"
 * for the CI of one repeat. */
static int put_side(rep_table *t, size_t row, size_t col, const rep_cell *c, const char *unit)
{
    char b[64];
    if (!c->ok)
        return rep_table_put(t, row, col, REP_ST_BAD, "%s", status_of(c, b, sizeof b)) |
               rep_table_put(t, row, col + 1, REP_ST_PLAIN, "-");
    dlg_format_rate(c->thr, unit, b, sizeof b);
    /* a run stopped by a signal: its steps, not a whole measurement */
    bool partial = c->status && strcmp(c->status, "partial") == 0;
    int rc = rep_table_put(t, row, col, REP_ST_PLAIN, "%s%s", b, partial ? " (partial)" : "");
    dlg_format_rate(c->repeats >= 2 ? c->ci : NAN, unit, b, sizeof b);
    return rc | rep_table_put(t, row, col + 1, REP_ST_PLAIN, "%s", b);
}

/* The verdict, then the runs that failed on a side whose others ran (the
 * figure is theirs): "~, failed in 1 of 2 new runs (oom) (gate)". */
static void verdict_text(const rep_cmp_cell *cc, char *buf, size_t len)
{
    char nf[256] = "", bf[256] = "";
    if (cc->new->ok && cc->new->nfailed)
        runs_failed_text(cc->new, "new", nf, sizeof nf);
    if (cc->base->ok && cc->base->nfailed)
        runs_failed_text(cc->base, "base", bf, sizeof bf);
    snprintf(buf, len, "%s%s%s%s%s%s%s", rep_cmp_verdict_name(cc->verdict), cc->thr_regression ? " (gate)" : "",
             nf[0] ? ", " : "", nf, cc->runs_regression ? " (gate)" : "", bf[0] ? ", " : "", bf);
}

/* new/base, delta, p and n from col on; the verdict in column verdict. */
static int put_judgement(rep_table *t, size_t row, size_t col, const rep_cmp_cell *cc, size_t verdict)
{
    int rc = 0;
    bool ran = !isnan(cc->ratio);
    rc |= rep_table_put(t, row, col, REP_ST_PLAIN, ran ? "%.3f" : "-", cc->ratio);
    rc |= rep_table_put(t, row, col + 1, style_of(cc->verdict), ran ? "%+.1f%%" : "-", 100 * cc->delta);
    rc |= rep_table_put(t, row, col + 2, REP_ST_PLAIN, isnan(cc->w.p) ? "-" : "%.2g", cc->w.p);
    rc |= rep_table_put(t, row, col + 3, REP_ST_PLAIN, "%.0f+%.0f", cc->base->ok ? cc->base->repeats : 0,
                        cc->new->ok ? cc->new->repeats : 0);
    char v[512];
    verdict_text(cc, v, sizeof v);
    bool bad = cc->thr_regression || cc->runs_regression; /* a latency failure is marked in its own column */
    rc |= rep_table_put(t, row, verdict, bad ? REP_ST_BAD : style_of(cc->verdict), "%s", v);
    return rc;
}

static const char *const heads[] = {"base", "+-CI95", "new", "+-CI95", "new/base", "delta", "p", "n", "verdict"};
enum { NHEADS = sizeof heads / sizeof *heads, H_VERDICT = NHEADS - 1 };
/* With --latency, after the throughput's columns: "base p99", "new p99", "p99 delta". */
static const char *const lat_heads[] = {"base %s", "new %s", "%s delta"};
enum { NLAT = sizeof lat_heads / sizeof *lat_heads };

/* The latency columns of a matched cell: both figures, the rise (red and
 * "(gate)" where it fails --fail-above-latency). */
static int put_latency(rep_table *t, size_t row, size_t col, const rep_cmp_cell *cc)
{
    char b[64], n[64];
    dlg_format_latency_us(cc->lat_base, b, sizeof b);
    dlg_format_latency_us(cc->lat_new, n, sizeof n);
    int rc = rep_table_put(t, row, col, REP_ST_PLAIN, "%s", b) | rep_table_put(t, row, col + 1, REP_ST_PLAIN, "%s", n);
    if (isnan(cc->lat_delta))
        return rc | rep_table_put(t, row, col + 2, REP_ST_PLAIN, "-");
    return rc | rep_table_put(t, row, col + 2, cc->lat_regression ? REP_ST_BAD : REP_ST_PLAIN, "%+.1f%%%s",
                              100 * cc->lat_delta, cc->lat_regression ? " (gate)" : "");
}

size_t rep_cmp_matched(const rep_cmp_group *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->ncells; i++)
        n += g->cells[i].base && g->cells[i].new;
    return n;
}

int rep_cmp_table(rep_table *t, const rep_cmp_group *g)
{
    size_t nlat = g->latency ? NLAT : 0, nc = g->nkeys + NHEADS + nlat;
    size_t verdict = g->nkeys + H_VERDICT + nlat; /* the last column */
    if (rep_table_init(t, rep_cmp_matched(g) + 1, nc) != 0)
        return -1;
    int rc = 0;
    for (size_t k = 0; k < g->nkeys; k++)
        rc |= rep_table_put(t, 0, k, REP_ST_STRONG, "%s", g->keys[k]);
    for (size_t h = 0; h < H_VERDICT; h++) {
        t->right[g->nkeys + h] = true;
        rc |= rep_table_put(t, 0, g->nkeys + h, REP_ST_STRONG, "%s", heads[h]);
    }
    for (size_t h = 0; h < nlat; h++) {
        t->right[g->nkeys + H_VERDICT + h] = true;
        rc |= rep_table_put(t, 0, g->nkeys + H_VERDICT + h, REP_ST_STRONG, lat_heads[h], g->latency);
    }
    rc |= rep_table_put(t, 0, verdict, REP_ST_STRONG, "%s", heads[H_VERDICT]);
    char buf[256];
    for (size_t i = 0, row = 1; i < g->ncells; i++) {
        const rep_cmp_cell *cc = &g->cells[i];
        if (!cc->base || !cc->new)
            continue;
        for (size_t k = 0; k < g->nkeys; k++) {
            /* the axis' own text ("0 (all 16)") where the cell matched on
             * it; else the value it matched on, from its config */
            long a = rep_group_axis(g->base, g->keys[k]);
            bool axis = a >= 0 && strcmp(g->base->axes[a].vals[cc->base->coord[a]], cc->vals[k]) == 0;
            rc |= rep_table_put(t, row, k, REP_ST_PLAIN, "%s",
                                axis ? rep_axis_text(&g->base->axes[a], cc->base->coord[a], buf, sizeof buf)
                                     : cc->vals[k]);
        }
        rc |= put_side(t, row, g->nkeys, cc->base, g->base->unit);
        rc |= put_side(t, row, g->nkeys + 2, cc->new, g->new->unit);
        rc |= put_judgement(t, row, g->nkeys + 4, cc, verdict);
        if (nlat)
            rc |= put_latency(t, row, g->nkeys + H_VERDICT, cc);
        row++;
    }
    return rc ? -1 : 0;
}

static bool only_in(const rep_cmp_cell *cc, bool in_base)
{
    return (in_base ? cc->base : cc->new) && !(in_base ? cc->new : cc->base);
}

const char *rep_cmp_only_lead(const rep_cmp_group *g, bool in_base)
{
    for (size_t i = 0; in_base && i < g->ncells; i++)
        if (only_in(&g->cells[i], true) && g->cells[i].regression)
            return "only in base (gate)";
    return in_base ? "only in base" : "only in new";
}

void rep_cmp_only_text(const rep_cmp_group *g, bool in_base, char *buf, size_t len)
{
    size_t total = 0, n = 0, more = 0;
    for (size_t i = 0; i < g->ncells; i++)
        total += only_in(&g->cells[i], in_base) ? strlen(g->cells[i].label) + 2 : 0;
    /* too long for buf: whole labels, then how many more (a label cut
     * short reads as another value: "cpus=1" of cpus=16) */
    size_t room = total < len + 2 ? len : len > 24 ? len - 24 : 0;
    buf[0] = 0;
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cmp_cell *cc = &g->cells[i];
        if (!only_in(cc, in_base))
            continue;
        size_t need = (n ? 2 : 0) + strlen(cc->label);
        if (more || n + need >= room)
            more++;
        else
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "; " : "", cc->label);
    }
    if (more && n < len)
        snprintf(buf + n, len - n, "%s... and %zu more", n ? "; " : "", more);
}

void rep_cmp_geomean_text(double geomean, size_t ngeo, char *buf, size_t len)
{
    if (ngeo == 0)
        snprintf(buf, len, "- (no cell ran on both sides)");
    else
        snprintf(buf, len, "%.3f (%+.1f%%) over %zu cell%s", geomean, 100 * (geomean - 1), ngeo,
                 ngeo == 1 ? "" : "s");
}

/* Appends s to the "; "-separated list in buf unless it is there already. */
static void add_distinct(char *buf, size_t len, const char *s)
{
    if (!s || !*s)
        return;
    size_t sl = strlen(s);
    for (const char *p = buf; *p;) {
        const char *e = strstr(p, "; ");
        size_t el = e ? (size_t)(e - p) : strlen(p);
        if (el == sl && memcmp(p, s, sl) == 0)
            return;
        p = e ? e + 2 : p + el;
    }
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, "%s%s", n ? "; " : "", s);
}

/* The side's hosts and CPU models: dlgauge_host points (JSONL) where
 * present, else the rows' host tags. */
static void side_machines(const rep_cmp_side *s, char *hosts, char *cpus, size_t len)
{
    hosts[0] = cpus[0] = 0;
    for (size_t i = 0; i < s->rows.nhosts; i++) {
        add_distinct(hosts, len, s->rows.hosts[i].host);
        add_distinct(cpus, len, s->rows.hosts[i].cpu_model);
    }
    for (size_t i = 0; i < s->rows.n && !s->rows.nhosts; i++)
        add_distinct(hosts, len, rep_tag(&s->rows.v[i], "host"));
}

void rep_cmp_side_text(const rep_cmp_side *s, char *buf, size_t len)
{
    char files[1024] = "", revs[256] = "", hosts[512], cpus[512];
    for (size_t i = 0; i < s->rows.nfiles; i++)
        add_distinct(files, sizeof files, s->rows.files[i]);
    for (size_t i = 0; i < s->rows.n; i++)
        add_distinct(revs, sizeof revs, rep_str(&s->rows.v[i], "git_rev"));
    side_machines(s, hosts, cpus, sizeof hosts);
    const char *ver = s->rows.n ? rep_str(&s->rows.v[0], "version") : NULL;
    snprintf(buf, len, "%s (%zu row%s): dlgauge %s%s%s%s on %s%s%s%s", files, s->rows.n, s->rows.n == 1 ? "" : "s",
             ver ? ver : "?",
             revs[0] ? " (git " : "", revs, revs[0] ? ")" : "", hosts[0] ? hosts : "an unnamed host",
             cpus[0] ? " (" : "", cpus, cpus[0] ? ")" : "");
}

void rep_cmp_machine_note(const rep_compare *c, char *buf, size_t len)
{
    char bh[512], bc[512], nh[512], nc[512];
    side_machines(&c->base, bh, bc, sizeof bh);
    side_machines(&c->new, nh, nc, sizeof nh);
    buf[0] = 0;
    if (bc[0] && nc[0] && strcmp(bc, nc) != 0)
        snprintf(buf, len, "the sides ran on different CPUs (%s vs %s): the differences include the machine", bc, nc);
    else if (bh[0] && nh[0] && strcmp(bh, nh) != 0)
        snprintf(buf, len, "the sides ran on different hosts (%s vs %s)%s", bh, nh,
                 bc[0] && nc[0] ? " of the same CPU model" : ": the differences may include the machine");
}
