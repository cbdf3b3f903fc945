/* dlgauge report: results files -> model -> terminal, Markdown and HTML. */
#ifndef DLG_REPORT_H
#define DLG_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "model.h"
#include "recommend.h"
#include "rows.h"

typedef struct rep_report {
    rep_rows rows;
    rep_disks disks;
    rep_model model;
    rep_catalog cat;
    rep_reco reco;
    bool have_reco;
    bool *selected; /* per group: counted in the recommendation */
    double *weights; /* per group: --weight, its share of the mix in cost quanta; NULL: none given */
    const char *gpu_filter;
    double target;
} rep_report;

/* A table of text cells, shared by the three outputs. */
enum { REP_ST_PLAIN, REP_ST_GOOD, REP_ST_BAD, REP_ST_STRONG };

typedef struct rep_table {
    size_t ncols, nrows; /* row 0 is the header */
    char **cell;         /* nrows x ncols */
    unsigned char *style;
    bool *right; /* per column: numbers align right */
} rep_table;

/* A table of nrows x ncols empty cells (0, or -1 out of memory). */
int rep_table_init(rep_table *t, size_t nrows, size_t ncols);
/* Sets cell (r, c) to the formatted text in a style (0, or -1). */
int rep_table_put(rep_table *t, size_t r, size_t c, int style, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The terminal form: aligned columns, each line after indent. */
void rep_table_print(FILE *f, const rep_table *t, bool colour, const char *indent);
/* The Markdown form: a pipe table. */
void rep_table_md(FILE *f, const rep_table *t);
/* Text from the results as the terminal shows it: a control character (a
 * newline in a quoted CSV cell, an escape sequence) as a space, so that
 * it neither breaks a table row nor drives the terminal. */
void rep_term_text(FILE *f, const char *s);
/* Text for a Markdown table cell or line: '|' escaped, no line breaks. */
void rep_md_text(FILE *f, const char *s);
/* The group's cell indices in axis order (by their coordinates), or NULL;
 * the caller frees it. */
size_t *rep_group_cell_order(const rep_group *g);

int rep_table_cells(rep_table *t, const rep_report *r, const rep_group *g);
int rep_table_reco(rep_table *t, const rep_report *r);
void rep_table_free(rep_table *t);
/* "storage = mid: 398 images/s, 99.5% of the best; ..." */
void rep_knee_text(const rep_report *r, const rep_group *g, size_t a, char *buf, size_t len);
/* "io-pipeline, mode -, precision -" */
void rep_group_title(const rep_group *g, char *buf, size_t len);
/* An axis value for people: cpus "0" reads "0 (all 16)", the count that
 * row ran on; every other value as written. */
const char *rep_axis_text(const rep_axis *ax, size_t v, char *buf, size_t len);
/* "storage=slow cpus=2" */
void rep_cell_label(const rep_group *g, const rep_cell *c, char *buf, size_t len);
/* What an instance is ranked by: "0.2753 USD per million images" ("per TB"
 * for bytes), or with
 * several units "1.070x the lowest cost per item (geometric mean ...)". */
void rep_score_text(const rep_report *r, const rep_choice *ch, char *buf, size_t len);
/* One line: the recommended instance and the runner-up, or why none. */
void rep_reco_text(const rep_report *r, char *buf, size_t len);
/* "" or a note naming the selected groups whose compute ran on the CPU
 * (result field backend = cpu or ref): the recommendation counts them per
 * GPU at the CPU's throughput, which predicts nothing about a GPU. */
/* The footnote under the instance table: how expected throughput is
 * derived, naming host workloads (not scaled by GPUs) when selected. */
void rep_reco_basis(const rep_report *r, char *buf, size_t len);
void rep_reco_caveat(const rep_report *r, char *buf, size_t len);
/* Where catalog instance i's prices come from, "conf/instances/aws.ini:
 * AWS, us-east-1, https://... (retrieved 2026-11-29)", once per catalog:
 * false (buf untouched) for an instance of a catalog listed before. */
bool rep_price_source(const rep_report *r, size_t i, char *buf, size_t len);

/* A group the recommendation judges: selected (--workload) and measured,
 * at 1 rank (a group of several ranks enters through its efficiency). */
bool rep_reco_selected(const rep_report *r, size_t gi);
/* Measured scaling in the outputs (view_scaling.c).  " (measured at 2
 * ranks: 0.87)", " (not measured: upper bound)", " (not measured on one
 * node, only at 4 ranks on 2 nodes: upper bound)" or "": how a fit's
 * expected throughput scaled over the instance's gpus. */
const char *rep_fit_scaling_text(const rep_fit *f, int gpus, char *buf, size_t len);
/* Appends to the recommendation line at buf[*n]: how the recommended
 * instance's expected throughput scaled, where measured scaling applies. */
void rep_reco_scaling_text(const rep_report *r, char *buf, size_t len, size_t *n);
/* Appends to the footnote under the instance table at buf[*n]: what the
 * scaling marks mean, and the groups of several ranks not priced
 * themselves; nothing where every row ran alone. */
void rep_reco_scaling_basis(const rep_report *r, char *buf, size_t len, size_t *n);
/* Verdicts about whole groups (verdict_notes.c). */
/* The ok cell with the highest AU; -1 when no cell measured AU. */
long rep_group_max_au(const rep_group *g);
/* The group measured AU and no cell reached REP_AU_OK: nothing measured
 * keeps its accelerator fed. */
bool rep_group_starved(const rep_group *g);
/* "" or, for a starved group, the sentence saying so and where its best AU was. */
void rep_group_starved_text(const rep_group *g, char *buf, size_t len);
/* Appends to the recommendation at buf[*n]: the selected groups whose
 * accelerator no measured configuration keeps fed; the instance then
 * reaches their best measured rate, no fed GPU. */
void rep_reco_starved_text(const rep_report *r, char *buf, size_t len, size_t *n);
/* "" or a note naming the selected groups with CPU-contended cells: their
 * figures understate what an instance would do. */
void rep_reco_contended_note(const rep_report *r, char *buf, size_t len);

/* 0, or ENOMEM when a table or chart was left out for want of memory */
int rep_out_text(FILE *f, const rep_report *r, bool colour);
int rep_out_markdown(FILE *f, const rep_report *r);
int rep_out_html(FILE *f, const rep_report *r);

/* The whole pipeline for the CLI: argv after "report". */
int rep_main(int argc, char **argv);
/* Its options, every one of which takes the next argument as its value;
 * NULL-terminated.  main.c reads it to tell such a value ("-h") from an
 * option. */
extern const char *const rep_report_valued[];

#endif
