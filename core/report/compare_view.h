/* dlgauge compare's tables and lines, shared by its outputs. */
#ifndef DLG_REPORT_COMPARE_VIEW_H
#define DLG_REPORT_COMPARE_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "compare.h"
#include "report.h"

/* The group's matched cells: axes, both sides, ratio, delta, p, n, verdict. */
int rep_cmp_table(rep_table *t, const rep_cmp_group *g);
/* How many of the group's cells ran on both sides. */
size_t rep_cmp_matched(const rep_cmp_group *g);
/* "cpus=8; cpus=16": the group's cells only in base (in_base) or only in new. */
void rep_cmp_only_text(const rep_cmp_group *g, bool in_base, char *buf, size_t len);
/* The lead of that list: "only in base (gate)" where its cells fail the gate. */
const char *rep_cmp_only_lead(const rep_cmp_group *g, bool in_base);
/* The geometric mean of new/base: "0.912 (-8.8%) over 4 cells" */
void rep_cmp_geomean_text(double geomean, size_t ngeo, char *buf, size_t len);
/* "a.csv b.jsonl (24 rows): dlgauge 0.1.0 (git abc1234) on lab (Intel Xeon ..., 16 CPUs)" */
void rep_cmp_side_text(const rep_cmp_side *s, char *buf, size_t len);
/* "" or why the sides' figures also differ by the machine they ran on. */
void rep_cmp_machine_note(const rep_compare *c, char *buf, size_t len);

#endif
