/* SVG charts.  Plain shapes and text only, so that any browser (and
 * headless Chromium in the tests) renders them offline. */
#define _GNU_SOURCE
#include "model_rank.h"
#include "svg.h"

#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 600, H = 330, ML = 90, MR = 20, MT = 46, MB = 64, LEGEND_Y = 29 }; /* the legend between title and plot */

/* Bytes of the well-formed UTF-8 character at s (no overlong forms,
 * surrogates or code points past U+10FFFF), 0 for none.  The json sink's
 * json_text.c has the same rule; plugins build against the SDK alone, so
 * it keeps its own copy. */
static size_t utf8_char(const unsigned char *s)
{
    size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
    unsigned lo = s[0] == 0xe0 ? 0xa0 : s[0] == 0xf0 ? 0x90 : 0x80;
    unsigned hi = s[0] == 0xed ? 0x9f : s[0] == 0xf4 ? 0x8f : 0xbf;
    if (s[0] < 0xc2 || s[0] > 0xf4 || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

void rep_xml_esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if ((unsigned char)*s >= 0x80) {
            /* XML is UTF-8 here: one stray byte (a Latin-1 label) made the
             * whole SVG chart an XML error in the browser */
            size_t n = utf8_char((const unsigned char *)s);
            fwrite(n ? s : "\xef\xbf\xbd", 1, n ? n : 3, f);
            s += n ? n - 1 : 0;
            continue;
        }
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

static void open_svg(FILE *f, const char *title, const char *title2)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "role=\"img\" class=\"chart\">\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
               "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">",
            W, H, W, H, W, H, ML);
    rep_xml_esc(f, title);
    rep_xml_esc(f, title2);
    fputs("</text>\n", f);
}

/* A "nice" axis top at or above v whose fifths (the ticks) are round:
 * 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten.  With 1, 2 and 5
 * alone a curve topping out just above 100 drew on half the chart (200). */
static double nice_top(double v)
{
    static const double steps[] = {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8};
    if (!(v > 0))
        return 1;
    double p = pow(10, floor(log10(v)));
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        if (steps[i] * p >= v)
            return steps[i] * p;
    return 10 * p;
}

static void y_axis(FILE *f, double top, const char *unit, bool fraction)
{
    int x0 = ML, y0 = H - MB, y1 = MT;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y0, W - MR, y0);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", x0, y0, x0, y1);
    for (int i = 0; i <= 5; i++) {
        double v = top * i / 5;
        double y = y0 - (double)(y0 - y1) * i / 5;
        char lab[64];
        if (fraction)
            snprintf(lab, sizeof lab, "%.0f%%", 100 * v);
        else if (i == 0) /* "0 MB/s" under "20 GB/s" read as another scale */
            snprintf(lab, sizeof lab, "0");
        else
            dlg_format_rate(v, unit, lab, sizeof lab);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x0, y, W - MR, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">", x0 - 4, y + 3);
        rep_xml_esc(f, lab);
        fputs("</text>\n", f);
    }
}

static double ypix(double v, double top)
{
    return (H - MB) - (double)(H - MB - MT) * (v / top);
}

/* Every how many x positions a label goes: labels at -30 degrees need
 * about 22 px apart not to overprint each other (120 cells were a black
 * smear); the bars and points all stay. */
static size_t label_every(size_t n)
{
    size_t fit = (W - ML - MR) / 22;
    return n > fit ? (n + fit - 1) / fit : 1;
}

static void x_label(FILE *f, double x, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"end\" transform=\"rotate(-30 %.1f %d)\">", x,
            H - MB + 14, x, H - MB + 14);
    rep_xml_esc(f, s);
    fputs("</text>\n", f);
}

/* The word a cell left out of the curve's ranking is marked with. */
static const char *left_out_mark(rep_left_out why)
{
    return why == REP_LEFT_PARTIAL ? "partial" : why == REP_LEFT_UNENFORCED ? "no limit" : "cache";
}

/* A failed cell's status at x, where its mark would be. */
static void status_mark(FILE *f, double x, const char *status)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"#c0392b\" text-anchor=\"middle\">", x, H - MB - 6);
    rep_xml_esc(f, status ? status : "?");
    fputs("</text>\n", f);
}

