/* An option table that declares 'batch' twice. */
#include <dlgauge/plugin.h>

static int s_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)h, (void)o, (void)j;
    *st = NULL;
    return 0;
}
static int s_step(void *st, dlg_step *out) { (void)st, (void)out; return 0; }
static void s_teardown(void *st) { (void)st; }

static const dlg_option options[] = {
    {"batch", DLG_OPT_INT, "32", "1", NULL, NULL, "images per step", 0},
    {"mode", DLG_OPT_ENUM, "train", NULL, NULL, "train|infer", "what to run", 0},
    {"batch", DLG_OPT_INT, "64", "1", NULL, NULL, "the same name again", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
static const dlg_workload_ops ops = {1, "steps", s_setup, s_step, NULL, s_teardown, NULL, NULL};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "dupopt", "1.0",
                                     "duplicate option name", options, NULL, &ops};
DLG_PLUGIN("bad_options", &desc)
