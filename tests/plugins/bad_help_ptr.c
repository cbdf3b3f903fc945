/* A sound table but for one option's help, a pointer to nothing, which
 * only `dlgauge help` and `list` would read: refused when it loads, named,
 * not a crash of whatever reads it later. */
#include <dlgauge/plugin.h>

static int b_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)h, (void)o, (void)j;
    *st = NULL;
    return 0;
}
static int b_step(void *st, dlg_step *out) { (void)st, (void)out; return 0; }
static void b_teardown(void *st) { (void)st; }

static const dlg_option options[] = {
    {"badhelp_n", DLG_OPT_INT, "1", NULL, NULL, NULL, (const char *)16, 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
static const dlg_workload_ops ops = {.version = 1, .unit = "steps", .setup = b_setup, .step = b_step,
                                     .teardown = b_teardown};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "badhelp", "1.0", "bad help",
                                     options, NULL, &ops};
DLG_PLUGIN("bad_help_ptr", &desc)
