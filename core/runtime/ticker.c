/* Periodic callback thread; waits on a CLOCK_MONOTONIC condvar so that a
 * stop request ends it at once rather than after its period. */
#define _GNU_SOURCE
#include "ticker.h"

#include "thread_sigstack.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct dlg_ticker {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    int period_ms;
    dlg_tick_fn fn;
    void *arg;
};

static void ticks(dlg_ticker *t)
{
    pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)t->period_ms * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        while (!t->stop && pthread_cond_timedwait(&t->cv, &t->mu, &until) != ETIMEDOUT)
            ;
        if (t->stop)
            break;
        pthread_mutex_unlock(&t->mu);
        t->fn(t->arg);
        pthread_mutex_lock(&t->mu);
    }
    pthread_mutex_unlock(&t->mu);
}

static void *loop(void *arg)
{
    void *sigstack = dlg_sigstack_on(); /* fn's overflow still gets the crash line */
    ticks(arg);
    dlg_sigstack_off(sigstack);
    return NULL;
}

/* Every signal but the faults of fn's own code: blocked, a fault would be
 * the default action's, past the crash guard's line (signals.h). */
static void all_but_faults(sigset_t *set)
{
    static const int faults[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGABRT}; /* signals.c's crash_signals */
    sigfillset(set);
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
        sigdelset(set, faults[i]);
}

int dlg_ticker_start(dlg_ticker **out, int period_ms, dlg_tick_fn fn, void *arg)
{
    *out = NULL;
    dlg_ticker *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    t->period_ms = period_ms > 0 ? period_ms : 1;
    t->fn = fn;
    t->arg = arg;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    /* signals (a stop request, the watchdog's SIGTERM) go to the cell's
     * own threads, whose blocking calls they must interrupt, not to this
     * one: it starts with them blocked */
    sigset_t all, old;
    all_but_faults(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&t->thread, NULL, loop, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}

void dlg_ticker_stop(dlg_ticker *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->stop = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
