/* A mock dlg_host for unit-testing plugins without the dlgauge runtime:
 * records the last error and log lines, serves files with plain POSIX I/O. */
#ifndef DLG_TEST_MOCK_HOST_H
#define DLG_TEST_MOCK_HOST_H

#include <dlgauge/plugin.h>

typedef struct mock_host {
    dlg_host host;          /* pass &m.host to plugins */
    char last_error[1024];  /* text of the last host->error() */
    int last_code;
    int errors;             /* how many error() calls */
    int warnings;           /* how many log(WARN) calls */
    char last_log[1024];
    bool stop;              /* what stopping() answers */
} mock_host;

void mock_host_init(mock_host *m);

/* Loads plugin file `so_name` (e.g. "csv.so") from $DLGAUGE_PLUGIN_PATH and
 * returns the descriptor called `name` of `kind`, or NULL (and prints why). */
const dlg_plugin_desc *mock_load_plugin(const char *so_name, dlg_kind kind, const char *name);

/* Fills vals[] from the option table's defaults, then applies "key=value"
 * overrides (NULL-terminated); parses ints/sizes/durations/bools/enums
 * with a simplified parser adequate for tests.  Returns 0 or -1. */
int mock_options(const dlg_option *opts, dlg_value *vals, const char *const *overrides);

#endif
