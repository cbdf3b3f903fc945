/* The report API given to workloads (plugin.h's dlg_report_api): the
 * fields a workload reports after a repetition, checked against its
 * declared metrics, into the cell's result (numbers: their mean over the
 * repetitions; strings: the last one's).  A field reported twice in one
 * repetition keeps the last value, with a warning once a cell. */
#ifndef DLG_RUNTIME_REPORT_API_H
#define DLG_RUNTIME_REPORT_API_H

#include "host.h"
#include "runner.h"

/* What a workload's dlg_fields is: where its fields go, what it declared,
 * and the host that warns of a field it did not declare. */
typedef struct dlg_field_sink {
    dlg_cell_result *res;
    const dlg_metric *metrics;
    dlg_host_impl *host;
    int rep; /* the repetition reporting: 0, 1, ... */
} dlg_field_sink;

extern const dlg_report_api dlg_field_report_api;

#endif
