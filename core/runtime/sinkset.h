/* The sinks of a run: opened once, every point fanned out to all of them.
 * A failing sink is reported once and never stops the run or the others;
 * the caller learns which sinks a point missed (cmd_run.c journals a
 * result row that did not reach every sink, for --resume to send again).
 * Every call into a sink runs under a crash guard (signals.h): a sink
 * that dies of SIGSEGV and the like ends dlgauge with one line naming
 * the sink, its section and the op, as a cell run in-process does. */
#ifndef DLG_SINKSET_H
#define DLG_SINKSET_H

#include "host.h"

typedef struct dlg_sink_live {
    const dlg_instance_spec *spec;
    dlg_host_impl *host;
    void *state;
    int failures;
    size_t missed; /* result rows that did not reach it (counted by the caller) */
    /* the files it named, opening, through the host's file_kept: where its
     * rows go other than its path options (csv's PATH.2.csv), as
     * svc.files.kept[named_from..named_to) */
    size_t named_from, named_to;
    char last_error[2048];
} dlg_sink_live;

typedef struct dlg_sinkset {
    dlg_services svc;
    dlg_sink_live *sinks;
    size_t n;
    int failures;  /* total write/flush failures: the run exits non-zero */
    int kept;      /* sinks whose flush kept points for later (-DLG_EAGAIN: spooled, not lost) */
    int open_error; /* the DLG_E* code of a failed open: the one its sink gave
                       host->error(), else its return value negated */
    void *sigstack; /* the opening thread's alternate signal stack, for the guards */
} dlg_sinkset;

/* Opens every sink of the plan (replaying their spools) and, for a run,
 * begins the schema (a flush has no run, hence no columns to announce).
 * An open failure is fatal: nothing has been measured yet; its code stays
 * in open_error.
 * A sink names the key a message is about by starting it "KEY = ": the
 * message then names that key's file:line, else the [sink] section's
 * (here, in check, write and flush alike). */
int dlg_sinkset_open(dlg_sinkset *ss, dlg_plan *plan, bool begin_run, int verbosity, char *err,
                     size_t errlen);
/* What opening the sinks would refuse (their check ops: conflicting keys,
 * a bad URL, a path that cannot be created), found without creating any
 * file or sending anything, for --dry-run.  0, or -1 with one line in err. */
int dlg_sinkset_check(dlg_plan *plan, int verbosity, char *err, size_t errlen);
/* Writes pts to every sink; returns how many failed (each said once). */
int dlg_sinkset_write(dlg_sinkset *ss, const dlg_point *pts, size_t n);
/* Writes pts to sink i alone: 0, or -1 when it failed (said once) or is
 * not open. */
int dlg_sinkset_write_one(dlg_sinkset *ss, size_t i, const dlg_point *pts, size_t n);
/* dlg_sinkset_write_one for points that sink i may store already (a row
 * the interrupted run was delivering): through its write_again op, which
 * skips those it stores, where it has one (version 4), else write. */
int dlg_sinkset_write_again_one(dlg_sinkset *ss, size_t i, const dlg_point *pts, size_t n);
/* The files sink i named as where its rows go, beside its path options
 * (see dlg_sink_live): *paths, how many returned; valid until close. */
size_t dlg_sinkset_named(const dlg_sinkset *ss, size_t i, char *const **paths);
/* Flushes (bounded by timeout) and closes every sink.  A flush that
 * returns -DLG_EAGAIN kept its points for later (said on stderr, counted
 * in kept); any other error counts in failures. */
void dlg_sinkset_close(dlg_sinkset *ss, uint64_t timeout_ns);

#endif
