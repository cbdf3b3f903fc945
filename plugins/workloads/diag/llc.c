/* Last-level cache of a run: see llc.h. */
#define _GNU_SOURCE
#include "llc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First line of root/cpuC/cache/indexI/name, or "" when absent. */
static void read_attr(const char *root, int cpu, int index, const char *name, char *buf, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/%s", root, cpu, index, name);
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(buf, (int)len, f))
        buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
}

/* cpu's highest-level data or unified cache: its size and the CPUs
 * sharing it (which names the instance); 0 if none. */
static double cpu_llc(const char *root, int cpu, char *shared, size_t len)
{
    int best_level = 0;
    double best = 0;
    for (int i = 0; i < 16; i++) {
        char text[256], unit = 0;
        read_attr(root, cpu, i, "level", text, sizeof text);
        if (!text[0])
            break;
        int level = atoi(text);
        read_attr(root, cpu, i, "type", text, sizeof text);
        if (strcmp(text, "Instruction") == 0)
            continue;
        read_attr(root, cpu, i, "size", text, sizeof text);
        double size = 0;
        if (sscanf(text, "%lf%c", &size, &unit) < 1 || size <= 0 || level < best_level)
            continue;
        best_level = level;
        best = size * (unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : unit == 'G' ? 1073741824.0 : 1.0);
        read_attr(root, cpu, i, "shared_cpu_list", shared, len);
    }
    return best;
}

double llc_bytes_used(const char *root, const dlg_cpuset *cpus, int n)
{
    int count = dlg_cpuset_count(cpus);
    if (count == 0 || n < 1)
        return 0;
    if (n > count)
        n = count;
    char (*seen)[256] = calloc((size_t)n, sizeof *seen);
    if (!seen)
        return 0;
    double total = 0;
    int nseen = 0;
    for (int cpu = 0, used = 0; cpu < cpus->nbits && used < n; cpu++) {
        if (!dlg_cpuset_has(cpus, cpu))
            continue;
        used++;
        char shared[256] = "";
        double size = cpu_llc(root, cpu, shared, sizeof shared);
        int dup = 0;
        for (int i = 0; i < nseen && !dup; i++)
            dup = shared[0] && strcmp(seen[i], shared) == 0;
        if (size <= 0 || dup)
            continue;
        snprintf(seen[nseen++], sizeof seen[0], "%s", shared);
        total += size;
    }
    free(seen);
    return total;
}

double llc_bytes_run(int n, char *dir, size_t len)
{
    const char *sysfs = getenv("DLG_SYSFS_ROOT");
    snprintf(dir, len, "%s/devices/system/cpu", sysfs && *sysfs ? sysfs : "/sys");
    dlg_cpuset cpus;
    double b = 0;
    if (dlg_cpuset_init(&cpus, 0) == 0 && dlg_cpuset_get_affinity(&cpus) == 0)
        b = llc_bytes_used(dir, &cpus, n);
    dlg_cpuset_fini(&cpus);
    return b;
}
