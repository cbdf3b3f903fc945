/* The rows and model of a results file with this CSV text (no disk
 * profiles, target 95%), for the report's tests. */
#ifndef DLG_TEST_REPORT_MODEL_CSV_H
#define DLG_TEST_REPORT_MODEL_CSV_H

#include <string.h>
#include <unistd.h>

#include "model.h"
#include "rows.h"
#include "temp_file.h"

static void model_from_csv(const char *text, rep_rows *rows, rep_model *m)
{
    char path[32];
    temp_file(path, text);
    rep_disks none = {0};
    char err[512];
    memset(rows, 0, sizeof *rows);
    int rc = rep_read_file(rows, path, err, sizeof err);
    unlink(path);
    if (rc != 0)
        fail_msg("%s", err);
    assert_int_equal(rep_rows_validate(rows, err, sizeof err), 0);
    assert_int_equal(rep_model_build(m, rows, &none, 0.95, err, sizeof err), 0);
}

#endif
