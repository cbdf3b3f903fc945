/* A report's output, or one curve of it, as a string, for the report's
 * tests; the caller frees it. */
#ifndef DLG_TEST_REPORT_RENDER_H
#define DLG_TEST_REPORT_RENDER_H

#include <stdio.h>
#include <stdlib.h>

#include "compare.h"
#include "report.h"
#include "svg.h"

/* One output form of the report: rep_out_markdown, rep_out_html, ... */
typedef int rep_out_fn(FILE *f, const rep_report *r);

/* The terminal's form without colour. */
static inline int out_text_plain(FILE *f, const rep_report *r) { return rep_out_text(f, r, false); }

/* The whole report in one output form (nothing left out). */
static inline char *render_report(const rep_report *r, rep_out_fn *out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(out(f, r), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* compare's output: Markdown, else the terminal's (no colour). */
static inline char *render_compare(const rep_compare *c, bool markdown)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(markdown ? rep_cmp_out_markdown(f, c) : rep_cmp_out_text(f, c, false), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* The throughput curve of group g over axis a. */
static inline char *render_curve(const rep_report *r, const rep_group *g, size_t a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    rep_svg_curve(f, r, g, a);
    assert_int_equal(fclose(f), 0);
    return buf;
}

#endif
