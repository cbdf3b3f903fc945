/* The Markdown summary: the same tables as the terminal, as pipe tables. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_rank.h"
#include "report.h"
#include "scaling.h"
#include "utf8_out.h"

/* An '_' between two letters or digits emphasises nothing (CommonMark),
 * so "io_uring" stays as written; elsewhere it may. */
static bool md_emphasis_underscore(const char *start, const char *p)
{
    return p == start || !isalnum((unsigned char)p[-1]) || !isalnum((unsigned char)p[1]);
}

/* Text in a table cell or a line: '|' escaped, '<' and '&' too (a label
 * "<b>" is raw HTML to a renderer, "&lt;" an entity), '\\' so that "x\\|"
 * stays in its cell, and what would format ('*', '_', '`', '[', ']', '~':
 * a label "*fast*" is a label, not emphasis); no line breaks. */
void rep_md_text(FILE *f, const char *s)
{
    for (const char *p = s; p && *p; p++) {
        if (strchr("|<&\\*`[]~", *p) || (*p == '_' && md_emphasis_underscore(s, p)))
            fprintf(f, "\\%c", *p);
        else if (*p == '\n' || *p == '\r')
            fputc(' ', f);
        else
            fputc(*p, f);
    }
}

/* A paragraph of text (bold when asked); nothing for an empty one. */
static void md_para(FILE *f, const char *s, bool bold)
{
    if (!s[0])
        return;
    fputs(bold ? "\n**" : "\n", f);
    rep_md_text(f, s);
    fputs(bold ? "**\n" : "\n", f);
}

/* s as a code span: fenced by one more backtick than its longest run (a
 * label `q` must not end the span), padded where s starts or ends with
 * one; line breaks as spaces. */
static void md_code(FILE *f, const char *s)
{
    size_t run = 0, longest = 0, len = strlen(s);
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    bool pad = len && (s[0] == '`' || s[len - 1] == '`');
    for (size_t i = 0; i <= longest; i++)
        fputc('`', f);
    fputs(pad ? " " : "", f);
    for (const char *p = s; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
    fputs(pad ? " " : "", f);
    for (size_t i = 0; i <= longest; i++)
        fputc('`', f);
}

void rep_table_md(FILE *f, const rep_table *t)
{
    for (size_t r = 0; r < t->nrows; r++) {
        fputc('|', f);
        for (size_t c = 0; c < t->ncols; c++) {
            fputc(' ', f);
            rep_md_text(f, t->cell[r * t->ncols + c]);
            fputs(" |", f);
        }
        fputc('\n', f);
        if (r == 0) {
            fputc('|', f);
            for (size_t c = 0; c < t->ncols; c++)
                fputs(t->right[c] ? "---:|" : "---|", f);
            fputc('\n', f);
        }
    }
}

static int md_body(FILE *f, const rep_report *r)
{
    bool lost = false; /* a table or the cells' order left out for want of memory */
    fprintf(f, "# dlgauge report\n\n%zu result rows from %zu file(s); knee target: %.0f%% of the best.\n",
            r->rows.n, r->rows.nfiles, 100 * r->target);
    for (size_t gi = 0; gi < r->model.n; gi++) {
        const rep_group *g = &r->model.g[gi];
        char title[256], line[640];
        rep_group_title(g, title, sizeof title);
        fprintf(f, "\n## ");
        rep_md_text(f, title);
        fprintf(f, "\n\n");
        rep_table t;
        if (rep_table_cells(&t, r, g) == 0)
            rep_table_md(f, &t);
        else
            lost = true;
        rep_table_free(&t);
        if (!g->has_best) {
            fprintf(f, "\nNo cell measured successfully: no knees.\n");
            continue;
        }
        if (rep_group_nswept(g))
            fprintf(f, "\n**Knees** (smallest value reaching %.0f%% of the best, other axes at their best):\n\n",
                    100 * r->target);
        for (size_t a = 0; a < g->naxes; a++) {
            if (!rep_axis_swept(g, a))
                continue;
            rep_knee_text(r, g, a, line, sizeof line);
            fprintf(f, "- ");
            rep_md_text(f, line);
            fputc('\n', f);
        }
        rep_group_starved_text(g, line, sizeof line);
        md_para(f, line, true);
        rep_group_rank_note(g, line, sizeof line);
        md_para(f, line, false);
        rep_scaling_text(&r->model, gi, line, sizeof line);
        md_para(f, line, false);
        fprintf(f, "\n**Bottlenecks:**\n\n");
        size_t *order = rep_group_cell_order(g); /* as the table lists them */
        lost |= !order;
        for (size_t i = 0; i < g->ncells; i++) {
            const rep_cell *cell = &g->cells[order ? order[i] : i];
            char lab[256];
            rep_cell_label(g, cell, lab, sizeof lab);
            fputs("- ", f);
            md_code(f, lab);
            fprintf(f, ": **%s** (", rep_bn_name(cell->bn));
            rep_md_text(f, cell->evidence[0] ? cell->evidence : "no evidence fields");
            fprintf(f, ")\n");
        }
        free(order);
    }
    char line[2048];
    rep_reco_text(r, line, sizeof line);
    fprintf(f, "\n## Recommendation\n\n");
    rep_md_text(f, line);
    fprintf(f, "\n");
    if (r->have_reco && r->reco.n) {
        rep_table t;
        fputc('\n', f);
        if (rep_table_reco(&t, r) == 0)
            rep_table_md(f, &t);
        else
            lost = true;
        rep_table_free(&t);
        rep_reco_basis(r, line, sizeof line);
        line[0] = (char)toupper((unsigned char)line[0]);
        fputc('\n', f); /* these name instances and tags from the catalogs: text, not Markdown */
        rep_md_text(f, line);
        fprintf(f, ".\n");
        rep_reco_caveat(r, line, sizeof line);
        md_para(f, line, true);
        rep_reco_caps_note(&r->reco, line, sizeof line);
        md_para(f, line, false);
        rep_reco_contended_note(r, line, sizeof line);
        md_para(f, line, false);
        fputs("\nPrices from:\n\n", f); /* as the HTML lists them */
        for (size_t i = 0; i < r->cat.n; i++)
            if (rep_price_source(r, i, line, sizeof line)) {
                fputs("- ", f);
                rep_md_text(f, line);
                fputc('\n', f);
            }
    }
    return lost ? ENOMEM : 0;
}

static int md_to(FILE *f, const void *r) { return md_body(f, r); }

int rep_out_markdown(FILE *f, const rep_report *r)
{
    return rep_utf8_render(f, md_to, r);
}
