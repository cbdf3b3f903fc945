#include "cpu_plan_time.h"

#include <stdio.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double cpu_time_best(int (*run)(void *arg), void *arg)
{
    double best = -1;
    for (int r = 0; r < 3; r++) {
        double t0 = now_s();
        if (run(arg) != 0)
            return -1;
        double t = now_s() - t0;
        if (r > 0 && (best < 0 || t < best))
            best = t;
    }
    return best;
}

void cpu_say(const cpu_ctx *c, const char *line)
{
    if (c->note)
        c->note(c->note_ctx, line);
    else
        fprintf(stderr, "dlgauge: %s\n", line);
}
