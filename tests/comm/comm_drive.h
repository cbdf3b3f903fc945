/* Drives a comm.so workload through any host as the runner does: setup,
 * begin_timed, timed steps, report (fields captured), teardown. */
#ifndef DLG_COMM_DRIVE_H
#define DLG_COMM_DRIVE_H

#include "workload_run.h"

typedef struct cd_result {
    int setup_rc, begin_rc, step_rc, report_rc, check_rc;
    uint64_t items; /* over the timed steps */
    wr_result fields; /* the report's fields (wr_field, wr_double) */
} cd_result;

/* Workload `name` of comm.so with "key=value" overrides; `steps` timed
 * steps after setup and begin_timed.  False when the plugin or the
 * overrides could not be had (printed): the test has failed. */
bool cd_run(const dlg_host *h, const char *name, const char *const *overrides, int steps, cd_result *r);
/* Only the workload's check op. */
bool cd_check(const dlg_host *h, const char *name, const char *const *overrides, int *rc);

#endif
