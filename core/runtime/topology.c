#include "topology.h"

#include "cpuset.h"
#include "proc_file.h"

#include <dlgauge/plugin.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int dlg_cpus_parse(const char *text, int *count, int *first, int *last, char *why, size_t whylen)
{
    char *end;
    long a = strtol(text, &end, 10);
    *count = 0;
    *first = *last = -1;
    if (end != text && *end == '\0' && a >= 0) {
        if (a > 4096) { /* the same bound as an int option would give */
            snprintf(why, whylen, "%s is above the maximum 4096", text);
            return -1;
        }
        *count = (int)a;
        return 0;
    }
    long b;
    if (end != text && *end == '-' && a >= 0) {
        char *end2;
        b = strtol(end + 1, &end2, 10);
        if (end2 != end + 1 && *end2 == '\0' && b >= a && b < DLG_CPU_ID_LIMIT) {
            *first = (int)a;
            *last = (int)b;
            *count = (int)(b - a + 1);
            return 0;
        }
    }
    snprintf(why, whylen, "'%s' is neither a CPU count (e.g. 4) nor a CPU range (e.g. 0-3)", text);
    return -1;
}

/* A kernel id list file (cpu/online, node/online: one line of any length)
 * into s (initialized): how many ids, or -1 if unreadable or malformed. */
static int read_list(const char *path, dlg_cpuset *s)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *text = NULL;
    size_t cap = 0;
    ssize_t got = getline(&text, &cap, f);
    fclose(f);
    int n = got > 0 ? dlg_cpuset_parse_list(text, s) : -1;
    free(text);
    return n;
}

int dlg_numa_nodes(const char *sysfs)
{
    char path[512];
    snprintf(path, sizeof path, "%s/devices/system/node/online", sysfs);
    dlg_cpuset nodes;
    int n = -1;
    if (dlg_cpuset_init(&nodes, 0) == 0) {
        n = read_list(path, &nodes);
        dlg_cpuset_fini(&nodes);
    }
    return n > 0 ? n : 1;
}

/* without allocating (proc_file.h): an id never reads as unknown for want
 * of memory */
static int read_int_file(const char *path, int def)
{
    char text[32];
    int v = def;
    if (dlg_file_line(path, text, sizeof text) != 0 || sscanf(text, "%d", &v) != 1)
        v = def;
    return v;
}

/* NUMA node of a CPU (sysfs cpuN/nodeM link), 0 if unknown. */
static int cpu_node(int cpu)
{
    char path[128];
    for (int n = 0; n < 64; n++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/node%d", cpu, n);
        if (access(path, F_OK) == 0)
            return n;
    }
    return 0;
}

typedef struct cpu_info {
    int cpu, node, package, core;
} cpu_info;

static int cmp_core(const void *a, const void *b)
{
    const cpu_info *x = a, *y = b;
    if (x->node != y->node)
        return x->node - y->node;
    if (x->package != y->package)
        return x->package - y->package;
    if (x->core != y->core)
        return x->core - y->core;
    return x->cpu - y->cpu;
}

