/* Peak FP32 FLOP/s of this machine's CPUs, for "% of peak" figures:
 * cores x clock x FLOPs per cycle per core, with the FLOPs per cycle taken
 * from the widest FMA instruction set the CPU reports.  The derivation is
 * kept as text (peak_source) because every input is an assumption that a
 * reader may want to check (turbo clocks, FMA unit count). */
#ifndef DLG_NN_PEAK_H
#define DLG_NN_PEAK_H

#include <dlgauge/plugin.h>

#include <stddef.h>
#include <stdint.h>

typedef struct dlg_peak {
    double flops;        /* FP32 FLOP/s for `cores` cores; 0 if unknown */
    int cores;
    double ghz;          /* clock used */
    int flops_per_cycle; /* per core */
    const char *isa;     /* "avx512", "avx2+fma", "avx", "sse2", "unknown" */
    const char *fpc_why; /* why flops_per_cycle is what it is */
    char source[768];    /* how it was derived, one line (a record's path included) */
} dlg_peak;

/* From the text of /proc/cpuinfo and, optionally, cpufreq's
 * cpuinfo_max_freq (kHz; NULL or "" when absent).  Pure: used by tests. */
void dlg_peak_from_text(dlg_peak *p, const char *cpuinfo, const char *max_khz, int cores);
/* The same for bf16 arithmetic (bf16: the cpu-bf16 backend's rate: AMX,
 * AVX512_BF16 at twice the FMA rate, or emulated at the fp32 rate). */
void dlg_peak_from_text_prec(dlg_peak *p, const char *cpuinfo, const char *max_khz, int cores, bool bf16);

/* The value of the first line "key<spaces/tabs>: value" of /proc/cpuinfo
 * text, copied (the key whole: "model" does not match "model name"). */
bool dlg_cpuinfo_field(const char *text, const char *key, char *out, size_t n);

/* Reads /proc/cpuinfo and /sys/devices/system/cpu/cpu0/cpufreq, then (on
 * x86) uses the measured clock instead (a dependent-add chain): a VM's
 * cpuinfo shows the nominal clock, not the turbo one its cores run at
 * (2.445 vs ~3.15 GHz on the development VM).  Measured once per host
 * (~30 ms) and kept in its tuning record (tune.h), which later calls,
 * cells and runs read: the peak does not move with the load a cell meets
 * (peak_source says which).  With $DLGAUGE_TUNE=off, measured every call. */
void dlg_peak_detect(dlg_peak *p, int cores);
void dlg_peak_detect_prec(dlg_peak *p, int cores, bool bf16);

/* A GPU's dense peak for a math (0 fp32, 1 tf32, 2 bf16, 3 fp16: the
 * values dlg_cuda_parse_backend gives) from the table in
 * core/runtime/gpu_peak.c (the one `dlgauge sysinfo` shows): fp32 the
 * FP32 column, tf32 the TF32 one (FP32 where the GPU has no TF32),
 * bf16 and fp16 the FP16 tensor-core one (bf16's dense rate is the same
 * on every listed GPU that has it).  An unknown GPU: flops 0, and source
 * says so.  gpu: its CUDA/NVML name.  Pure: used by tests. */
void dlg_peak_from_gpu(dlg_peak *p, const char *gpu, int math);
/* The peak of the device a net on `backend` runs on: the GPU's for a cuda
 * backend name ("cuda-bf16:0": device 0's name from CUDA, math bf16),
 * else the cores' (their bf16 rate for "cpu-bf16"). */
void dlg_peak_for_backend(dlg_peak *p, const char *backend, int cores);

/* The speed fields every compute workload reports: flops_per_item, gflops
 * and pct_peak (timed_items in timed_ns; none when nothing was timed),
 * peak_gflops (when the peak is known) and peak_source. */
void dlg_peak_report(const dlg_peak *p, double flops_per_item, uint64_t timed_items, uint64_t timed_ns,
                     const dlg_report_api *api, dlg_fields *f);

#endif
