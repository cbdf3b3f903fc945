/* Helpers of the recommendation tests: the instance named name in a
 * recommendation, and freeing a report a test built. */
#ifndef DLG_TEST_REPORT_RECO_HELPERS_H
#define DLG_TEST_REPORT_RECO_HELPERS_H

#include <string.h>

#include "report.h"

static const rep_choice *choice(const rep_reco *re, const char *name)
{
    for (size_t i = 0; i < re->n; i++)
        if (strcmp(re->v[i].inst->name, name) == 0)
            return &re->v[i];
    fail_msg("no instance %s", name);
    return NULL;
}

static void report_free(rep_report *r)
{
    rep_reco_free(&r->reco);
    rep_catalog_free(&r->cat);
    rep_model_free(&r->model);
    rep_disks_free(&r->disks);
    rep_rows_free(&r->rows);
}

#endif
