/* The sinks of a run: opened once, every point fanned out to all of them.
 * A failing sink is reported once and never stops the run or the others. */
#ifndef DLG_SINKSET_H
#define DLG_SINKSET_H

#include "host.h"

typedef struct dlg_sink_live {
    const dlg_instance_spec *spec;
    dlg_host_impl *host;
    void *state;
    int failures;
    char last_error[2048];
} dlg_sink_live;

typedef struct dlg_sinkset {
    dlg_services svc;
    dlg_sink_live *sinks;
    size_t n;
    int failures;  /* total write/flush failures: the run exits non-zero */
} dlg_sinkset;

/* Opens every sink of the plan (replaying their spools) and, for a run,
 * begins the schema (a flush has no run, hence no columns to announce).
 * An open failure is fatal: nothing has been measured yet. */
int dlg_sinkset_open(dlg_sinkset *ss, dlg_plan *plan, bool begin_run, int verbosity, char *err,
                     size_t errlen);
void dlg_sinkset_write(dlg_sinkset *ss, const dlg_point *pts, size_t n);
/* Flushes (bounded by timeout) and closes every sink. */
void dlg_sinkset_close(dlg_sinkset *ss, uint64_t timeout_ns);

#endif
