#include "signals.h"

#include "comm.h"
#include "thread_sigstack.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The mutable globals, one per need: a signal handler can only talk
 * through globals.  stop_signal: which signal asked the run to stop. */
static volatile sig_atomic_t stop_signal;
/* The armed crash guard (its preformatted lines), or NULL: lock-free, so
 * a handler may read it. */
static _Atomic(const dlg_crash_guard *) crash_guard;

/* What the first stop request says at once on stderr (a large net's
 * setup takes seconds before the cell stops).  stop_line: 0 nothing (said
 * already, or not this process's to say: a rank > 0), 1 the note, 2 the
 * note after clearing the terminal's progress line; 3 and 4 the same with
 * the note of rank 0 under a launcher. */
static atomic_int stop_line;
/* Whether a cell of this run has begun (dlg_signals_cell_started): a stop
 * before one has nothing running to end nor anything measured to write. */
static atomic_int cell_begun;
#define CLEAR_LINE "\r\033[K"
static const char stop_note[] = CLEAR_LINE
    "dlgauge: stopping: the running cell ends after its current step (or its setup) and is written as partial; "
    "a second signal (Ctrl-C again) stops at once and loses that cell's row\n";
/* Under mpirun the partial row needs every rank at the step's agreement:
 * a signal that comes because a rank died (mpirun ends the job then) is
 * followed by mpirun's kill, and rank 0 cannot tell the two apart, nor
 * leave a collective the dead rank never joins (MPI has no way out). */
static const char stop_note_ranks[] = CLEAR_LINE
    "dlgauge: stopping: the ranks end the running cell together after its current step (or setup) and it is "
    "written as partial; if a rank died (mpirun's message names it), mpirun ends every rank and that cell's "
    "row is lost; a second signal stops at once and loses it too\n";
/* Under mpirun too: the ranks agree on the stop before the first cell. */
static const char stop_note_idle[] = CLEAR_LINE
    "dlgauge: stopping before the first cell: nothing was measured; a second signal (Ctrl-C again) stops at once\n";

static void on_signal(int sig)
{
    int line = atomic_exchange(&stop_line, 0);
    if (line) {
        bool idle = !atomic_load(&cell_begun);
        const char *note = idle ? stop_note_idle : line > 2 ? stop_note_ranks : stop_note;
        size_t len = idle ? sizeof stop_note_idle - 1 : line > 2 ? sizeof stop_note_ranks - 1 : sizeof stop_note - 1;
        size_t skip = line == 2 || line == 4 ? 0 : sizeof CLEAR_LINE - 1;
        ssize_t n = write(STDERR_FILENO, note + skip, len - skip);
        (void)n; /* nothing more to do about stderr from here */
    }
    stop_signal = sig;
    /* a second Ctrl-C gets the default action: the user really means it */
    signal(sig, SIG_DFL);
}

/* The signals that ask a run to stop: Ctrl-C, kill or a batch system,
 * and a hangup (a closed terminal or ssh session), which would otherwise
 * end dlgauge and the running cell with nothing written for it. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSTOP (sizeof stop_signals / sizeof *stop_signals)

static void on_all(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSTOP; i++) {
        struct sigaction was;
        /* a hangup ignored from the start (nohup) stays ignored: that run
         * is meant to outlive its terminal */
        if (stop_signals[i] == SIGHUP && sigaction(SIGHUP, NULL, &was) == 0 && was.sa_handler == SIG_IGN)
            continue;
        sigaction(stop_signals[i], &sa, NULL);
    }
}

void dlg_signals_install(void)
{
    /* under a launcher, rank 0 says it for all (the ranks' stderr convention) */
    char var[128];
    int tty = isatty(STDERR_FILENO) ? 2 : 1;
    atomic_store(&stop_line, dlg_comm_launched_rank() > 0 ? 0 : dlg_comm_launched(var, sizeof var) ? tty + 2 : tty);
    on_all(on_signal);
    /* started with SIGCHLD ignored, cells would be reaped before we read
     * how they ended */
    signal(SIGCHLD, SIG_DFL);
    /* a reader of stdout that went away (| head, a pager quit) makes the
     * summary line's write fail, rather than end the run mid-cell */
    signal(SIGPIPE, SIG_IGN);
}

void dlg_signals_cell_started(void) { atomic_store(&cell_begun, 1); }

static void on_signal_child(int sig) { stop_signal = sig; }

static void stop_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < NSTOP; i++)
        sigaddset(set, stop_signals[i]);
}

