/* Workload for stop_setup.sh: `slow_setup` spends `setup` in its setup,
 * asking host->stopping() every 10 ms as a large net's plan does between
 * its layers (core/nn/plan.c), and returns -DLG_ESTOP when it says so
 * (with heed = false it never asks: a setup that cannot be cut short);
 * its steps sleep 1 ms. */
#include <dlgauge/plugin.h>

#include <stdint.h>
#include <time.h>

static const dlg_option slow_setup_options[] = {
    {"setup", DLG_OPT_DURATION, "60s", "0", "1h", NULL, "time the setup takes unless stopped", 0},
    {"heed", DLG_OPT_BOOL, "true", NULL, NULL, NULL, "whether the setup asks stopping()", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int slow_setup_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)j;
    *st = NULL;
    uint64_t end = h->now_ns(h) + (uint64_t)o[0].i;
    while (h->now_ns(h) < end) {
        if (o[1].i && h->stopping(h))
            return -DLG_ESTOP;
        nap_ms(10);
    }
    return 0;
}

static int slow_setup_step(void *st, dlg_step *out)
{
    (void)st;
    nap_ms(1);
    out->items = 1;
    return 0;
}

static void slow_setup_teardown(void *st) { (void)st; }

static const dlg_workload_ops slow_setup_ops = {.version = 1, .unit = "steps", .setup = slow_setup_setup,
                                               .step = slow_setup_step, .teardown = slow_setup_teardown};
static const dlg_plugin_desc slow_setup_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "slow_setup", "1.0",
                                                "a long setup that stops when asked", slow_setup_options, NULL,
                                                &slow_setup_ops};

DLG_PLUGIN("slow_setup", &slow_setup_desc)
