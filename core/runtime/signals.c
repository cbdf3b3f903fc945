#include "signals.h"

#include <signal.h>
#include <string.h>

/* The one mutable global: a signal handler can only talk through one. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
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
    on_all(on_signal);
    /* started with SIGCHLD ignored, cells would be reaped before we read
     * how they ended */
    signal(SIGCHLD, SIG_DFL);
    /* a reader of stdout that went away (| head, a pager quit) makes the
     * summary line's write fail, rather than end the run mid-cell */
    signal(SIGPIPE, SIG_IGN);
}

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
