/* Workload for cut_repetition.sh: `slowrep` steps of `fast` in the
 * repetitions before `slow_from` and of `slow` from it on, so that a
 * timeout cuts a later repetition at a rate far from the complete ones'. */
#include <dlgauge/plugin.h>

#include <stdint.h>
#include <time.h>

static const dlg_option slowrep_options[] = {
    {"fast", DLG_OPT_DURATION, "1ms", "0", "10s", NULL, "step time of the early repetitions", 0},
    {"slow", DLG_OPT_DURATION, "100ms", "0", "10s", NULL, "step time from repetition slow_from on", 0},
    {"slow_from", DLG_OPT_INT, "1", "0", "1000", NULL, "0-based repetition whose steps are slow", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

static int slowrep_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)h;
    /* the step's sleep in ns, as the state pointer itself */
    *st = (void *)(uintptr_t)(j->repetition >= o[2].i ? o[1].i : o[0].i);
    return 0;
}

static int slowrep_step(void *st, dlg_step *out)
{
    uint64_t ns = (uint64_t)(uintptr_t)st;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
    out->items = 1;
    return 0;
}

static void slowrep_teardown(void *st) { (void)st; }

static const dlg_workload_ops slowrep_ops = {.version = 1, .unit = "steps", .setup = slowrep_setup,
                                            .step = slowrep_step, .teardown = slowrep_teardown};
static const dlg_plugin_desc slowrep_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "slowrep", "1.0",
                                             "later repetitions slower", slowrep_options, NULL, &slowrep_ops};

DLG_PLUGIN("slowrep", &slowrep_desc)
