/* Timing kernels at plan time, where a plan picks between two by speed
 * (cpu_conv_algo.c: oneDNN's Winograd or direct; cpu_wgrad_pick.c:
 * cpu_wgrad_amx or oneDNN's backward weights), and saying what it found. */
#ifndef DLG_NN_CPU_PLAN_TIME_H
#define DLG_NN_CPU_PLAN_TIME_H

#include "cpu.h"

/* Seconds of the faster of two runs of run(arg) after a warm-up (which
 * takes first-touch page faults and JIT out of the figure), or -1 where a
 * run returns non-zero. */
double cpu_time_best(int (*run)(void *arg), void *arg);
/* One line on what a timing found: on the workload's host log
 * (cpu_ctx.note, quiet under -q), else on stderr. */
void cpu_say(const cpu_ctx *c, const char *line);

#endif
