/* Timing kernels at plan time, where a plan picks among them by speed
 * (cpu_conv_algo.c: oneDNN's Winograd or direct; cpu_wgrad_pick.c and
 * cpu_fc_wgrad.c: a weight gradient on oneDNN's kernel or on ours), and
 * saying what it found. */
#ifndef DLG_NN_CPU_PLAN_TIME_H
#define DLG_NN_CPU_PLAN_TIME_H

#include "cpu.h"

/* Seconds of the faster of two runs of run(arg) after a warm-up (which
 * takes first-touch page faults and JIT out of the figure), or -1 where a
 * run returns non-zero. */
double cpu_time_best(int (*run)(void *arg), void *arg);
/* One zeroed (no denormals) 64-byte aligned allocation carved into n
 * buffers, *at[i] of sizes[i] bytes, each 64-byte aligned: the allocation
 * to free(), or NULL.  What a timing runs kernels on. */
char *cpu_zeroed_buffers(const size_t *sizes, void **const *at, int n);
/* One line on what a timing found: on the workload's host log
 * (cpu_ctx.note, quiet under -q), else on stderr. */
void cpu_say(const cpu_ctx *c, const char *line);

/* The kernels a tuned choice is among: [0] is the library's (the default,
 * always offered), the others ours.  names: the record's values (no
 * spaces); said: as the note names them. */
typedef struct cpu_tune_menu {
    const char *const *names, *const *said;
    int n;
    unsigned can; /* bit k: kernel k takes the layer (bit 0 ignored) */
    /* test hook: an environment variable whose "<s>,<s>,..." (one a
     * kernel, in menu order; a missing one cannot run) stands for the
     * timings, whatever this machine's speeds */
    const char *hook;
} cpu_tune_menu;

/* Which kernel of the menu runs what key names (../tune.h: everything
 * that can change which is faster; the CPU is the record's own): the
 * host's tuning record's choice where it holds one among those offered,
 * else timed (menu->hook's times where it is set) by time_all(arg, t),
 * which fills t[k] with kernel k's
 * seconds (<= 0: cannot run) and returns 0; 1 where the library has no
 * kernel for it (the first of ours offered is taken, untimed); -1 where
 * cut short (the library's is taken, nothing kept).  Ours must be 10%
 * faster than the library's to win.  The choice is kept in the record,
 * and one line says what was timed: "cpu: <what> timed <how>: <kernel>
 * <ms>, ...: <pick>". */
int cpu_tuned_pick(cpu_ctx *c, const char *key, const cpu_tune_menu *menu, int (*time_all)(void *arg, double *t),
                   void *arg, const char *what, const char *how);

#endif
