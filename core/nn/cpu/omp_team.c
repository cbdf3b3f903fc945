/* dlg_omp_team: see omp_team.h. */
#define _GNU_SOURCE
#include "omp_team.h"

#include <sched.h>
#include <stdbool.h>

#ifdef DLG_NN_HAVE_OMP
#include <omp.h>
#endif

/* Whether every CPU of a is in b. */
static bool cpuset_within(const cpu_set_t *a, const cpu_set_t *b)
{
    cpu_set_t both;
    CPU_AND(&both, a, b);
    return CPU_EQUAL(&both, a);
}

int dlg_omp_team(int threads)
{
#ifdef DLG_NN_HAVE_OMP
    if (threads <= 0)
        return 0;
    omp_set_num_threads(threads);
    /* (cpu_set_t holds 1024 CPUs: a mask past that is left to libgomp) */
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return -1;
    if (threads == 1)
        return 0;
#pragma omp parallel num_threads(threads)
    {
        cpu_set_t cur;
        if (omp_get_thread_num() != 0 && sched_getaffinity(0, sizeof cur, &cur) == 0 &&
            !cpuset_within(&cur, &mine))
            sched_setaffinity(0, sizeof mine, &mine);
    }
#else
    (void)threads;
#endif
    return 0;
}
