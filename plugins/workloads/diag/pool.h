/* A persistent pool of worker threads driven in lock-step by one barrier:
 * the calling thread is worker 0, so a pool of n runs n-1 pthreads.
 * Worker i is pinned to the i-th CPU (round robin) of the caller's
 * affinity set, the caller too until diag_pool_free (call it from the
 * same thread) gives it its set back.
 * Created in setup so that step() never creates threads or allocates. */
#ifndef DLG_DIAG_POOL_H
#define DLG_DIAG_POOL_H

typedef struct diag_pool diag_pool;

/* Called on every worker (tid 0..nthreads-1) for each diag_pool_run(). */
typedef void (*diag_pool_fn)(void *arg, int tid, int nthreads, int cmd);

/* Starts nthreads-1 workers; returns 0, or an errno value. */
int diag_pool_new(int nthreads, diag_pool_fn fn, void *arg, diag_pool **out);
/* Runs fn(arg, tid, n, cmd) on every worker, the caller included, and
 * returns once all have finished.  cmd must be >= 0. */
void diag_pool_run(diag_pool *p, int cmd);
void diag_pool_free(diag_pool *p);

#endif
