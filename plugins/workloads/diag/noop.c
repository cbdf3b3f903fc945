/* noop: a step that does nothing, so that what a run measures is the
 * runner itself (scripts/bench/runner-overhead.sh). */
#include "diag.h"

#include <stdlib.h>

static int noop_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state)
{
    (void)h;
    (void)opts;
    (void)job;
    *state = NULL;
    return 0;
}

static int noop_step(void *state, dlg_step *out)
{
    (void)state;
    out->items = 1;
    return 0;
}

static void noop_teardown(void *state) { (void)state; }

static const dlg_option noop_options[] = {{0}};

static const dlg_workload_ops noop_ops = {
    .version = 1,
    .unit = "steps",
    .setup = noop_setup,
    .step = noop_step,
    .teardown = noop_teardown,
};

const dlg_plugin_desc noop_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_WORKLOAD,
    .name = "noop",
    .version = "1.0",
    .summary = "an empty step: measures the runner's own overhead per step",
    .options = noop_options,
    .ops = &noop_ops,
};
