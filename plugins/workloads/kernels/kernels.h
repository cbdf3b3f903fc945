/* kernels.so: DeepBench-style single-kernel workloads on oneDNN. */
#ifndef DLG_KERNELS_H
#define DLG_KERNELS_H

#include <dlgauge/plugin.h>

#include "peak.h"

extern const dlg_plugin_desc gemm_desc;
extern const dlg_plugin_desc conv_desc;
extern const dlg_metric kernel_metrics[];

/* The fields both report (gemm adds its check), as table rows. */
#define KERNEL_METRIC_ROWS \
    {"flops_per_item", DLG_FIELD_DOUBLE, "FLOP", "floating-point operations per step (2 per multiply-add)"}, \
    {"gflops", DLG_FIELD_DOUBLE, "GFLOP/s", "achieved over the repetition's timed steps (never the first step after setup)"}, \
    {"pct_peak", DLG_FIELD_DOUBLE, "%", "gflops as a percentage of peak_gflops"}, \
    {"peak_gflops", DLG_FIELD_DOUBLE, "GFLOP/s", "FP32 peak of the job's cores"}, \
    {"peak_source", DLG_FIELD_STRING, "", "how the peak was derived: cores x clock x FLOP/cycle"}

/* FLOP count and timing shared by both: gflops over the timed steps
 * (from begin_timed; never the first step after setup), % of peak. */
typedef struct kernel_stats {
    double flops;    /* per step */
    uint64_t steps;  /* since setup */
    uint64_t counted, timed_ns; /* the steps in gflops, and their time */
    dlg_peak peak;
} kernel_stats;

uint64_t kernel_now_ns(void);
void kernel_count(kernel_stats *k, uint64_t t0, uint64_t t1);
/* What both workloads' begin_timed do: gflops from the next step on. */
void kernel_begin_timed(kernel_stats *k);
int kernel_report(const kernel_stats *k, const dlg_report_api *api, dlg_fields *f);

#endif
