/* Metrics 'lat' and 'lat\': InfluxDB's line protocol cannot end a name in
 * a backslash, so the influx sink cut it and stored one over the other;
 * refused at load naming the metric. */
#include <dlgauge/plugin.h>

static int b_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)h, (void)o, (void)j;
    *st = NULL;
    return 0;
}
static int b_step(void *st, dlg_step *out) { (void)st, (void)out; return 0; }
static void b_teardown(void *st) { (void)st; }

static const dlg_metric metrics[] = {
    {"lat", DLG_FIELD_DOUBLE, "ms", "latency"},
    {"lat\\", DLG_FIELD_DOUBLE, "ms", "latency again"},
    {NULL, 0, NULL, NULL},
};
static const dlg_workload_ops ops = {1, "steps", b_setup, b_step, NULL, b_teardown, NULL, NULL};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "bslash", "1.0", "metric names",
                                     NULL, metrics, &ops};
DLG_PLUGIN("bad_metric_name", &desc)
