#define _GNU_SOURCE
#include "compute.h"

#include <errno.h>
#include <math.h>
#include <time.h>

#include "tools.h"

uint64_t compute_draw(compute_model *m)
{
    double v = (double)m->mean_ns, j = (double)m->jitter_ns;
    switch (m->dist) {
    case COMPUTE_UNIFORM:
        v += (2.0 * dlg_splitmix_unit(&m->rng) - 1.0) * j;
        break;
    case COMPUTE_NORMAL: { /* Box-Muller */
        double u1 = 1.0 - dlg_splitmix_unit(&m->rng), u2 = dlg_splitmix_unit(&m->rng);
        v += j * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        break;
    }
    default:
        break;
    }
    return v > 0 ? (uint64_t)v : 0;
}

uint64_t compute_spend(const compute_model *m, uint64_t ns)
{
    if (ns == 0)
        return 0; /* no syscall: a zero sleep could still yield the CPU */
    uint64_t t0 = tools_now_ns(), deadline = t0 + ns;
    if (m->spin) {
        while (tools_now_ns() < deadline)
            ;
    } else {
        /* an absolute deadline: an interrupted sleep resumes without drift */
        struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    return tools_now_ns() - t0;
}
