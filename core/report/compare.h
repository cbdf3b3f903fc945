/* dlgauge compare: two result sets (base and new), each modelled as the
 * report models one, matched group by group and cell by cell, with
 * Welch's t-test per cell, geometric means and a regression gate. */
#ifndef DLG_REPORT_COMPARE_H
#define DLG_REPORT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model.h"
#include "rows.h"

/* Welch's two-sided t-test of two means from (mean, sd, n) each. */
typedef struct rep_welch {
    double t, df, p; /* p = NaN: no test (n < 2 on a side) */
} rep_welch;

rep_welch rep_welch_test(double m1, double sd1, double n1, double m2, double sd2, double n2);
/* P(|T| >= |t|) for Student's t with df (> 0, fractional too) degrees of freedom. */
double rep_t_two_sided_p(double t, double df);

typedef enum {
    REP_CMP_SAME,      /* "~": no significant difference */
    REP_CMP_FASTER,
    REP_CMP_SLOWER,
    REP_CMP_NO_CI,     /* fewer than 2 repeats on a side: no evidence */
    REP_CMP_NEW_FAIL,  /* ran in base, fails in new */
    REP_CMP_FIXED,     /* failed in base, runs in new */
    REP_CMP_BOTH_FAIL
} rep_cmp_verdict;

typedef struct rep_cmp_cell {
    const rep_cell *base, *new; /* NULL: the cell is only in the other side */
    char *label;                /* "cpus=2 batch=32", "(one cell)" */
    char **vals;                /* its value of each of the group's keys */
    double ratio, delta;        /* new/base and (new-base)/base; NaN unless both ran */
    rep_welch w;
    rep_cmp_verdict verdict;
    bool regression;            /* fails a gate: slower (--fail-below), latency beyond --fail-above-latency,
                                 * newly failing (in some of new's runs too), or missing from new */
    /* the step latency compared (--latency), in us, and (new-base)/base;
     * NaN where a side did not measure it */
    double lat_base, lat_new, lat_delta;
    bool lat_regression;        /* its rise fails --fail-above-latency */
    bool thr_regression;        /* the throughput's part: slower beyond --fail-below, or newly failing */
    bool runs_regression;       /* ran, yet failed in some of new's runs (nfailed) where base failed in none */
} rep_cmp_cell;

typedef struct rep_cmp_group {
    const rep_group *base, *new; /* NULL: the group is only in the other side */
    char *name;                  /* the group's title */
    char **keys;                 /* the union of both sides' axes */
    size_t nkeys;
    rep_cmp_cell *cells;         /* matched first (base's axis order), then only-in; a group only in
                                  * base has its cells too (each fails the gate), only in new none */
    size_t ncells;
    bool unit_differs;           /* the sides count different units: not compared */
    bool regression;             /* unit_differs under a gate: base's cells, as measured, are missing from new */
    double geomean;              /* of new/base over cells where both ran; NaN: none */
    size_t ngeo;
    const char *latency;         /* the latency statistic compared ("p99"), NULL: none */
    double latency_limit;        /* --fail-above-latency as a fraction; NaN: no latency gate */
} rep_cmp_group;

/* One side: its files' rows and model. */
typedef struct rep_cmp_side {
    rep_rows rows;
    rep_model model;
    double **lat; /* per group, per cell: the latency compared (us), NaN: not measured; NULL: none compared */
} rep_cmp_side;

typedef struct rep_compare {
    rep_cmp_side base, new;
    double alpha;      /* significance level of the test */
    double fail_below; /* gate: a significant delta below this fails (e.g. -0.05) */
    bool gate;         /* --fail-below given */
    bool allow_missing; /* --allow-missing: a cell of base that new lacks does not fail the gate */
    /* --latency: the step latency statistic compared beside throughput
     * (p50, p90, p99, p999, mean, max; lower is better); NULL: none */
    const char *latency;
    double fail_above_latency; /* gate: a latency rise beyond this fails (e.g. 0.10) */
    bool latency_gate;         /* --fail-above-latency given */
    size_t nlat_missing;       /* matched cells that ran on both sides, the latency missing on one */
    size_t nno_ci;             /* matched cells of fewer than 2 repeats on a side: no test, no throughput gate */
    size_t nlat_zero_base;     /* such cells whose base latency is 0: no rise to judge against it */
    rep_cmp_group *g;
    size_t n;
    double geomean; /* over every group's matched cells; NaN: none */
    size_t ngeo;
    size_t nregressions;
} rep_compare;

/* The result field of a --latency statistic ("p99" -> latency_p99_us),
 * or NULL for a name that is none. */
const char *rep_cmp_latency_field(const char *stat);

/* Matches the two built models and judges every matched cell; 0 or
 * -DLG_ENOMEM with a message in err. */
int rep_compare_build(rep_compare *c, char *err, size_t errlen);
void rep_compare_free(rep_compare *c);

const char *rep_cmp_verdict_name(rep_cmp_verdict v);
/* "base 190 -> new 150 images/s (-21.1%, p=0.0001)", "newly failing (oom)...", "missing from new...":
 * why a cell fails the gate. */
void rep_cmp_regression_text(const rep_cmp_group *g, const rep_cmp_cell *cc, char *buf, size_t len);
/* "GROUP: base counts images, new counts bytes (2 cells not compared)": why a group whose unit changed fails it. */
void rep_cmp_unit_regression_text(const rep_cmp_group *g, char *buf, size_t len);
/* A cell that ran on both sides with profile = true (compare_layers.c): its
 * layer kinds' forward + backward time per step, base -> new, the 4 largest
 * changes first ("conv jit:avx2 42.4 ms -> 30.1 ms (-29.0%), ..."; "-": not
 * among that side's heaviest kinds); "" for any other cell. */
void rep_cmp_layers_text(const rep_cmp_cell *cc, char *buf, size_t len);

/* Outputs (compare_out.c): the header, one table per group, only-in lists,
 * geomeans; 0, or ENOMEM when a table was left out for want of memory. */
int rep_cmp_out_text(FILE *f, const rep_compare *c, bool colour);
int rep_cmp_out_markdown(FILE *f, const rep_compare *c);

/* The whole command for the CLI: argv after "compare".  0, 1 (the gate
 * failed) or 2 (bad input, or an output could not be written). */
int rep_compare_main(int argc, char **argv);
/* Its options that take the next argument as their value; NULL-terminated.
 * main.c reads it to tell such a value ("-h") from an option. */
extern const char *const rep_compare_valued[];

#endif