void rep_svg_curve(FILE *f, const rep_report *r, const rep_group *g, size_t a)
{
    const rep_axis *ax = &g->axes[a];
    const rep_cell *best = &g->cells[g->best];
    size_t coord[64];
    if (g->naxes > 64)
        return;
    memcpy(coord, best->coord, g->naxes * sizeof *coord);
    double top = 0;
    for (size_t v = 0; v < ax->n; v++) {
        coord[a] = v;
        long c = rep_group_find(g, coord);
        if (c >= 0 && g->cells[c].ok && g->cells[c].thr + g->cells[c].ci > top)
            top = g->cells[c].thr + g->cells[c].ci;
    }
    top = nice_top(top * 1.05);
    char t2[128];
    snprintf(t2, sizeof t2, " vs %s", ax->key);
    open_svg(f, g->workload, t2);
    y_axis(f, top, g->unit, false);
    double step = (double)(W - ML - MR) / (double)(ax->n ? ax->n : 1);
    double tgt = ypix(r->target * best->thr, top);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c0392b\" stroke-dasharray=\"6 4\"/>\n", ML,
            tgt, W - MR, tgt);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" fill=\"#c0392b\" text-anchor=\"end\">%.0f%% of best</text>\n",
            W - MR, tgt - 4, 100 * r->target);
    fputs("<polyline fill=\"none\" stroke=\"#2c6fbb\" stroke-width=\"2\" points=\"", f);
    for (size_t v = 0; v < ax->n; v++) {
        coord[a] = v;
        long c = rep_group_find(g, coord);
        if (c >= 0 && g->cells[c].ok)
            fprintf(f, "%.1f,%.1f ", ML + step * ((double)v + 0.5), ypix(g->cells[c].thr, top));
    }
    fputs("\"/>\n", f);
    for (size_t v = 0, every = label_every(ax->n); v < ax->n; v++) {
        double x = ML + step * ((double)v + 0.5);
        char vt[64];
        if (v % every == 0)
            x_label(f, x, rep_axis_text(ax, v, vt, sizeof vt));
        coord[a] = v;
        long c = rep_group_find(g, coord);
        if (c < 0)
            continue;
        const rep_cell *cell = &g->cells[c];
        if (!cell->ok) {
            status_mark(f, x, cell->status);
            continue;
        }
        double y = ypix(cell->thr, top), ylo = ypix(fmax(cell->thr - cell->ci, 0), top),
               yhi = ypix(cell->thr + cell->ci, top);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x, ylo, x, yhi);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x - 5, ylo, x + 5, ylo);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x - 5, yhi, x + 5, yhi);
        bool knee = (size_t)c == g->knees[a].cell && !g->knees[a].unordered;
        if (!rep_cell_ranked(g, cell)) { /* cut short, unlimited or the cache's: hollow, named, not the curve's best */
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"#7f8c8d\" "
                       "stroke-width=\"2\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#7f8c8d\" "
                       "text-anchor=\"middle\">%s</text>\n",
                    x, y, x, yhi - 8, left_out_mark(rep_cell_left_out(g, cell)));
            continue;
        }
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"/>\n", x, y, knee ? 7 : 4,
                knee ? "#e67e22" : "#2c6fbb");
        if (knee)
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#e67e22\" text-anchor=\"middle\">knee</text>\n",
                    x, yhi - 8);
    }
    fputs("</svg>\n", f);
}

/* The shares of a step one cell's bar stacks, bottom up; 0 = not drawn.
 * Without AU the bottom is 1 - data wait in its own colour: drawn as AU, a
 * sleep that waits on nothing read as 100% compute. */
enum { PART_AU, PART_NOT_WAIT, PART_WAIT, PART_REST, NPARTS };
static const struct {
    const char *colour, *label;
} part_style[NPARTS] = {
    {"#27ae60", "AU (compute)"},
    {"#85c1e9", "1 - data wait (no AU)"},
    {"#e67e22", "data wait"},
    {"#bdc3c7", "rest of the step"},
};

static double unit_share(double v)
{
    return fmin(fmax(v, 0), 1);
}

/* A share shows as at least half a pixel: AU 0.9996 leaves no visible
 * rest, nor a legend entry for one. */
static bool visible(double share)
{
    return share * (H - MB - MT) >= 0.5;
}

/* Only what the cell measured: nothing at all where it has neither AU nor
 * data wait (or failed); AU + data wait are cut at 1 to stay on the axis;
 * shares too small to see are 0. */
static void cell_parts(const rep_cell *c, double p[NPARTS])
{
    for (int i = 0; i < NPARTS; i++)
        p[i] = 0;
    bool au = c->ok && !isnan(c->au), dw = c->ok && !isnan(c->data_wait);
    if (au)
        p[PART_AU] = unit_share(c->au);
    if (dw)
        p[PART_WAIT] = fmin(unit_share(c->data_wait), 1 - p[PART_AU]);
    if (au)
        p[PART_REST] = 1 - p[PART_AU] - p[PART_WAIT];
    else if (dw)
        p[PART_NOT_WAIT] = 1 - p[PART_WAIT];
    for (int i = 0; i < NPARTS; i++)
        p[i] = visible(p[i]) ? p[i] : 0;
}

static bool cell_measured(const rep_cell *c)
{
    return c->ok && (!isnan(c->au) || !isnan(c->data_wait));
}

const char *rep_svg_stack_title(const rep_group *g)
{
    bool au = false, any = false;
    for (size_t i = 0; i < g->ncells; i++) {
        au = au || (g->cells[i].ok && !isnan(g->cells[i].au));
        any = any || cell_measured(&g->cells[i]);
    }
    return au ? "AU and data wait per cell" : any ? "data wait per cell" : NULL;
}

/* A legend entry's width: swatch, text (guessed at 5.6 px a character),
 * gap. */
static double legend_width(const char *colour, const char *label)
{
    return (colour ? 14 : 0) + 5.6 * (double)strlen(label) + 12;
}

