/* Giving up a wait for the other ranks on a stop request (ranks_stop.h). */
#include "ranks_stop.h"

#include "signals.h"
#include "sinkset.h"

#include <stdio.h>
#include <time.h>

/* as long as a run's end gives its sinks (cmd_run.c) */
#define SINK_CLOSE_NS (10ull * 1000000000ull)

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool give_up(void *ctx)
{
    dlg_ranks_wait *w = ctx;
    if (!w->lead || !dlg_stop_signal())
        return false;
    uint64_t now = mono_ns();
    if (!w->stop_seen_ns)
        w->stop_seen_ns = now;
    return now - w->stop_seen_ns >= DLG_RANKS_STOP_GRACE_NS;
}

const dlg_comm_until *dlg_ranks_wait_init(dlg_ranks_wait *w, const dlg_comm *c)
{
    *w = (dlg_ranks_wait){.until = {give_up, w}, .lead = dlg_comm_rank(c) == 0, .stop_seen_ns = 0};
    return &w->until;
}

_Noreturn void dlg_ranks_stop_abort(dlg_comm *c, struct dlg_sinkset *sinks, const char *where)
{
    int sig = dlg_stop_signal();
    fprintf(stderr, "dlgauge: stopped by signal %d while waiting for the other ranks in %s (a rank still busy "
            "there does not stop); every rank stops here (MPI_Abort): the rows of the cells before are kept, "
            "dlgauge run --resume measures the rest\n", sig, where);
    if (sinks) /* what a sink holds back (influx's batch) goes out first */
        dlg_sinkset_close(sinks, SINK_CLOSE_NS);
    dlg_comm_abort(c, 128 + (sig > 0 ? sig : 0));
}
