/* NVML sampling thread for GPU utilisation, memory, power and energy. */
#include "gpu_sampler.h"

#include <dlgauge/plugin.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dlg_gpu_sampler {
    dlg_nvml *nv;
    int idx, period_ms;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    struct timespec t0;
    uint64_t e0;
    bool counter;
    /* written by the thread, read after join */
    int samples;
    double util_sum, power_sum_w, energy_int_j;
    uint64_t mem_peak;
};

static double secs(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

static void sample(dlg_gpu_sampler *s, double dt)
{
    unsigned mw, util;
    uint64_t mem;
    if (dlg_nvml_sample(s->nv, s->idx, &mw, &util, &mem) < 0)
        return;
    s->samples++;
    s->util_sum += util;
    s->power_sum_w += mw / 1000.0;
    s->energy_int_j += mw / 1000.0 * dt;
    if (mem > s->mem_peak)
        s->mem_peak = mem;
}

static void *run(void *arg)
{
    dlg_gpu_sampler *s = arg;
    struct timespec last, now, until;
    clock_gettime(CLOCK_MONOTONIC, &last);
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)s->period_ms * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        /* the condvar waits on CLOCK_MONOTONIC (set in start) */
        while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &until) != ETIMEDOUT)
            ;
        if (s->stop)
            break;
        pthread_mutex_unlock(&s->mu);
        clock_gettime(CLOCK_MONOTONIC, &now);
        sample(s, secs(&last, &now));
        last = now;
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int dlg_gpu_sampler_start(dlg_gpu_sampler **out, dlg_nvml *nv, int idx, int period_ms)
{
    *out = NULL;
    if (!nv || idx < 0 || idx >= dlg_nvml_count(nv))
        return -DLG_ENOTSUP;
    dlg_gpu_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return -DLG_ENOMEM;
    s->nv = nv;
    s->idx = idx;
    s->period_ms = period_ms > 0 ? period_ms : 100;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    s->counter = dlg_nvml_energy_mj(nv, idx, &s->e0) == 0;
    clock_gettime(CLOCK_MONOTONIC, &s->t0);
    if (pthread_create(&s->thread, NULL, run, s) != 0) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return -DLG_ENOMEM;
    }
    *out = s;
    return 0;
}

int dlg_gpu_sampler_stop(dlg_gpu_sampler *s, dlg_gpu_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!s)
        return -DLG_EINVAL;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t e1 = 0;
    st->seconds = secs(&s->t0, &t1);
    st->samples = s->samples;
    st->gpu_mem_peak = s->mem_peak;
    if (s->samples) {
        st->gpu_util = s->util_sum / s->samples;
        st->power_avg_w = s->power_sum_w / s->samples;
    }
    st->energy_counter = s->counter && dlg_nvml_energy_mj(s->nv, s->idx, &e1) == 0 && e1 >= s->e0;
    st->energy_j = st->energy_counter ? (double)(e1 - s->e0) / 1000.0 : s->energy_int_j;
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return 0;
}
