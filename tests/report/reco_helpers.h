/* Helpers of the recommendation tests: the instance named name in a
 * recommendation, freeing a report a test built, a catalog from text and
 * the recommendation of a report's model over it. */
#ifndef DLG_TEST_REPORT_RECO_HELPERS_H
#define DLG_TEST_REPORT_RECO_HELPERS_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "temp_file.h"

#define CATALOG_HEAD "[catalog]\nprovider = Test\ncurrency = USD\nsource = invented\nretrieved = 2026-12-01\n"

/* Loads body after CATALOG_HEAD; the file is gone after, path names it in err. */
static inline int catalog_from_text(rep_catalog *c, const char *body, char *path, char *err, size_t errlen)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", CATALOG_HEAD, body);
    temp_file(path, text);
    int rc = rep_catalog_load(c, path, err, errlen);
    unlink(path);
    return rc;
}

/* The recommendation of r's model (every group) over the catalog body. */
static inline void reco_from_text(rep_report *r, const char *catalog)
{
    char path[32], err[512];
    if (catalog_from_text(&r->cat, catalog, path, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(rep_recommend(&r->reco, &r->model, NULL, NULL, &r->cat, &r->disks, NULL, err, sizeof err), 0);
    r->have_reco = true;
}

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
