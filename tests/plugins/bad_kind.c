/* A descriptor of kind 9, which is none of workload, storage or sink:
 * refused naming the kind, not as a missing name or ops table. */
#include <dlgauge/plugin.h>

static int k_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)h, (void)o, (void)j;
    *st = NULL;
    return 0;
}
static int k_step(void *st, dlg_step *out) { (void)st, (void)out; return 0; }
static void k_teardown(void *st) { (void)st; }

static const dlg_workload_ops ops = {1, "steps", k_setup, k_step, NULL, k_teardown, NULL, NULL};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), (dlg_kind)9, "kind9", "1.0", "kind 9", NULL, NULL,
                                     &ops};
DLG_PLUGIN("bad_kind", &desc)
