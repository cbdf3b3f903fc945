/* A plugin author's own unit test, built out of tree against the installed
 * SDK and mock host (share/doc/dlgauge/testing): examples/hello-workload's
 * checksum, called step by step without dlgauge.  argv[1]: a file, argv[2]:
 * its Adler-32.  Exit 0 when every check holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>

#include "mock_host.h"

#define CHECK(cond)                                                                                               \
    do {                                                                                                          \
        if (!(cond)) {                                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, #cond, m.last_error);        \
            return 1;                                                                                             \
        }                                                                                                         \
    } while (0)

/* The report's fields, as the host would collect them: only the int here. */
typedef struct got_field {
    char key[32];
    int64_t v;
} got_field;

static void add_int(dlg_fields *f, const char *key, int64_t v)
{
    got_field *g = (got_field *)f;
    snprintf(g->key, sizeof g->key, "%s", key);
    g->v = v;
}
static void add_double(dlg_fields *f, const char *key, double v) { (void)f, (void)key, (void)v; }
static void add_string(dlg_fields *f, const char *key, const char *v) { (void)f, (void)key, (void)v; }

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    mock_host m;
    mock_host_init(&m);
    const dlg_plugin_desc *d = mock_load_plugin("hello.so", DLG_KIND_WORKLOAD, "checksum");
    CHECK(d != NULL);
    const dlg_workload_ops *ops = d->ops;
    dlg_value vals[8];
    char path_kv[4200];
    snprintf(path_kv, sizeof path_kv, "path=%s", argv[1]);
    const char *const set[] = {path_kv, "block=4KiB", NULL};
    CHECK(mock_options(d->options, vals, set) == 0);
    dlg_job_info job = {.struct_size = sizeof job, .job = "unit", .cpus = 1, .seed = 1};
    void *state = NULL;
    CHECK(ops->setup(&m.host, vals, &job, &state) == 0);
    uint64_t items = 0; /* two whole passes: the first one's sum is reported */
    for (int i = 0; i < 1000 && items < 2 * 100000; i++) {
        dlg_step st = {0};
        CHECK(ops->step(state, &st) == 0);
        items += st.items;
    }
    CHECK(items == 2 * 100000);
    const dlg_report_api api = {add_double, add_int, add_string};
    got_field g = {"", -1};
    CHECK(ops->report(state, &api, (dlg_fields *)&g) == 0);
    CHECK(strcmp(g.key, "adler32") == 0 && g.v == strtoll(argv[2], NULL, 10));
    ops->teardown(state);
    /* a missing file: an error through the host, no state */
    const char *const bad[] = {"path=/nonexistent/data.bin", NULL};
    CHECK(mock_options(d->options, vals, bad) == 0);
    state = NULL;
    CHECK(ops->setup(&m.host, vals, &job, &state) < 0 && state == NULL);
    CHECK(strstr(m.last_error, "/nonexistent/data.bin") != NULL);
    mock_host_fini(&m);
    puts("ok: checksum unit test through the installed mock host");
    return 0;
}
