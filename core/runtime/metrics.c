#include "metrics.h"

#include <stddef.h>

const char *const dlg_core_tags[] = {"run_id", "job", "workload", "host", "status", NULL};

const dlg_metric dlg_core_metrics[] = {
    {"throughput", DLG_FIELD_DOUBLE, "items/s", "mean over repetitions of each one's items / its timed wall time (gaps between steps included, warm-up not): not items / wall_s"},
    {"throughput_ci95", DLG_FIELD_DOUBLE, "items/s", "half-width of the 95% confidence interval of throughput over repetitions (Student t; 0 for one repetition)"},
    {"throughput_stddev", DLG_FIELD_DOUBLE, "items/s", "sample standard deviation of throughput over repetitions"},
    {"unit", DLG_FIELD_STRING, "", "what an item is: images, tokens, bytes, steps"},
    {"items", DLG_FIELD_UINT, "items", "items processed in timed steps, all repetitions"},
    {"steps", DLG_FIELD_UINT, "steps", "timed steps, all repetitions"},
    {"repeats", DLG_FIELD_INT, "", "repetitions measured"},
    {"warmup_steps", DLG_FIELD_INT, "steps", "untimed warm-up steps run after each repetition's setup; of the other fields only rss_peak_bytes, memory_peak_bytes, host_iowait_fraction and cell_wall_s include them"},
    {"wall_s", DLG_FIELD_DOUBLE, "s", "timed wall time, all repetitions (warm-up excluded)"},
    {"latency_min_us", DLG_FIELD_DOUBLE, "us", "fastest timed step (exact)"},
    {"latency_p50_us", DLG_FIELD_DOUBLE, "us", "timed step of nearest rank ceil(0.5 n) of all n (the lower middle for even n): the midpoint of its log-linear histogram bucket, clamped to [min, max]; exact below 256 ns, else within 1/256 (0.39%)"},
    {"latency_p90_us", DLG_FIELD_DOUBLE, "us", "timed step of nearest rank ceil(0.9 n), as latency_p50_us"},
    {"latency_p99_us", DLG_FIELD_DOUBLE, "us", "timed step of nearest rank ceil(0.99 n), as latency_p50_us (latency_max_us for n < 100)"},
    {"latency_p999_us", DLG_FIELD_DOUBLE, "us", "timed step of nearest rank ceil(0.999 n), as latency_p50_us (latency_max_us for n < 1000)"},
    {"latency_max_us", DLG_FIELD_DOUBLE, "us", "slowest timed step (exact)"},
    {"latency_mean_us", DLG_FIELD_DOUBLE, "us", "mean step latency (exact)"},
    {"latency_stddev_us", DLG_FIELD_DOUBLE, "us", "sample standard deviation of step latency (exact)"},
    {"data_wait_fraction", DLG_FIELD_DOUBLE, "", "input wait the workload reported for its timed steps / their summed latency, all repetitions"},
    {"cpu_user_s", DLG_FIELD_DOUBLE, "s", "user CPU time of the cell's process (all its threads, not child processes) during timed steps, all repetitions"},
    {"cpu_sys_s", DLG_FIELD_DOUBLE, "s", "system CPU time of the cell's process during timed steps, all repetitions"},
    {"rss_peak_bytes", DLG_FIELD_UINT, "bytes", "peak resident set size of the cell's process, setup and warm-up included (VmHWM, reset per cell; child processes not counted)"},
    {"read_bytes", DLG_FIELD_UINT, "bytes", "bytes the process caused to be read from block devices (/proc/self/io), all repetitions"},
    {"disk_read_bytes", DLG_FIELD_UINT, "bytes", "bytes the machine's disks read during timed steps, all processes, all repetitions (/proc/diskstats sectors x 512; whole disks, not loop/ram/zram)"},
    {"storage_read_bytes", DLG_FIELD_UINT, "bytes", "bytes read through storage backends, all repetitions"},
    {"storage_ios", DLG_FIELD_UINT, "", "read requests issued through storage backends, all repetitions"},
    {"cpus_used", DLG_FIELD_INT, "", "vCPUs the cell was granted: those it was pinned to, or with cpus = 0 under a CPU quota (its own or its environment's) the quota rounded down; its thread pools are this size"},
    {"cpu_list", DLG_FIELD_STRING, "", "which CPUs, e.g. 0,2-3 (one NUMA node and distinct cores first)"},
    {"cpu_user_share", DLG_FIELD_DOUBLE, "", "(cpu_user_s + cpu_sys_s) / (wall_s x capacity), capacity = the CPUs the cell was pinned to, or the CPU quota (the cell's or its environment's) where that is less: how busy the cell kept the CPU time it could have (1: all of it)"},
    {"host_iowait_fraction", DLG_FIELD_DOUBLE, "", "share of all CPUs' time spent in iowait from the cell's first setup to its last teardown, warm-up included (/proc/stat)"},
    {"major_faults", DLG_FIELD_UINT, "", "major page faults during timed steps, all repetitions (pages read from disk)"},
    {"ctx_switches_voluntary", DLG_FIELD_UINT, "", "voluntary context switches during timed steps, all repetitions (waits)"},
    {"ctx_switches_involuntary", DLG_FIELD_UINT, "", "involuntary context switches during timed steps, all repetitions (preemption)"},
    {"memory_limit_bytes", DLG_FIELD_UINT, "bytes", "the cell's memory limit (memory key), page cache included"},
    {"memory_enforced", DLG_FIELD_BOOL, "", "whether the memory limit was enforced by a cgroup"},
    {"memory_peak_bytes", DLG_FIELD_UINT, "bytes", "peak memory charged to the cell's cgroup, page cache included"},
    {"cpu_quota_enforced", DLG_FIELD_BOOL, "", "whether the cpu_quota limit was enforced by a cgroup (set only with a cpu_quota)"},
    {"cell_wall_s", DLG_FIELD_DOUBLE, "s", "lifetime of the cell's process: setup, warm-up and teardown included (isolation = process only)"},
    {"start_time", DLG_FIELD_STRING, "", "RFC 3339 UTC time the cell started"},
    {"version", DLG_FIELD_STRING, "", "dlgauge version"},
    {"git_rev", DLG_FIELD_STRING, "", "git revision dlgauge was built from"},
    {"gpu_name", DLG_FIELD_STRING, "", "the GPU the cell ran on (NVML), when its workload has device = cuda:N or auto with a GPU"},
    {"gpu_util", DLG_FIELD_DOUBLE, "%", "mean GPU utilisation during timed steps, repetitions weighted by their timed seconds (NVML, sampled every 100 ms)"},
    {"gpu_mem_peak_bytes", DLG_FIELD_UINT, "bytes", "highest GPU memory in use during timed steps (NVML)"},
    {"power_avg_w", DLG_FIELD_DOUBLE, "W", "mean board power during timed steps, repetitions weighted by their timed seconds (NVML)"},
    {"energy_j", DLG_FIELD_DOUBLE, "J", "GPU energy during timed steps, all repetitions: NVML's energy counter where supported, else integrated power"},
    {"energy_per_item_j", DLG_FIELD_DOUBLE, "J/item", "energy_j / items (meaningless for timed work under ~1 s)"},
    {"error", DLG_FIELD_STRING, "", "why the cell failed (status error) or stopped early"},
    {"config", DLG_FIELD_STRING, "", "every key of the cell as it ran, swept or not: \"key=value ...\" (spaces in values escaped with \\)"},
    {"storage_config", DLG_FIELD_STRING, "", "the storage the cell read through, as config: type, then its set options (a report judges a throttle's limits from them)"},
    {NULL, 0, NULL, NULL},
};

const char *const dlg_progress_tags[] = {"run_id", "job", "workload", "host", "cell", NULL};

const dlg_metric dlg_progress_metrics[] = {
    {"step_rate", DLG_FIELD_DOUBLE, "steps/s", "steps per second over the last interval"},
    {"items_per_s", DLG_FIELD_DOUBLE, "items/s", "items per second over the last interval"},
    {"steps", DLG_FIELD_UINT, "steps", "timed steps so far in this repetition"},
    {"elapsed_s", DLG_FIELD_DOUBLE, "s", "timed seconds so far in this repetition"},
    {"repetition", DLG_FIELD_INT, "", "0-based repetition"},
    {NULL, 0, NULL, NULL},
};
