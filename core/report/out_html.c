/* The HTML report: one self-contained file (inline CSS and SVG, no
 * scripts, no fonts, no links to fetch) that opens offline.  Charts are
 * SVG in data: URIs.  Markup is also well-formed XML for strict parsers. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_rank.h"
#include "report.h"
#include "scaling.h"
#include "utf8_out.h"
#include "mem_out.h"
#include "svg.h"

static const char css[] =
    "body{font-family:sans-serif;margin:2em;color:#222;max-width:1200px}"
    "table{border-collapse:collapse;margin:0.5em 0 1em 0;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 7px}th{background:#f2f2f2}"
    "td.r{text-align:right}.good{color:#1e7e34}.bad{color:#b03a2e}.strong{font-weight:bold}"
    "img.chart{margin:0.5em 1em 0.5em 0;border:1px solid #eee}"
    "p.note{color:#555;font-size:12px}";

/* A chart as an <img> with a data: URI: self-contained, and plain HTML that
 * any HTML parser accepts (inline <svg> is unknown to HTML4 parsers). */
static void img_svg(FILE *f, const char *svg, size_t len, const char *alt)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    fputs("<img class=\"chart\" alt=\"", f);
    rep_xml_esc(f, alt);
    fputs("\" src=\"data:image/svg+xml;base64,", f);
    const unsigned char *p = (const unsigned char *)svg;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < len ? p[i + 2] : 0);
        fputc(b64[v >> 18 & 63], f);
        fputc(b64[v >> 12 & 63], f);
        fputc(i + 1 < len ? b64[v >> 6 & 63] : '=', f);
        fputc(i + 2 < len ? b64[v & 63] : '=', f);
    }
    fputs("\"/>\n", f);
}

/* A note paragraph of text; nothing for an empty one. */
static void note_para(FILE *f, const char *s)
{
    if (!s[0])
        return;
    fputs("<p class=\"note\">", f);
    rep_xml_esc(f, s);
    fputs("</p>\n", f);
}

/* The chart `call` draws into m_ as an <img>; lost set when memory ran out
 * for it. */
#define CHART(f, alt, call, lost)                                                                                      \
    do {                                                                                                               \
        rep_mem_out mo_;                                                                                               \
        FILE *m_ = rep_mem_open(&mo_);                                                                                 \
        if (m_) {                                                                                                      \
            call;                                                                                                      \
            if (rep_mem_close(m_, &mo_) == 0)                                                                          \
                img_svg(f, mo_.buf, mo_.len, alt);                                                                     \
            else                                                                                                       \
                (lost) = true;                                                                                         \
            free(mo_.buf);                                                                                             \
        } else {                                                                                                       \
            (lost) = true;                                                                                             \
        }                                                                                                              \
    } while (0)

