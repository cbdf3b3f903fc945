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

void dlg_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* started with SIGCHLD ignored, cells would be reaped before we read
     * how they ended */
    signal(SIGCHLD, SIG_DFL);
}

static void on_signal_child(int sig) { stop_signal = sig; }

static void stop_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
}

void dlg_signals_install_child(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal_child;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
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
