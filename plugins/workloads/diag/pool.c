/* Barrier-driven worker pool: see pool.h. */
#define _GNU_SOURCE
#include "pool.h"

#include "cpuset.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#include <dlgauge/sigstack.h>

#define CMD_QUIT (-1)

struct worker {
    diag_pool *pool;
    int tid;
    pthread_t thread;
};

struct diag_pool {
    int nthreads;
    diag_pool_fn fn;
    void *arg;
    int cmd; /* written by worker 0 before the start barrier */
    pthread_barrier_t barrier;
    /* Start gate: workers wait here until all were created (go = 1), or
     * leave at once if creating one failed (go = -1). */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int go;
    struct worker *workers; /* [nthreads], [0] is the caller */
    dlg_cpuset caller_mask; /* the caller's CPUs before the pool pinned it */
    int caller_pinned;
};

/* The n-th CPU (round robin) of the set the caller may run on: the job's. */
static int nth_cpu(const dlg_cpuset *allowed, int n)
{
    int want = n % dlg_cpuset_count(allowed);
    for (int cpu = 0; cpu < allowed->nbits; cpu++)
        if (dlg_cpuset_has(allowed, cpu) && want-- == 0)
            return cpu;
    return -1;
}

/* Pins worker tid to one CPU of the caller's set so that the pages it
 * first-touches stay on its NUMA node (STREAM runs with OMP_PROC_BIND for
 * the same reason).  Best effort: with one CPU there is nothing to pin. */
static void pin(diag_pool *p, int tid)
{
    if (dlg_cpuset_count(&p->caller_mask) < 2)
        return;
    dlg_cpuset one;
    int rc = -1;
    if (dlg_cpuset_init(&one, 0) == 0 && dlg_cpuset_add(&one, nth_cpu(&p->caller_mask, tid)) == 0)
        rc = dlg_cpuset_set_affinity(&one); /* this thread's */
    dlg_cpuset_fini(&one);
    if (tid == 0)
        p->caller_pinned = rc == 0;
}

static void work(struct worker *w)
{
    diag_pool *p = w->pool;
    pthread_mutex_lock(&p->lock);
    while (p->go == 0)
        pthread_cond_wait(&p->cond, &p->lock);
    int go = p->go;
    pthread_mutex_unlock(&p->lock);
    if (go < 0)
        return;
    pin(p, w->tid);
    for (;;) {
        pthread_barrier_wait(&p->barrier); /* also orders the read of cmd */
        int cmd = p->cmd;
        if (cmd == CMD_QUIT)
            return;
        p->fn(p->arg, w->tid, p->nthreads, cmd);
        pthread_barrier_wait(&p->barrier);
    }
}

/* A stack of its own for signals: a kernel that overflows this thread's
 * stack in-process still gets the crash guard's line (sigstack.h). */
static void *worker_main(void *w)
{
    void *ss = dlg_sigstack_on();
    work(w);
    dlg_sigstack_off(ss);
    return NULL;
}

static void open_gate(diag_pool *p, int go)
{
    pthread_mutex_lock(&p->lock);
    p->go = go;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static void destroy(diag_pool *p, int started)
{
    for (int i = 1; i < started; i++)
        pthread_join(p->workers[i].thread, NULL);
    if (p->caller_pinned)
        dlg_cpuset_set_affinity(&p->caller_mask);
    dlg_cpuset_fini(&p->caller_mask);
    pthread_barrier_destroy(&p->barrier);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p->workers);
    free(p);
}

int diag_pool_new(int nthreads, diag_pool_fn fn, void *arg, diag_pool **out)
{
    *out = NULL;
    if (nthreads < 1)
        return EINVAL;
    diag_pool *p = calloc(1, sizeof *p);
    struct worker *w = calloc((size_t)nthreads, sizeof *w);
    if (!p || !w) {
        free(p);
        free(w);
        return ENOMEM;
    }
    p->nthreads = nthreads;
    p->fn = fn;
    p->arg = arg;
    p->workers = w;
    int rc = pthread_barrier_init(&p->barrier, NULL, (unsigned)nthreads);
    if (rc != 0) {
        free(w);
        free(p);
        return rc;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    /* the kernel's mask may be larger than a cpu_set_t (more than 1024
     * possible CPUs): a fixed one read nothing and left the pool unpinned */
    if (dlg_cpuset_init(&p->caller_mask, 0) == 0 && dlg_cpuset_get_affinity(&p->caller_mask) != 0)
        CPU_ZERO_S(p->caller_mask.size, p->caller_mask.bits); /* unknown: pin nothing */

    /* Workers block every signal: the host's handlers run on its own
     * thread, and its sleeps see EINTR as they would without a pool.  Not
     * a worker's own fault: blocked, the kernel kills at once and no
     * handler (dlgauge's crash line in-process) gets to say why. */
    sigset_t all, old;
    sigfillset(&all);
    static const int faults[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
        sigdelset(&all, faults[i]);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int started = 1;
    for (; started < nthreads; started++) {
        w[started].pool = p;
        w[started].tid = started;
        rc = pthread_create(&w[started].thread, NULL, worker_main, &w[started]);
        if (rc != 0)
            break;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        open_gate(p, -1);
        destroy(p, started);
        return rc;
    }
    open_gate(p, 1);
    pin(p, 0);
    *out = p;
    return 0;
}

void diag_pool_run(diag_pool *p, int cmd)
{
    p->cmd = cmd;
    pthread_barrier_wait(&p->barrier);
    p->fn(p->arg, 0, p->nthreads, cmd);
    pthread_barrier_wait(&p->barrier);
}

void diag_pool_free(diag_pool *p)
{
    if (!p)
        return;
    p->cmd = CMD_QUIT;
    pthread_barrier_wait(&p->barrier);
    destroy(p, p->nthreads);
}
