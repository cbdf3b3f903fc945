/* Drives a workload plugin through the mock host: setup, steps, report
 * (fields captured as text), teardown.  For plugin unit tests. */
#ifndef DLG_TEST_WORKLOAD_RUN_H
#define DLG_TEST_WORKLOAD_RUN_H

#include "mock_host.h"

#define WR_MAX_FIELDS 64

typedef struct wr_result {
    int setup_rc, step_rc, steps_done;
    uint64_t items, wait_ns, bytes_read;
    uint64_t bytes_written, write_ios; /* through the host's file_write */
    int nfields;
    char key[WR_MAX_FIELDS][64];
    char val[WR_MAX_FIELDS][1024]; /* layer_profile runs to ~900 characters */
    char error[1024]; /* the mock host's last error */
    char log[1024];   /* its last log line */
    char warning[1024]; /* its last warning line */
    int errors;       /* error() calls */
    int warnings;     /* log(WARN) calls */
} wr_result;

/* Runs `steps` steps of workload `name` from plugin file `so` (e.g.
 * "tools.so") with "key=value" overrides (NULL-terminated); stops at the
 * first failing step. */
/* The report API wr_run passes: fields into a wr_result (as dlg_fields). */
extern const dlg_report_api wr_api;

void wr_run(const char *so, const char *name, const char *const *overrides, int steps, wr_result *r);
/* The same with hook(m, arg) run on the mock host before setup (to
 * register storage backends: mock_add_storage). */
void wr_run_with(const char *so, const char *name, const char *const *overrides, int steps, wr_result *r,
                 void (*hook)(mock_host *m, void *arg), void *arg);
/* Runs only the workload's check op (ops version 3) with the overrides, as
 * the planner asks it about a cell: *rc is its return, err its error line
 * ("" if none).  False when the plugin, its check op or the overrides
 * could not be had (err says which): the caller's test has failed. */
bool wr_check(const char *so, const char *name, const char *const *overrides, int *rc, char *err,
              size_t len);
const char *wr_field(const wr_result *r, const char *key);
/* Whether /proc/cpuinfo's flags list `flag` (e.g. "avx512f"): what a
 * workload may refuse without. */
bool wr_cpu_has(const char *flag);
long long wr_int(const wr_result *r, const char *key);
double wr_double(const wr_result *r, const char *key);

#endif
