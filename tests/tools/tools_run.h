/* Drives a tools.so workload through the mock host: setup, steps, report
 * (fields captured as text), teardown. */
#ifndef DLG_TEST_TOOLS_RUN_H
#define DLG_TEST_TOOLS_RUN_H

#include "mock_host.h"

#define TR_MAX_FIELDS 48

typedef struct tr_result {
    int setup_rc, step_rc, steps_done;
    uint64_t items, wait_ns, bytes_read;
    int nfields;
    char key[TR_MAX_FIELDS][64];
    char val[TR_MAX_FIELDS][128];
    char error[1024]; /* the mock host's last error */
} tr_result;

/* Runs `steps` steps of workload `name` with "key=value" overrides
 * (NULL-terminated); stops at the first failing step. */
void tr_run(const char *name, const char *const *overrides, int steps, tr_result *r);
/* A captured field's text, or NULL. */
const char *tr_field(const tr_result *r, const char *key);
long long tr_int(const tr_result *r, const char *key);

#endif