void dlg_signals_install_child(void)
{
    on_all(on_signal_child);
    /* held since the fork (dlg_signals_hold): a pending one arrives now */
    sigset_t set;
    stop_set(&set);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

void dlg_signals_hold(sigset_t *old)
{
    sigset_t set;
    stop_set(&set);
    sigprocmask(SIG_BLOCK, &set, old);
}

void dlg_signals_release(const sigset_t *old) { sigprocmask(SIG_SETMASK, old, NULL); }

int dlg_stop_signal(void) { return stop_signal; }

/* The fatal signals of a cell's code, each with what it most likely means
 * for a benchmark run inside dlgauge's process. */
static const struct {
    int sig;
    const char *name, *cause;
} crash_signals[DLG_CRASH_NSIG] = {
    {SIGBUS, "SIGBUS", "a bus error: a mapped file shrank while it was read (an LMDB dataset, which LMDB maps, or "
                       "storage type = mmap: a data file truncated or rewritten during the run?)"},
    {SIGSEGV, "SIGSEGV", "an invalid memory access (a bug in the workload or a plugin it uses)"},
    {SIGFPE, "SIGFPE", "an arithmetic fault such as an integer division by zero (in the workload or a plugin)"},
    {SIGILL, "SIGILL", "an illegal instruction (code built for a newer CPU than this one, e.g. with "
                       "-march=native on another machine?)"},
    {SIGABRT, "SIGABRT", "the code called abort(), e.g. a failed assert (in the workload or a plugin; its own "
                         "message, if any, is on the line above)"},
};

int dlg_crash_signal(int i) { return crash_signals[i].sig; }

const char *dlg_crash_signal_name(int i) { return crash_signals[i].name; }

static void on_crash(int sig)
{
    const dlg_crash_guard *g = atomic_load(&crash_guard);
    for (int i = 0; g && i < DLG_CRASH_NSIG; i++)
        if (crash_signals[i].sig == sig) {
            ssize_t n = write(STDERR_FILENO, g->line[i], g->len[i]);
            (void)n; /* nothing more to do about stderr from here */
        }
    /* SA_RESETHAND made the action the default one: the process ends of
     * sig as it would have without us (a fault re-runs and faults again) */
    raise(sig);
}

/* Line i of g is what was formatted into it, cut short as one line. */
static void line_done(dlg_crash_guard *g, int i, int n)
{
    g->len[i] = n < 0 ? 0 : (size_t)n < sizeof g->line[i] ? (size_t)n : sizeof g->line[i] - 1;
    if ((size_t)n >= sizeof g->line[i])
        g->line[i][g->len[i] - 1] = '\n'; /* cut short, still one line */
}

/* Makes g the armed guard, on its signal stack, keeping the one before. */
static void install(dlg_crash_guard *g)
{
    g->stack = dlg_sigstack_on(); /* lets the line out of a stack overflow too */
    g->prev = atomic_exchange(&crash_guard, g);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < DLG_CRASH_NSIG; i++)
        sigaction(crash_signals[i].sig, &sa, &g->old[i]);
}

void dlg_crash_guard_arm(dlg_crash_guard *g, const char *who)
{
    for (int i = 0; i < DLG_CRASH_NSIG; i++)
        line_done(g, i, snprintf(g->line[i], sizeof g->line[i],
                                 "dlgauge: %s: killed by %s, %s; the cell ran inside dlgauge's process (isolation = "
                                 "none), so the run ends here, rows written so far are kept: use isolation = process "
                                 "to survive it and keep the run going\n",
                                 who, crash_signals[i].name, crash_signals[i].cause));
    install(g);
}

/* What each fatal signal is, in a few words, for code that is no cell. */
static const char *const crash_what[DLG_CRASH_NSIG] = {
    "a bus error", "an invalid memory access", "an arithmetic fault", "an illegal instruction",
    "the code called abort(), e.g. a failed assert"};

void dlg_crash_guard_arm_for(dlg_crash_guard *g, const char *who, const char *then)
{
    for (int i = 0; i < DLG_CRASH_NSIG; i++)
        line_done(g, i, snprintf(g->line[i], sizeof g->line[i], "dlgauge: %s: killed by %s (%s)%s\n", who,
                                 crash_signals[i].name, crash_what[i], then));
    install(g);
}

void dlg_crash_guard_disarm(dlg_crash_guard *g)
{
    for (int i = 0; i < DLG_CRASH_NSIG; i++)
        sigaction(crash_signals[i].sig, &g->old[i], NULL);
    atomic_store(&crash_guard, g->prev);
    dlg_sigstack_off(g->stack);
    g->stack = NULL;
}
