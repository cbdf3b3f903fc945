/* Drives an mxnet.so workload through the mock host: setup, steps, report
 * (fields captured as text), teardown. */
#ifndef DLG_TEST_MX_RUN_H
#define DLG_TEST_MX_RUN_H

#include "mock_host.h"

#define MX_MAX_FIELDS 48

typedef struct mx_result {
    int setup_rc, step_rc, steps_done;
    uint64_t items;
    int nfields;
    char key[MX_MAX_FIELDS][64];
    char val[MX_MAX_FIELDS][256];
    char error[1024]; /* the mock host's last error */
    char log[1024];   /* its last log line */
    int errors;       /* error() calls */
} mx_result;

/* Runs `steps` steps of workload `name` with "key=value" overrides
 * (NULL-terminated); stops at the first failing step. */
void mx_run(const char *name, const char *const *overrides, int steps, mx_result *r);
const char *mx_field(const mx_result *r, const char *key);
double mx_double(const mx_result *r, const char *key);

#endif
