/* Sound plugin info and descriptor, but the descriptor's option table is
 * a pointer to nothing: reading it faults in dlgauge's own code. */
#include <dlgauge/plugin.h>

static int b_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)h, (void)o, (void)j;
    *st = NULL;
    return 0;
}
static int b_step(void *st, dlg_step *out) { (void)st, (void)out; return 0; }
static void b_teardown(void *st) { (void)st; }

static const dlg_workload_ops ops = {.version = 1, .unit = "steps", .setup = b_setup, .step = b_step,
                                     .teardown = b_teardown};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "badopts", "1.0", "bad options",
                                     (const dlg_option *)16, NULL, &ops};
DLG_PLUGIN("bad_desc_ptr", &desc)
