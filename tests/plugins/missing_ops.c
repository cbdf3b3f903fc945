/* A workload whose ops table has no step(): refused at load, never called. */
#include <dlgauge/plugin.h>

static int m_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)h, (void)o, (void)j;
    *st = NULL;
    return 0;
}
static void m_teardown(void *st) { (void)st; }

static const dlg_workload_ops ops = {1, "steps", m_setup, NULL, NULL, m_teardown, NULL, NULL};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "nostep", "1.0",
                                     "no step op", NULL, NULL, &ops};
DLG_PLUGIN("missing_ops", &desc)
