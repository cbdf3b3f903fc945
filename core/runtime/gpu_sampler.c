/* NVML sampling for GPU utilisation, memory, power and energy, on a
 * ticker thread (ticker.c: signals stay with the cell's own threads). */
#include "gpu_sampler.h"
#include "ticker.h"

#include <dlgauge/plugin.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dlg_gpu_sampler {
    dlg_nvml *nv;
    int idx;
    dlg_ticker *ticker;
    struct timespec t0, last;
    uint64_t e0;
    bool counter;
    /* written by the ticker's thread, read after it stopped */
    int samples;
    double util_sum, power_sum_w, energy_int_j;
    uint64_t mem_peak;
};

static double secs(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

/* One tick: a sample, its power integrated over the time since the last. */
static void sample(void *arg)
{
    dlg_gpu_sampler *s = arg;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double dt = secs(&s->last, &now);
    s->last = now;
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
    s->counter = dlg_nvml_energy_mj(nv, idx, &s->e0) == 0;
    clock_gettime(CLOCK_MONOTONIC, &s->t0);
    s->last = s->t0;
    if (dlg_ticker_start(&s->ticker, period_ms > 0 ? period_ms : 100, sample, s) != 0) {
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
    dlg_ticker_stop(s->ticker);
    /* a window shorter than the period (a few quick steps) still gets a
     * reading: NVML's utilisation is itself the driver's recent average */
    if (!s->samples)
        sample(s);
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
    free(s);
    return 0;
}