int dlg_cpus_choose(const char *text, const dlg_cpuset *allowed, dlg_cpuset *out, char *why, size_t whylen)
{
    int count, first, last;
    if (dlg_cpus_parse(text, &count, &first, &last, why, whylen) != 0)
        return -1;
    int avail = dlg_cpuset_count(allowed);
    /* out the size of allowed: no add below can fail */
    if (dlg_cpuset_copy(out, allowed) != 0) {
        snprintf(why, whylen, "out of memory");
        return -DLG_ENOMEM;
    }
    if (count == 0)
        return avail;
    CPU_ZERO_S(out->size, out->bits);
    if (first >= 0) {
        for (int c = first; c <= last; c++) {
            if (!dlg_cpuset_has(allowed, c)) {
                snprintf(why, whylen, "cpus = %s: CPU %d is not available to this process", text, c);
                return -1;
            }
            dlg_cpuset_add(out, c);
        }
        return count;
    }
    if (count > avail) {
        snprintf(why, whylen, "cpus = %d, but only %d CPUs are available to this process", count, avail);
        return -1;
    }
    cpu_info *info = calloc((size_t)avail, sizeof *info);
    if (!info) {
        snprintf(why, whylen, "out of memory");
        return -DLG_ENOMEM;
    }
    size_t n = 0;
    for (int c = 0; c < allowed->nbits && n < (size_t)avail; c++) {
        if (!dlg_cpuset_has(allowed, c))
            continue;
        char path[160];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
        int core = read_int_file(path, c);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        info[n++] = (cpu_info){c, cpu_node(c), read_int_file(path, 0), core};
    }
    qsort(info, n, sizeof *info, cmp_core);
    /* the node with the most allowed CPUs first, when one node can hold the cell */
    int best_node = info[0].node, best = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && info[j].node == info[i].node)
            j++;
        if ((int)(j - i) > best && (int)(j - i) >= count) {
            best = (int)(j - i);
            best_node = info[i].node;
        }
        i = j;
    }
    int taken = 0;
    /* pass 0: one CPU per physical core on the chosen node; 1: its siblings;
     * 2 and 3: the same on other nodes */
    for (int pass = 0; pass < 4 && taken < count; pass++) {
        bool same_node = pass < 2, first_sibling = pass % 2 == 0;
        for (size_t i = 0; i < n && taken < count; i++) {
            if ((info[i].node == best_node) != same_node || dlg_cpuset_has(out, info[i].cpu))
                continue;
            bool is_first = i == 0 || info[i - 1].core != info[i].core || info[i - 1].package != info[i].package ||
                            info[i - 1].node != info[i].node;
            if (first_sibling && !is_first)
                continue;
            dlg_cpuset_add(out, info[i].cpu);
            taken++;
        }
    }
    free(info);
    return taken;
}

typedef struct core_id {
    int package, core;
} core_id;

static int cmp_core_id(const void *a, const void *b)
{
    const core_id *x = a, *y = b;
    return x->package != y->package ? (x->package > y->package) - (x->package < y->package)
                                    : (x->core > y->core) - (x->core < y->core);
}

/* The package and core of each of the n CPUs in online, into ids[]: how
 * many, or 0 when one of them does not say. */
static int read_core_ids(const char *sysfs, const dlg_cpuset *online, int n, core_id *ids)
{
    int got = 0;
    for (int c = 0; c < online->nbits && got < n; c++) {
        if (!dlg_cpuset_has(online, c))
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/topology/physical_package_id", sysfs, c);
        ids[got].package = read_int_file(path, -1);
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/topology/core_id", sysfs, c);
        ids[got].core = read_int_file(path, -1);
        if (ids[got].package < 0 || ids[got].core < 0)
            return 0;
        got++;
    }
    return got;
}

int dlg_cpu_topology_read(const char *sysfs, dlg_cpu_topology *t)
{
    memset(t, 0, sizeof *t);
    char path[512];
    snprintf(path, sizeof path, "%s/devices/system/cpu/online", sysfs);
    dlg_cpuset online;
    if (dlg_cpuset_init(&online, 0) != 0)
        return -1;
    int n = read_list(path, &online);
    core_id *ids = n > 0 ? malloc((size_t)n * sizeof *ids) : NULL;
    int got = ids ? read_core_ids(sysfs, &online, n, ids) : 0;
    dlg_cpuset_fini(&online);
    /* sorted, each new package and each new (package, core) pair counts */
    if (got > 0)
        qsort(ids, (size_t)got, sizeof *ids, cmp_core_id);
    for (int i = 0; i < got; i++) {
        bool new_pkg = i == 0 || ids[i].package != ids[i - 1].package;
        t->sockets += new_pkg;
        t->cores += new_pkg || ids[i].core != ids[i - 1].core;
    }
    t->threads = got;
    free(ids);
    return got > 0 ? 0 : -1;
}
