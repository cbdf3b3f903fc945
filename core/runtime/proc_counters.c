/* The process's and its machine's counters (proc_counters.h). */
#define _GNU_SOURCE
#include "proc_counters.h"

#include "proc_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t dlg_proc_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The number of "key: N" in path (/proc/self/io, /proc/self/status),
 * read without allocating (proc_file.h): a failed malloc must not make a
 * reading 0, and a repetition's difference of two readings a lifetime's
 * total.  0 when the file or the key is missing. */
static unsigned long long proc_number(const char *path, const char *key)
{
    char v[64];
    return dlg_proc_value(path, key, v, sizeof v) == 0 ? strtoull(v, NULL, 10) : 0;
}

uint64_t dlg_proc_read_bytes(void) { return proc_number("/proc/self/io", "read_bytes"); }

/* each cell gets its own peak: the runner resets it as the cell starts */
uint64_t dlg_proc_hwm_bytes(void) { return proc_number("/proc/self/status", "VmHWM") * 1024; }

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
    char line[512];
    if (dlg_file_line("/proc/stat", line, sizeof line) != 0 ||
        sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
               &v[6], &v[7]) != 8)
        return;
    for (int i = 0; i < 8; i++)
        *total += v[i];
    *iowait = v[4];
}

/* One /proc/diskstats line into *total, a whole disk's (listed in
 * /sys/block) only. */
static bool add_disk(const char *line, void *total)
{
    char name[64], path[128];
    unsigned long long sectors;
    unsigned maj, min_;
    if (sscanf(line, "%u %u %63s %*u %*u %llu", &maj, &min_, name, &sectors) != 4)
        return true;
    snprintf(path, sizeof path, "/sys/block/%s", name);
    if (strncmp(name, "loop", 4) != 0 && strncmp(name, "ram", 3) != 0 && strncmp(name, "zram", 4) != 0 &&
        access(path, F_OK) == 0)
        *(uint64_t *)total += sectors * 512ull;
    return true;
}

/* what the cell cost the disk, whoever else read it too */
uint64_t dlg_disk_read_bytes(void)
{
    uint64_t total = 0;
    dlg_file_lines("/proc/diskstats", add_disk, &total);
    return total;
}
