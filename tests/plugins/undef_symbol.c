/* Needs a symbol nothing provides: dlopen(RTLD_NOW) must refuse it at load
 * time (built without --no-undefined on purpose). */
#include <dlgauge/plugin.h>

extern int dlgt_symbol_nobody_defines(void);

static int nope_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)h, (void)o, (void)j;
    *st = NULL;
    return dlgt_symbol_nobody_defines();
}
static int nope_step(void *st, dlg_step *out) { (void)st, (void)out; return 0; }
static void nope_teardown(void *st) { (void)st; }

static const dlg_workload_ops ops = {1, "steps", nope_setup, nope_step, NULL, nope_teardown, NULL, NULL};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "nope", "1.0",
                                     "cannot load", NULL, NULL, &ops};
DLG_PLUGIN("undef_symbol", &desc)
