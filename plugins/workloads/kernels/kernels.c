/* Shared parts of the kernel workloads, and the plugin entry. */
#define _GNU_SOURCE
#include "kernels.h"

#include <time.h>

const dlg_metric kernel_metrics[] = {KERNEL_METRIC_ROWS, {NULL, 0, NULL, NULL}};

uint64_t kernel_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

void kernel_count(kernel_stats *k, uint64_t t0, uint64_t t1)
{
    if (k->steps++ > 0) { /* the first call warms caches and the thread team */
        k->counted++;
        k->timed_ns += t1 - t0;
    }
}

void kernel_begin_timed(kernel_stats *k)
{
    k->counted = k->timed_ns = 0; /* warm-up steps are not the measured ones */
}

int kernel_report(const kernel_stats *k, const dlg_report_api *api, dlg_fields *f)
{
    dlg_peak_report(&k->peak, k->flops, k->counted, k->timed_ns, api, f);
    return 0;
}

DLG_PLUGIN("kernels", &gemm_desc, &conv_desc)