/* One legend entry at x; the x of the next. */
static double legend_entry(FILE *f, double x, const char *colour, const char *label)
{
    if (colour)
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>", x, LEGEND_Y, colour);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">", x + (colour ? 14 : 0), LEGEND_Y + 9);
    rep_xml_esc(f, label);
    fputs("</text>\n", f);
    return x + legend_width(colour, label);
}

static const char no_bar_label[] = "no bar: not measured";

/* The legend names the shares drawn in this chart, and no others; it
 * starts above the plot, or further left where all entries would not fit
 * before the right edge. */
static void stack_legend(FILE *f, const rep_group *g)
{
    bool used[NPARTS] = {false}, unmeasured = false;
    for (size_t i = 0; i < g->ncells; i++) {
        double p[NPARTS];
        cell_parts(&g->cells[i], p);
        for (int k = 0; k < NPARTS; k++)
            used[k] = used[k] || p[k] > 0;
        unmeasured = unmeasured || (g->cells[i].ok && !cell_measured(&g->cells[i]));
    }
    double width = unmeasured ? legend_width(NULL, no_bar_label) : 0;
    for (int k = 0; k < NPARTS; k++)
        width += used[k] ? legend_width(part_style[k].colour, part_style[k].label) : 0;
    double x = fmax(4, fmin(ML, W - MR + 12 - width)); /* the last gap may pass the edge */
    for (int k = 0; k < NPARTS; k++)
        if (used[k])
            x = legend_entry(f, x, part_style[k].colour, part_style[k].label);
    if (unmeasured)
        legend_entry(f, x, NULL, no_bar_label);
}

int rep_svg_stack(FILE *f, const rep_group *g)
{
    const char *what = rep_svg_stack_title(g);
    char t2[64];
    snprintf(t2, sizeof t2, ": %s", what ? what : "AU and data wait not measured");
    open_svg(f, g->workload, t2);
    y_axis(f, 1, NULL, true);
    double step = (double)(W - ML - MR) / (double)(g->ncells ? g->ncells : 1);
    double bw = step * 0.6;
    size_t *order = rep_group_cell_order(g); /* as the table lists them, so that every k-th label reads in order */
    for (size_t i = 0, every = label_every(g->ncells); order && i < g->ncells; i++) {
        const rep_cell *cell = &g->cells[order[i]];
        double x = ML + step * ((double)i + 0.2);
        char lab[256];
        rep_cell_label(g, cell, lab, sizeof lab);
        if (i % every == 0)
            x_label(f, x + bw / 2, lab);
        if (!cell->ok)
            status_mark(f, x + bw / 2, cell->status);
        double parts[NPARTS], base = 0;
        cell_parts(cell, parts);
        for (int p = 0; p < NPARTS; p++) {
            double y0 = ypix(base, 1), y1 = ypix(base + parts[p], 1);
            if (parts[p] > 0)
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", x, y1, bw,
                        y0 - y1, part_style[p].colour);
            base += parts[p];
        }
    }
    stack_legend(f, g);
    fputs("</svg>\n", f);
    bool lost = !order;
    free(order);
    return lost ? ENOMEM : 0;
}

void rep_svg_cost(FILE *f, const rep_report *r)
{
    const rep_reco *re = &r->reco;
    size_t n = 0;
    double top = 0;
    for (size_t i = 0; i < re->n; i++)
        if (isfinite(re->v[i].score)) {
            n++;
            top = fmax(top, re->v[i].score);
        }
    int h = 40 + 22 * (int)(n ? n : 1) + 30;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "class=\"chart\">\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
               "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">",
            W + 100, h, W + 100, h, W + 100, h);
    if (re->weighted) {
        fputs("cost of the weighted mix (", f);
        rep_xml_esc(f, re->currency ? re->currency : "");
        fputs(")", f);
    } else if (re->unit) {
        char per[64];
        fputs("cost per ", f);
        rep_xml_esc(f, rep_cost_label(re->unit, false, per, sizeof per));
        fputs(" (", f);
        rep_xml_esc(f, re->currency ? re->currency : "");
        fputs(")", f);
    } else { /* several units: what the ranking compares */
        fputs("cost per item relative to the lowest (geometric mean over the groups)", f);
    }
    fputs("</text>\n", f);
    top = top > 0 ? top : 1;
    int left = 230, width = W + 100 - left - 80;
    size_t row = 0;
    for (size_t i = 0; i < re->n; i++) {
        const rep_choice *ch = &re->v[i];
        if (!isfinite(ch->score))
            continue;
        double y = 36 + 22.0 * (double)row++;
        double w = (double)width * ch->score / top;
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">", left - 6, y + 12);
        rep_xml_esc(f, ch->inst->name);
        fputs("</text>\n", f);
        fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>\n", left, y, fmax(w, 1),
                !ch->meets ? "#bdc3c7" : i == 0 ? "#27ae60" : "#2c6fbb");
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%.4g%s</text>\n", left + fmax(w, 1) + 4, y + 12,
                ch->score, ch->meets ? "" : " (misses a knee)");
    }
    fputs("</svg>\n", f);
}
