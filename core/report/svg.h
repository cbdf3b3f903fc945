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
/* Per cell: AU (or 1 - data wait), data wait and the rest, stacked to 1. */
void rep_svg_stack(FILE *f, const rep_group *g);
/* Cost per million items (per TB of bytes) per instance (those meeting the knees in colour). */
void rep_svg_cost(FILE *f, const rep_report *r);

#endif
