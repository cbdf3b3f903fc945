/* A report's output, or one curve of it, as a string, for the report's
 * tests; the caller frees it. */
#ifndef DLG_TEST_REPORT_RENDER_H
#define DLG_TEST_REPORT_RENDER_H

#include <stdio.h>
#include <stdlib.h>

#include "compare.h"
#include "report.h"
#include "svg.h"

/* The whole report in one output form. */
static inline char *render_report(const rep_report *r, void (*out)(FILE *, const rep_report *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    out(f, r);
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
    if (markdown)
        rep_cmp_out_markdown(f, c);
    else
        rep_cmp_out_text(f, c, false);
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
