/* A setting's value by its meaning, not its spelling (settings_kind.c):
 * `memory = 1G` and `1024M`, `sleep = 10ms` and `0.01s`, `true` and `1`
 * are one setting, so rows that ran them pool as repeats of one cell. */
#ifndef DLG_REPORT_SETTINGS_KIND_H
#define DLG_REPORT_SETTINGS_KIND_H

#include <stddef.h>

#include "rows.h"

typedef struct rep_kinds rep_kinds;

/* The kind of every `config` key of the rows: a core [job] key's by its
 * declared type; a workload's option (its table lives in the plugin,
 * which the report does not load) by the values its rows hold for that
 * workload.  *out NULL without rows.  0, or -1 out of memory. */
int rep_kinds_build(const rep_rows *rs, rep_kinds **out);
void rep_kinds_free(rep_kinds *k);

/* val of key (of workload wl) as settings compare it: one text per
 * meaning where the kind is known ("1GiB", "10ms", "true", "0"), else val
 * as written.  Returns val or buf. */
const char *rep_kinds_canon(const rep_kinds *k, const char *wl, const char *key, const char *val, char *buf,
                            size_t len);

#endif
