/* Runs one workload of a plugin through the mock host: setup, N steps,
 * report (fields captured as text), teardown. */
#ifndef DLG_TEST_CAFFE_RUN_H
#define DLG_TEST_CAFFE_RUN_H

#include <dlgauge/plugin.h>

#define CR_MAX_FIELDS 32

typedef struct cr_result {
    int setup_rc, step_rc, steps_done;
    char error[1024];
    int nfields;
    char key[CR_MAX_FIELDS][32];
    char val[CR_MAX_FIELDS][300];
} cr_result;

void cr_run(const char *so, const char *name, const char *const *overrides, int steps,
            cr_result *r);
/* A captured field as a number / text; NAN or NULL if absent. */
double cr_num(const cr_result *r, const char *key);
const char *cr_str(const cr_result *r, const char *key);

#endif
