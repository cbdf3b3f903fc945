/* Turns a measured cell into its dlgauge_result point. */
#ifndef DLG_RESULTS_H
#define DLG_RESULTS_H

#include "point_wire.h"
#include "runner.h"

#define DLG_MAX_TAGS 64
#define DLG_MAX_FIELDS 160

typedef struct dlg_point_buf {
    dlg_point point;
    dlg_tag tags[DLG_MAX_TAGS];
    dlg_field fields[DLG_MAX_FIELDS];
    char cpus_text[16];
    char start_time[40];
    char config[4096];
    char storage_config[1024];
} dlg_point_buf;

/* The point borrows strings from run, cell and res: use it before they go. */
void dlg_result_point(const dlg_run *run, const dlg_cell *cell, const dlg_cell_result *res,
                      dlg_point_buf *out);

/* A result field named like a tag column of the run (a metric named like a
 * setting of its job, swept or not: io's depth, lstm-ptb's hidden; or a
 * swept option of any job) moves into that column, so each name is one
 * column: it becomes the point's tag when it has none of that name, else
 * it is dropped (the swept value names the cell).  The parent applies
 * this with the whole plan; a cell's child plans only its own job. */
void dlg_result_tag_columns(const dlg_plan *plan, dlg_wire_point *wp);

/* ci95 relative to mean, readable at any size: "2.5%", "37%", "210%"
 * (one decimal below 10%). */
void dlg_format_ci_pct(double ci95, double mean, char *buf, size_t len);

/* RFC 3339 UTC with nanoseconds. */
void dlg_format_rfc3339(int64_t ns, char *buf, size_t len);
/* Now, in ns since the epoch (CLOCK_REALTIME): a row's time. */
int64_t dlg_realtime_ns(void);
/* The status of a cell that failed with code rc (-DLG_*): oom where memory
 * (the host's or a GPU's) ran out, a need of the cell as a cgroup's OOM
 * kill is; else error, a fault. */
const char *dlg_failed_status(int rc);

#endif
