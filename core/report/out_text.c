/* The terminal report: aligned tables with units; colour only on a TTY. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_rank.h"
#include "report.h"
#include "scaling.h"
#include "utf8_out.h"

static const char *style_on(int st, bool colour)
{
    if (!colour)
        return "";
    switch (st) {
    case REP_ST_GOOD:
        return "\033[32m";
    case REP_ST_BAD:
        return "\033[31m";
    case REP_ST_STRONG:
        return "\033[1m";
    default:
        return "";
    }
}

void rep_term_text(FILE *f, const char *s)
{
    for (; s && *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

/* pre, text (as rep_term_text), post and a newline. */
static void put_line(FILE *f, const char *pre, const char *text, const char *post)
{
    fputs(pre, f);
    rep_term_text(f, text);
    fputs(post, f);
    fputc('\n', f);
}

void rep_table_print(FILE *f, const rep_table *t, bool colour, const char *indent)
{
    size_t w[64] = {0};
    size_t nc = t->ncols < 64 ? t->ncols : 64;
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < nc; c++) {
            const char *s = t->cell[r * t->ncols + c];
            size_t l = rep_utf8_columns(s);
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(indent, f);
        for (size_t c = 0; c < nc; c++) {
            const char *s = t->cell[r * t->ncols + c];
            s = s ? s : "";
            int st = t->style[r * t->ncols + c];
            const char *on = style_on(st, colour), *off = *on ? "\033[0m" : "";
            int pad = (int)(w[c] - rep_utf8_columns(s));
            bool last = c + 1 == nc;
            bool right = t->right[c] && r > 0;
            fprintf(f, "%*s%s", right ? pad : 0, "", on);
            rep_term_text(f, s);
            fprintf(f, "%s%*s", off, right || last ? 0 : pad, "");
            if (!last)
                fputs("  ", f);
        }
        fputc('\n', f);
    }
}

static int text_body(FILE *f, const rep_report *r, bool colour)
{
    bool lost = false; /* a table or the cells' order left out for want of memory */
    const char *b = colour ? "\033[1m" : "", *e = colour ? "\033[0m" : "";
    fprintf(f, "dlgauge report: %zu rows from %zu file(s), %zu group(s); knee target %.0f%% of the best\n",
            r->rows.n, r->rows.nfiles, r->model.n, 100 * r->target);
    for (size_t h = 0; h < r->rows.nhosts; h++) {
        char host[512];
        snprintf(host, sizeof host, "  run %s on %s: %s, %.0f CPUs, %.1f GiB",
                 r->rows.hosts[h].run_id ? r->rows.hosts[h].run_id : "?", r->rows.hosts[h].host ? r->rows.hosts[h].host : "?",
                 r->rows.hosts[h].cpu_model ? r->rows.hosts[h].cpu_model : "?", r->rows.hosts[h].cpus_online,
                 r->rows.hosts[h].mem_total_bytes / 1073741824.0);
        put_line(f, "", host, "");
    }
    for (size_t gi = 0; gi < r->model.n; gi++) {
        const rep_group *g = &r->model.g[gi];
        char title[256], line[640];
        rep_group_title(g, title, sizeof title);
        fprintf(f, "\n%s== ", b);
        rep_term_text(f, title);
        fprintf(f, " ==%s\n", e);
        rep_table t;
        if (rep_table_cells(&t, r, g) == 0)
            rep_table_print(f, &t, colour, "  ");
        else
            lost = true;
        rep_table_free(&t);
        if (!g->has_best) {
            fprintf(f, "  no cell measured successfully: no knees\n");
            continue;
        }
        if (rep_group_nswept(g))
            fprintf(f, "  knees (smallest value reaching %.0f%% of the best, other axes at their best):\n",
                    100 * r->target);
        for (size_t a = 0; a < g->naxes; a++) {
            if (!rep_axis_swept(g, a))
                continue;
            rep_knee_text(r, g, a, line, sizeof line);
            put_line(f, "    ", line, "");
        }
        rep_group_starved_text(g, line, sizeof line);
        if (line[0])
            put_line(f, "  ", line, "");
        rep_group_rank_note(g, line, sizeof line);
        if (line[0])
            put_line(f, "  ", line, "");
        rep_scaling_text(&r->model, gi, line, sizeof line);
        if (line[0])
            put_line(f, "  ", line, "");
        fprintf(f, "  bottlenecks:\n");
        size_t *order = rep_group_cell_order(g); /* as the table lists them */
        lost |= !order;
        for (size_t i = 0; i < g->ncells; i++) {
            const rep_cell *cell = &g->cells[order ? order[i] : i];
            char lab[256];
            rep_cell_label(g, cell, lab, sizeof lab);
            fputs("    ", f);
            rep_term_text(f, lab);
            fprintf(f, ": %s%s%s (", style_on(cell->bn == REP_BN_COMPUTE ? REP_ST_GOOD : REP_ST_BAD, colour),
                    rep_bn_name(cell->bn), e);
            put_line(f, "", cell->evidence[0] ? cell->evidence : "no evidence fields", ")");
        }
        free(order);
    }
    char line[2048];
    rep_reco_text(r, line, sizeof line);
    fputc('\n', f);
    put_line(f, b, line, e);
    if (r->have_reco && r->reco.n) {
        rep_table t;
        if (rep_table_reco(&t, r) == 0)
            rep_table_print(f, &t, colour, "  ");
        else
            lost = true;
        rep_table_free(&t);
        rep_reco_basis(r, line, sizeof line);
        put_line(f, "  ", line, "");
        rep_reco_caveat(r, line, sizeof line);
        if (line[0]) {
            fputs("  ", f);
            put_line(f, b, line, e);
        }
        rep_reco_caps_note(&r->reco, line, sizeof line);
        if (line[0])
            put_line(f, "  ", line, "");
        rep_reco_contended_note(r, line, sizeof line);
        if (line[0])
            put_line(f, "  ", line, "");
    }
    return lost ? ENOMEM : 0;
}

typedef struct text_ctx {
    const rep_report *r;
    bool colour;
} text_ctx;

static int text_to(FILE *f, const void *ctx)
{
    const text_ctx *t = ctx;
    return text_body(f, t->r, t->colour);
}

int rep_out_text(FILE *f, const rep_report *r, bool colour)
{
    text_ctx t = {r, colour};
    return rep_utf8_render(f, text_to, &t);
}
