/* dlgauge compare's terminal and Markdown outputs: one walk over the
 * comparison, written through either form's headings, lines and tables. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "compare_view.h"
#include "utf8_out.h"
#include "report.h"

typedef struct out_form {
    FILE *f;
    bool colour, md;
} out_form;

static void heading(const out_form *o, const char *s)
{
    if (o->md) {
        fputs("\n## ", o->f);
        rep_md_text(o->f, s);
        fputs("\n\n", o->f);
    } else { /* names from the results: no control characters (rep_term_text) */
        fprintf(o->f, "\n%s== ", o->colour ? "\033[1m" : "");
        rep_term_text(o->f, s);
        fprintf(o->f, " ==%s\n", o->colour ? "\033[0m" : "");
    }
}

/* One line of text: "  lead: text" in the terminal, "- **lead:** text" in Markdown. */
static void line(const out_form *o, const char *lead, const char *s)
{
    if (o->md) {
        fprintf(o->f, "%s**%s:** ", "- ", lead);
        rep_md_text(o->f, s);
        fputc('\n', o->f);
    } else {
        fprintf(o->f, "  %s: ", lead);
        rep_term_text(o->f, s);
        fputc('\n', o->f);
    }
}

static void table(const out_form *o, const rep_table *t)
{
    if (o->md)
        rep_table_md(o->f, t);
    else
        rep_table_print(o->f, t, o->colour, "  ");
    if (o->md)
        fputc('\n', o->f);
}

static void header(const out_form *o, const rep_compare *c)
{
    char buf[2048];
    if (o->md)
        fprintf(o->f, "# dlgauge compare\n\n");
    else
        fprintf(o->f, "dlgauge compare: ");
    fprintf(o->f, "new against base, cell by cell; Welch's t-test, two-sided, alpha %g", c->alpha);
    if (c->latency)
        fprintf(o->f, "; %s step latency beside throughput (lower is better, no test)", c->latency);
    if (c->gate || c->latency_gate)
        fprintf(o->f, "; gate: ");
    if (c->gate)
        fprintf(o->f, "a significant slowdown beyond %.6g%%, ", 100 * c->fail_below); /* as given: -9.99, not -10.0 */
    if (c->latency_gate)
        fprintf(o->f, "a %s step latency rise beyond +%.6g%%, ", c->latency, 100 * c->fail_above_latency);
    if (c->gate || c->latency_gate)
        fprintf(o->f, "%s fails", c->allow_missing ? "a new failure" : "a new failure or a cell missing from new");
    fprintf(o->f, "%s", o->md ? ".\n\n" : "\n");
    rep_cmp_side_text(&c->base, buf, sizeof buf);
    line(o, "base", buf);
    rep_cmp_side_text(&c->new, buf, sizeof buf);
    line(o, "new", buf);
    rep_cmp_machine_note(c, buf, sizeof buf);
    if (buf[0])
        line(o, "note", buf);
}

/* true when memory ran out for its table */
static bool group(const out_form *o, const rep_cmp_group *g)
{
    char buf[4096];
    heading(o, g->name);
    if (!g->base || !g->new) {
        size_t n = (g->base ? g->base : g->new)->ncells;
        snprintf(buf, sizeof buf, "the whole group (%zu cell%s)", n, n == 1 ? "" : "s");
        line(o, rep_cmp_only_lead(g, g->base != NULL), buf);
        return false;
    }
    if (g->unit_differs) {
        snprintf(buf, sizeof buf, "base counts %s, new counts %s", g->base->unit, g->new->unit);
        line(o, g->regression ? "not compared (gate)" : "not compared", buf);
        return false;
    }
    rep_table t = {0};
    bool lost = false;
    if (rep_cmp_matched(g)) {
        if (rep_cmp_table(&t, g) == 0)
            table(o, &t);
        else
            lost = true;
    }
    rep_table_free(&t);
    for (size_t i = 0; i < g->ncells; i++) { /* the profiled cells' layer kinds */
        char lead[256];
        rep_cmp_layers_text(&g->cells[i], buf, sizeof buf);
        if (!buf[0])
            continue;
        snprintf(lead, sizeof lead, "layers %s", g->cells[i].label);
        line(o, lead, buf);
    }
    rep_cmp_geomean_text(g->geomean, g->ngeo, buf, sizeof buf);
    line(o, "geomean new/base", buf);
    for (int side = 1; side >= 0; side--) {
        rep_cmp_only_text(g, side, buf, sizeof buf);
        if (buf[0])
            line(o, rep_cmp_only_lead(g, side), buf);
    }
    return lost;
}

static void footer(const out_form *o, const rep_compare *c)
{
    char buf[256];
    rep_cmp_geomean_text(c->geomean, c->ngeo, buf, sizeof buf);
    fprintf(o->f, "\n%sgeomean new/base over all groups: %s%s\n", o->md ? "**" : "", buf, o->md ? "**" : "");
    if (c->nlat_missing)
        fprintf(o->f, "%s%zu cell%s without %s on a side: latency not compared there%s\n", o->md ? "\n" : "",
                c->nlat_missing, c->nlat_missing == 1 ? "" : "s", rep_cmp_latency_field(c->latency),
                c->latency_gate ? " (nor gated)" : "");
    if (c->gate && c->nno_ci)
        fprintf(o->f, "%s%zu cell%s with fewer than 2 repeats on a side: throughput not tested there (nor gated)\n",
                o->md ? "\n" : "", c->nno_ci, c->nno_ci == 1 ? "" : "s");
    if (c->nlat_zero_base)
        fprintf(o->f, "%s%zu cell%s with a base %s of 0: latency not compared there%s\n", o->md ? "\n" : "",
                c->nlat_zero_base, c->nlat_zero_base == 1 ? "" : "s", rep_cmp_latency_field(c->latency),
                c->latency_gate ? " (nor gated)" : "");
    if (c->gate || c->latency_gate)
        fprintf(o->f, "%s%zu cell%s fail%s the gate\n", o->md ? "\n" : "", c->nregressions,
                c->nregressions == 1 ? "" : "s", c->nregressions == 1 ? "s" : "");
}

static int emit(const out_form *o, const rep_compare *c)
{
    bool lost = false; /* a table left out for want of memory */
    header(o, c);
    for (size_t i = 0; i < c->n; i++)
        lost |= group(o, &c->g[i]);
    footer(o, c);
    return lost ? ENOMEM : 0;
}

/* out_form's f unset: the form, for rep_utf8_render. */
typedef struct emit_ctx {
    out_form o;
    const rep_compare *c;
} emit_ctx;

static int emit_to(FILE *f, const void *ctx)
{
    const emit_ctx *e = ctx;
    out_form o = e->o;
    o.f = f;
    return emit(&o, e->c);
}

int rep_cmp_out_text(FILE *f, const rep_compare *c, bool colour)
{
    emit_ctx e = {{NULL, colour, false}, c};
    return rep_utf8_render(f, emit_to, &e);
}

int rep_cmp_out_markdown(FILE *f, const rep_compare *c)
{
    emit_ctx e = {{NULL, false, true}, c};
    return rep_utf8_render(f, emit_to, &e);
}
