/* The rows and model of a results file with this CSV text (target 95%),
 * for the report's tests: without disk profiles (model_from_csv), or
 * with its throttles' as a report has them (report_from_csv). */
#ifndef DLG_TEST_REPORT_MODEL_CSV_H
#define DLG_TEST_REPORT_MODEL_CSV_H

#include <string.h>
#include <unistd.h>

#include "model.h"
#include "report.h"
#include "rows.h"
#include "temp_file.h"

static inline void rows_from_csv(const char *text, rep_rows *rows)
{
    char path[32], err[512];
    temp_file(path, text);
    memset(rows, 0, sizeof *rows);
    int rc = rep_read_file(rows, path, err, sizeof err);
    unlink(path);
    if (rc != 0)
        fail_msg("%s", err);
    assert_int_equal(rep_rows_validate(rows, err, sizeof err), 0);
}

static inline void model_from_csv(const char *text, rep_rows *rows, rep_model *m)
{
    rep_disks none = {0};
    char err[512];
    rows_from_csv(text, rows);
    assert_int_equal(rep_model_build(m, rows, &none, 0.95, err, sizeof err), 0);
}

/* r (zeroed first, target 0.95): the rows, their throttles' disk
 * profiles and the model. */
static inline void report_from_csv(rep_report *r, const char *text)
{
    char err[512];
    memset(r, 0, sizeof *r);
    r->target = 0.95;
    rows_from_csv(text, &r->rows);
    assert_int_equal(rep_disks_from_rows(&r->disks, &r->rows, err, sizeof err), 0);
    assert_int_equal(rep_model_build(&r->model, &r->rows, &r->disks, 0.95, err, sizeof err), 0);
}

#endif
