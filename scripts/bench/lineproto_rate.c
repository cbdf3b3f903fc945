/* Line-protocol formatting rate on one core: dlgauge's formatter on a
 * typical dlgauge_result point (6 tags, 30 fields).  Usage: lineproto_rate N */
#define _GNU_SOURCE
#include "lineproto.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    static const char *const names[] = {
        "throughput", "throughput_ci95", "throughput_stddev", "wall_s", "latency_min_us", "latency_p50_us",
        "latency_p90_us", "latency_p99_us", "latency_p999_us", "latency_max_us", "latency_mean_us",
        "latency_stddev_us", "data_wait_fraction", "cpu_user_s", "cpu_sys_s", "loss", "top1", "gflops",
        "pct_peak", "energy_j"};
    dlg_tag tags[] = {{"batch", "64"}, {"host", "gpu-node-17"}, {"job", "resnet50 train"},
                      {"run_id", "20261129T221808Z-316a"}, {"status", "ok"}, {"workload", "resnet50"}};
    dlg_field fields[30];
    size_t nf = 0;
    for (size_t i = 0; i < 20; i++)
        fields[nf++] = (dlg_field){.key = names[i], .type = DLG_FIELD_DOUBLE, .v.d = 1234.5678 * (double)(i + 1)};
    static const char *const ints[] = {"items", "steps", "repeats", "warmup_steps", "rss_peak_bytes",
                                       "read_bytes", "storage_read_bytes", "storage_ios"};
    for (size_t i = 0; i < 8; i++)
        fields[nf++] = (dlg_field){.key = ints[i], .type = DLG_FIELD_INT, .v.i = 123456789 + (int64_t)i};
    fields[nf++] = (dlg_field){.key = "unit", .type = DLG_FIELD_STRING, .v.s = "images"};
    fields[nf++] = (dlg_field){.key = "version", .type = DLG_FIELD_STRING, .v.s = "0.1.0"};
    dlg_point p = {"dlgauge_result", tags, 6, fields, nf, 1795990688792117342ll};
    dlg_sbuf b = {0};
    size_t bytes = 0;
    /* warm-up, untimed: the buffer grows to its flush size and is touched */
    while (b.len <= (1u << 20))
        if (lp_format_point(&b, &p, 0, NULL) != 1)
            return 1;
    sbuf_truncate(&b, 0);
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        if (b.len > (1u << 20)) {
            bytes += b.len;
            sbuf_truncate(&b, 0);
        }
        if (lp_format_point(&b, &p, 0, NULL) != 1)
            return 1;
    }
    double dt = now_s() - t0;
    bytes += b.len;
    printf("%.0f %.1f\n", (double)n / dt, (double)bytes / dt / 1e6);
    sbuf_free(&b);
    return 0;
}
