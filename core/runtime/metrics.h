/* The result schema's stable names: core tags and core fields.  Add, never
 * rename: dashboards and reports depend on them (docs/metrics.md). */
#ifndef DLG_METRICS_H
#define DLG_METRICS_H

#include <dlgauge/plugin.h>

#define DLG_MEASUREMENT_RESULT "dlgauge_result"
#define DLG_MEASUREMENT_PROGRESS "dlgauge_progress"

extern const char *const dlg_core_tags[];     /* NULL-terminated */
extern const dlg_metric dlg_core_metrics[];   /* result fields */
extern const dlg_metric dlg_progress_metrics[];
extern const char *const dlg_progress_tags[];

#endif
