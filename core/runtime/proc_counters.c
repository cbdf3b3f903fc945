/* The process's and its machine's counters (proc_counters.h). */
#define _GNU_SOURCE
#include "proc_counters.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t dlg_proc_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The number on the first line of path that fmt ("key: %llu...") reads;
 * 0 when the file or the key is missing. */
static unsigned long long proc_value(const char *path, const char *fmt)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[128];
    unsigned long long v = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, fmt, &v) == 1)
            break;
    fclose(f);
    return v;
}

uint64_t dlg_proc_read_bytes(void) { return proc_value("/proc/self/io", "read_bytes: %llu"); }

/* each cell gets its own peak: the runner resets it as the cell starts */
uint64_t dlg_proc_hwm_bytes(void) { return proc_value("/proc/self/status", "VmHWM: %llu kB") * 1024; }

void dlg_proc_reset_hwm(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, "5", 1) < 0) { /* older kernels: peak stays process-wide */ }
        close(fd);
    }
}

/* for the share of time the machine waited on I/O while the cell ran */
void dlg_host_cpu_times(uint64_t *total, uint64_t *iowait)
{
    unsigned long long v[8] = {0};
    *total = *iowait = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
               &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; i++)
            *total += v[i];
        *iowait = v[4];
    }
    fclose(f);
}

/* what the cell cost the disk, whoever else read it too */
uint64_t dlg_disk_read_bytes(void)
{
    FILE *f = fopen("/proc/diskstats", "r");
    if (!f)
        return 0;
    char line[512], name[64];
    unsigned long long sectors, total = 0;
    unsigned maj, min_;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%u %u %63s %*u %*u %llu", &maj, &min_, name, &sectors) != 4)
            continue;
        char path[128];
        snprintf(path, sizeof path, "/sys/block/%s", name);
        if (strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0 || strncmp(name, "zram", 4) == 0 ||
            access(path, F_OK) != 0)
            continue;
        total += sectors * 512ull;
    }
    fclose(f);
    return total;
}
