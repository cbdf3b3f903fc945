/* A sink whose open fails with `code` (a DLG_E* value; 2 = DLG_EIO) without
 * describing it through host->error(): what a terse third-party sink does.
 * `dlgauge flush` must still tell an I/O failure (retry) from others. */
#include <dlgauge/plugin.h>

enum { OPT_CODE };

static int s_open(const dlg_host *h, const dlg_value *o, const char *name, void **state)
{
    (void)h, (void)name;
    *state = NULL;
    return -(int)o[OPT_CODE].i;
}
static int s_write(void *state, const dlg_point *pts, size_t n)
{
    (void)state, (void)pts, (void)n;
    return 0;
}
static void s_close(void *state) { (void)state; }

static const dlg_option options[] = {
    {"code", DLG_OPT_INT, "2", "1", "100", NULL, "the DLG_E* code open fails with, unexplained", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
static const dlg_sink_ops ops = {.version = 1, .open = s_open, .write = s_write, .close = s_close};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_SINK, "silent", "1.0",
                                     "open fails without saying why", options, NULL, &ops};
DLG_PLUGIN("silent_sink", &desc)
