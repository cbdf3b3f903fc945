/* Shared by the preprocess tests: "key=value" override lists for wr_run,
 * and scratch folders. */
#ifndef DLG_TEST_PREP_TESTUTIL_H
#define DLG_TEST_PREP_TESTUTIL_H

#include <dlgauge/plugin.h>

typedef struct kv {
    char buf[12][700];
    const char *ptr[13]; /* NULL-terminated, for wr_run */
    int n;
} kv;

/* Appends one printf-formatted "key=value". */
void kv_add(kv *k, const char *fmt, ...) DLG_PRINTF(2, 3);

/* rm -rf dir, then (make) mkdir -p it; 0 or -1. */
int fx_fresh_dir(const char *dir, int make);

#endif