static void html_table(FILE *f, const rep_table *t)
{
    static const char *const cls[] = {"", "good", "bad", "strong"};
    fputs("<table>\n", f);
    for (size_t r = 0; r < t->nrows; r++) {
        fputs("<tr>", f);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *tag = r == 0 ? "th" : "td";
            int st = t->style[r * t->ncols + c];
            fprintf(f, "<%s class=\"%s%s%s\">", tag, t->right[c] && r ? "r" : "", t->right[c] && r && st ? " " : "",
                    r ? cls[st] : "");
            rep_xml_esc(f, t->cell[r * t->ncols + c]);
            fprintf(f, "</%s>", tag);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* true when memory ran out for part of it */
static bool group_html(FILE *f, const rep_report *r, const rep_group *g)
{
    bool lost = false;
    char title[256], line[640];
    rep_group_title(g, title, sizeof title);
    fputs("<h2>", f);
    rep_xml_esc(f, title);
    fputs("</h2>\n", f);
    rep_table t;
    if (rep_table_cells(&t, r, g) == 0)
        html_table(f, &t);
    else
        lost = true;
    rep_table_free(&t);
    if (!g->has_best) {
        fputs("<p>No cell measured successfully: no knees.</p>\n", f);
        return lost;
    }
    if (rep_group_nswept(g)) {
        fprintf(f, "<h3>Knees</h3>\n<p>Smallest value reaching %.0f%% of the best, the other axes at their best.</p>\n<ul>\n",
                100 * r->target);
        for (size_t a = 0; a < g->naxes; a++) {
            if (!rep_axis_swept(g, a))
                continue;
            rep_knee_text(r, g, a, line, sizeof line);
            fputs("<li>", f);
            rep_xml_esc(f, line);
            fputs("</li>\n", f);
        }
        fputs("</ul>\n<div>\n", f);
        for (size_t a = 0; a < g->naxes; a++) {
            if (!rep_axis_swept(g, a))
                continue;
            char alt[256];
            snprintf(alt, sizeof alt, "throughput of %s vs %s", g->workload, g->axes[a].key);
            CHART(f, alt, rep_svg_curve(m_, r, g, a), lost);
        }
        fputs("</div>\n", f);
    }
    rep_group_starved_text(g, line, sizeof line);
    if (line[0]) {
        fputs("<p class=\"bad\"><strong>", f);
        rep_xml_esc(f, line);
        fputs("</strong></p>\n", f);
    }
    rep_group_rank_note(g, line, sizeof line);
    note_para(f, line);
    rep_scaling_text(&r->model, (size_t)(g - r->model.g), line, sizeof line);
    note_para(f, line);
    fputs("<h3>Bottlenecks</h3>\n<ul>\n", f);
    size_t *order = rep_group_cell_order(g); /* as the table lists them */
    lost |= !order;
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cell *cell = &g->cells[order ? order[i] : i];
        char lab[256];
        rep_cell_label(g, cell, lab, sizeof lab);
        fputs("<li><code>", f);
        rep_xml_esc(f, lab);
        fprintf(f, "</code>: <span class=\"%s\">", cell->bn == REP_BN_COMPUTE ? "good" : "bad");
        rep_xml_esc(f, rep_bn_name(cell->bn));
        fputs("</span> (", f);
        rep_xml_esc(f, cell->evidence[0] ? cell->evidence : "no evidence fields");
        fputs(")</li>\n", f);
    }
    free(order);
    fputs("</ul>\n", f);
    const char *what = rep_svg_stack_title(g);
    if (!what) { /* a chart of nothing measured would draw bars of nothing */
        fputs("<p class=\"note\">No cell measured AU or data wait: no utilisation chart.</p>\n", f);
        return lost;
    }
    fputs("<div>\n", f);
    CHART(f, what, lost |= rep_svg_stack(m_, g) != 0, lost);
    fputs("</div>\n", f);
    return lost;
}

static void sources_html(FILE *f, const rep_report *r)
{
    char line[2048];
    fputs("<p class=\"note\">Prices from:</p>\n<ul class=\"note\">\n", f);
    for (size_t i = 0; i < r->cat.n; i++) {
        if (!rep_price_source(r, i, line, sizeof line))
            continue;
        fputs("<li>", f);
        rep_xml_esc(f, line);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
}

static int html_body(FILE *f, const rep_report *r)
{
    bool lost = false; /* a table or chart left out for want of memory */
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>dlgauge report</title>\n"
               "<style>%s</style>\n</head>\n<body>\n<h1>dlgauge report</h1>\n",
            css);
    fprintf(f, "<p>%zu result rows from %zu file(s); knee target: %.0f%% of the best.</p>\n", r->rows.n, r->rows.nfiles,
            100 * r->target);
    for (size_t gi = 0; gi < r->model.n; gi++)
        lost |= group_html(f, r, &r->model.g[gi]);
    char line[2048];
    rep_reco_text(r, line, sizeof line);
    fputs("<h2>Recommendation</h2>\n<p class=\"strong\">", f);
    rep_xml_esc(f, line);
    fputs("</p>\n", f);
    if (r->have_reco && r->reco.n) {
        rep_table t;
        if (rep_table_reco(&t, r) == 0)
            html_table(f, &t);
        else
            lost = true;
        rep_table_free(&t);
        fputs("<div>\n", f);
        CHART(f, "what each instance is ranked by: its cost per item", rep_svg_cost(m_, r), lost);
        fputs("</div>\n<p class=\"note\">", f);
        rep_reco_basis(r, line, sizeof line);
        line[0] = (char)toupper((unsigned char)line[0]);
        rep_xml_esc(f, line);
        fputs(".</p>\n", f);
        rep_reco_caveat(r, line, sizeof line);
        if (line[0]) {
            fputs("<p class=\"note\"><strong>", f);
            rep_xml_esc(f, line);
            fputs("</strong></p>\n", f);
        }
        rep_reco_caps_note(&r->reco, line, sizeof line);
        note_para(f, line);
        rep_reco_contended_note(r, line, sizeof line);
        note_para(f, line);
        sources_html(f, r);
    }
    fputs("</body>\n</html>\n", f);
    return lost ? ENOMEM : 0;
}

static int html_to(FILE *f, const void *r) { return html_body(f, r); }

int rep_out_html(FILE *f, const rep_report *r)
{
    return rep_utf8_render(f, html_to, r);
}
