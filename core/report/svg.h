/* SVG charts generated in C for the HTML report (no scripts, no assets). */
#ifndef DLG_REPORT_SVG_H
#define DLG_REPORT_SVG_H

#include <stdio.h>

#include "report.h"

/* Text escaped for XML/HTML content and attribute values. */
void rep_xml_esc(FILE *f, const char *s);
/* Throughput against axis a, other axes at their best, with CI bars, the
 * target line and the knee marked. */
void rep_svg_curve(FILE *f, const rep_report *r, const rep_group *g, size_t a);
/* Per cell, stacked to 1, only what it measured: AU, data wait and the
 * rest of the step; without AU, 1 - data wait in a colour of its own (never
 * drawn as AU); no bar where neither was measured.  The legend names the
 * shares drawn.  0, or ENOMEM when the bars were left out for want of
 * memory. */
int rep_svg_stack(FILE *f, const rep_group *g);
/* The stack chart's subject: "AU and data wait per cell", "data wait per
 * cell" (no cell measured AU), or NULL when no cell measured either (no
 * chart to draw). */
const char *rep_svg_stack_title(const rep_group *g);
/* Cost per million items (per TB of bytes) per instance (those meeting the knees in colour). */
void rep_svg_cost(FILE *f, const rep_report *r);

#endif
