/* SIGINT/SIGTERM/SIGHUP: the first asks the run to stop after the current
 * step (results so far are written, marked partial); a second one kills.
 * The run ignores SIGPIPE. */
#ifndef DLG_SIGNALS_H
#define DLG_SIGNALS_H

#include <signal.h>

void dlg_signals_install(void);
/* Tells the handler a cell of the run begins: until then a stop request
 * says that nothing was measured, after it that the running cell is
 * written as partial.  Called before each cell (it stays set). */
void dlg_signals_cell_started(void);
/* In a cell's child: every signal just asks to stop (the parent forwards
 * what it got; the child has a process group of its own).  Also releases
 * the signals held since the fork. */
void dlg_signals_install_child(void);
/* Holds SIGINT/SIGTERM/SIGHUP pending (the mask survives fork and exec), so that
 * one sent to a cell before it installed its handlers neither kills it nor
 * is lost; release restores the old mask. */
void dlg_signals_hold(sigset_t *old);
void dlg_signals_release(const sigset_t *old);
/* 0, or the number of the signal that asked us to stop. */
int dlg_stop_signal(void);

/* A cell run inside dlgauge's own process (isolation = none) that dies of
 * SIGBUS, SIGSEGV, SIGFPE, SIGILL or SIGABRT (abort(), a failed assert)
 * takes dlgauge with it.  While a guard
 * is armed, such a signal writes one line naming the cell and the cause to
 * stderr, then ends the process with that signal as before (its exit
 * status stays a signal death).  The lines are formatted when the guard is
 * armed: a handler may only write(2).
 *
 * The alternate signal stack, which lets the line out of a stack
 * overflow, is per thread (thread_sigstack.h): the arming thread gets one
 * here, and the core's own threads give themselves one at their start
 * (each data loader worker, core/data/loader.c; the ticker, ticker.c).  A
 * thread that blocks these signals dies of the first fault without the
 * line (the kernel forces the default action), so none of ours does.  A
 * thread the workload starts itself gets no stack from the runtime (which
 * cannot reach pthread_create without interposing libc): it gives itself
 * one with the SDK's <dlgauge/sigstack.h>, as diag's pool and preprocess's
 * workers do.  A limit: a stack overflow in one that does not (a library's
 * pool: OpenMP, oneDNN) ends the process of SIGSEGV without the line; any
 * other fault in such a thread gets it.  isolation = process (the
 * default) names the crash from the parent in every case. */
#define DLG_CRASH_NSIG 5
#define DLG_CRASH_LINE_MAX 1024
typedef struct dlg_crash_guard {
    char line[DLG_CRASH_NSIG][DLG_CRASH_LINE_MAX];
    size_t len[DLG_CRASH_NSIG];
    struct sigaction old[DLG_CRASH_NSIG];
    void *stack; /* an alternate signal stack of ours, or NULL */
    const struct dlg_crash_guard *prev; /* the guard armed before, put back at disarm */
} dlg_crash_guard;

/* The guards' fault signals, i < DLG_CRASH_NSIG: the signal, and its
 * name ("SIGSEGV"); both callable from a handler. */
int dlg_crash_signal(int i);
const char *dlg_crash_signal_name(int i);

/* who: the cell, e.g. "FILE:LINE: [job NAME] workload W (PLUGIN.so)".  Guards nest
 * (below); g must stay in place until dlg_crash_guard_disarm(g), which
 * puts back the handlers (and signal stack) found at arming. */
void dlg_crash_guard_arm(dlg_crash_guard *g, const char *who);
void dlg_crash_guard_disarm(dlg_crash_guard *g);
/* The same guard for code that is no cell (a sink's op): its line is
 * "dlgauge: WHO: killed by SIGSEGV (an invalid memory access)THEN".
 * Guards nest: one armed inside another (a sink written from an
 * in-process cell's progress) puts the outer one back at its disarm. */
void dlg_crash_guard_arm_for(dlg_crash_guard *g, const char *who, const char *then);

#endif
