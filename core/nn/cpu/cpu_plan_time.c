#include "cpu_plan_time.h"

#include "../tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OURS_MARGIN 0.9
#define MENU_MAX 8

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

char *cpu_zeroed_buffers(const size_t *sizes, void **const *at, int n)
{
    size_t total = 0, off = 0;
    for (int i = 0; i < n; i++)
        total += CPU_ALIGN(sizes[i]);
    char *buf = NULL;
    if (posix_memalign((void **)&buf, 64, total ? total : 64) != 0)
        return NULL;
    memset(buf, 0, total);
    for (int i = 0; i < n; i++) {
        *at[i] = buf + off;
        off += CPU_ALIGN(sizes[i]);
    }
    return buf;
}

void cpu_say(const cpu_ctx *c, const char *line)
{
    if (c->note)
        c->note(c->note_ctx, line);
    else
        fprintf(stderr, "dlgauge: %s\n", line);
}

/* The record's choice for key among what the menu offers, or -1 where it
 * holds none (or something else, said once). */
static int recorded(const char *path, const char *key, const cpu_tune_menu *m)
{
    char val[DLG_TUNE_VAL_MAX];
    if (!dlg_tune_get(path, key, val, sizeof val))
        return -1;
    for (int k = 0; k < m->n; k++)
        if (strcmp(val, m->names[k]) == 0 && (k == 0 || (m->can & 1u << k)))
            return k;
    fprintf(stderr, "dlgauge: tuning record %s: %s '%s' names no kernel offered; timed again\n", path, key, val);
    return -1;
}

/* The fastest of ours where 10% faster than the library's, else it. */
static int fastest(const cpu_tune_menu *m, const double *t)
{
    int best = 0;
    for (int k = 1; k < m->n; k++)
        if ((m->can & 1u << k) && t[k] > 0 && t[k] < OURS_MARGIN * t[0] && (best == 0 || t[k] < t[best]))
            best = k;
    return best;
}

static void say(cpu_ctx *c, const cpu_tune_menu *m, const double *t, int pick, const char *what, const char *how,
                const char *kept)
{
    char said[768];
    int n = snprintf(said, sizeof said, "cpu: %s timed %s:", what, how);
    for (int k = 0; k < m->n; k++)
        if (t[k] > 0 && n > 0 && (size_t)n < sizeof said)
            n += snprintf(said + n, sizeof said - (size_t)n, "%s %s %.3g ms", k ? "," : "", m->said[k], t[k] * 1e3);
    if (n > 0 && (size_t)n < sizeof said)
        snprintf(said + n, sizeof said - (size_t)n, ": %s%s%s", m->said[pick], kept ? "; kept in tuning record " : "",
                 kept ? kept : "");
    cpu_say(c, said);
}

/* menu->hook's times into t: true where it is set. */
static bool hooked(const cpu_tune_menu *m, double *t)
{
    const char *env = m->hook ? getenv(m->hook) : NULL;
    for (int k = 0; env && *env && k < m->n; k++) {
        char *end;
        t[k] = strtod(env, &end);
        env = end == env ? "" : *end == ',' ? end + 1 : end;
    }
    return env != NULL;
}

int cpu_tuned_pick(cpu_ctx *c, const char *key, const cpu_tune_menu *menu, int (*time_all)(void *arg, double *t),
                   void *arg, const char *what, const char *how)
{
    char path[DLG_TUNE_PATH_MAX];
    double t[MENU_MAX];
    if (menu->n > MENU_MAX)
        return 0;
    bool rec = dlg_tune_path(path, sizeof path);
    int lock = rec ? dlg_tune_lock(path) : -1; /* ranks of a host time one at a time */
    int pick = rec ? recorded(path, key, menu) : -1;
    for (int k = 0; k < menu->n; k++)
        t[k] = -1;
    int timed = pick >= 0 ? -1 : hooked(menu, t) ? 0 : time_all(arg, t);
    for (int k = 1; timed == 1 && pick < 0 && k < menu->n; k++)
        pick = menu->can & 1u << k ? k : -1;
    if (timed == 0) {
        for (int k = 1; k < menu->n; k++) /* a hook's times for kernels not offered */
            t[k] = menu->can & 1u << k ? t[k] : -1;
        pick = t[0] > 0 ? fastest(menu, t) : -1;
        bool kept = pick >= 0 && rec && dlg_tune_put(path, key, menu->names[pick]) == 0;
        if (pick >= 0)
            say(c, menu, t, pick, what, how, kept ? path : NULL);
    }
    dlg_tune_unlock(lock);
    return pick < 0 ? 0 : pick;
}
