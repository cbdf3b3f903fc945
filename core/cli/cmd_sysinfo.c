/* dlgauge sysinfo: the host inventory that every result refers to. */
#define _GNU_SOURCE
#include "cli.h"

#include "affinity.h"
#include "cgroup.h"
#include "comm.h"
#include "cpu_energy.h"
#include "cuda/cuda_module.h"
#include "git_rev.h"
#include "gpu_nvml.h"
#include "inventory.h"
#include "proc_file.h"
#include "topology.h"

#include <stdbool.h>
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

static void cpu_info(void)
{
    char model[256] = "unknown", flags[8192] = "", buf[64];
    dlg_proc_value("/proc/cpuinfo", "model name", model, sizeof model);
    dlg_proc_value("/proc/cpuinfo", "flags", flags, sizeof flags);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    printf("cpu:        %s\n", model);
    printf("cpus:       %ld online, %d available to this process\n", online, dlg_cpus_available());
    if (dlg_proc_value("/proc/cpuinfo", "cpu MHz", buf, sizeof buf) == 0)
        printf("clock:      %s MHz (current)\n", buf);
    static const char *const isa[] = {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                                      "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_int8"};
    printf("isa:       ");
    char padded[8200];
    snprintf(padded, sizeof padded, " %s ", flags);
    for (size_t i = 0; i < sizeof isa / sizeof *isa; i++) {
        char pat[40];
        snprintf(pat, sizeof pat, " %s ", isa[i]);
        if (strstr(padded, pat))
            printf(" %s", isa[i]);
    }
    printf("\n");
}

/* An integer from a sysfs file named by fmt and cpu; -1 if unreadable. */
static int sys_int(const char *fmt, int cpu)
{
    char path[128], text[32];
    snprintf(path, sizeof path, fmt, cpu);
    dlg_file_line(path, text, sizeof text);
    char *end;
    long v = strtol(text, &end, 10);
    return end != text && v >= 0 ? (int)v : -1;
}

/* Sockets, physical cores, hardware threads and NUMA nodes of the online
 * CPUs: whether a vCPU count is cores or SMT threads changes what it buys. */
static void topology_info(void)
{
    dlg_cpu_topology t;
    if (dlg_cpu_topology_read("/sys", &t) != 0) {
        printf("topology:   unknown (no sysfs CPU topology)\n");
        return;
    }
    int nodes = dlg_numa_nodes("/sys");
    printf("topology:   %d socket%s, %d core%s, %d thread%s (%s), %d NUMA node%s\n", t.sockets,
           t.sockets == 1 ? "" : "s", t.cores, t.cores == 1 ? "" : "s", t.threads, t.threads == 1 ? "" : "s",
           t.threads > t.cores ? "SMT on" : "no SMT", nodes, nodes == 1 ? "" : "s");
}

/* How many ids a kernel list such as "0-3,8,10-11" names (7), counted
 * without a set that would need memory; -1 if it is not such a list. */
static int list_count(const char *list)
{
    int n = 0;
    for (const char *p = list; *p;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0)
            return -1;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a)
                return -1;
        }
        n += (int)(b - a + 1);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n > 0 ? n : -1;
}

/* " per CPU", " per 2 CPUs": how many CPUs share cache index i of cpu0
 * (sysfs sizes are one cache's; lscpu prints the sum over instances). */
static void cache_sharing(int i, char *out, size_t len)
{
    char path[96], list[256];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
    dlg_file_line(path, list, sizeof list);
    int n = list_count(list);
    if (n == 1)
        snprintf(out, len, " per CPU");
    else if (n > 1)
        snprintf(out, len, " per %d CPUs", n);
    else
        out[0] = '\0';
}

/* cpu0's caches from sysfs (lscpu's source): "L1d 32 KiB per CPU, ...,
 * L3 32 MiB per 16 CPUs". */
static void cache_info(void)
{
    printf("caches:    ");
    int shown = 0;
    for (int i = 0; i < 16; i++) {
        int level = sys_int("/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (level < 0)
            break;
        char path[96], type[32], size[32], per[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        dlg_file_line(path, type, sizeof type);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        dlg_file_line(path, size, sizeof size);
        cache_sharing(i, per, sizeof per);
        const char *t = !strcmp(type, "Data") ? "d" : !strcmp(type, "Instruction") ? "i" : "";
        char *unit;
        long kib = strtol(size, &unit, 10);
        if (unit == size || strcmp(unit, "K") != 0) /* not "NNNK": as sysfs wrote it */
            printf("%s L%d%s %s%s", shown++ ? "," : "", level, t, size[0] ? size : "?", per);
        else if (kib % 1024 == 0)
            printf("%s L%d%s %ld MiB%s", shown++ ? "," : "", level, t, kib / 1024, per);
        else
            printf("%s L%d%s %ld KiB%s", shown++ ? "," : "", level, t, kib, per);
    }
    printf("%s\n", shown ? "" : " unknown (no sysfs cache information)");
}

/* "24684096 kB" -> "23.5 GiB"; anything else as /proc wrote it. */
static void kib_text(char *v, size_t len)
{
    char *end;
    double kib = strtod(v, &end);
    if (end != v && strncmp(end, " kB", 3) == 0)
        snprintf(v, len, "%.1f GiB", kib / (1024.0 * 1024.0));
}

static void memory_info(void)
{
    char total[64] = "?", avail[64] = "?";
    dlg_proc_value("/proc/meminfo", "MemTotal", total, sizeof total);
    dlg_proc_value("/proc/meminfo", "MemAvailable", avail, sizeof avail);
    kib_text(total, sizeof total);
    kib_text(avail, sizeof avail);
    printf("memory:     %s total, %s available\n", total, avail);
}

/* The limits dlgauge itself runs under (a container's cpu.max or cfs
 * quota, its memory.max): cells cannot have more than these. */
static void limits_info(void)
{
    dlg_cgroup_limits env;
    dlg_cgroup_env_limits(NULL, &env);
    if (env.version == 0) {
        printf("limits:     unknown (no cgroup file system mounted)\n");
        return;
    }
    printf("limits:     cgroup v%d: ", env.version);
    if (env.cpu_quota > 0)
        printf("cpu quota %.2f CPUs (%s)", env.cpu_quota, env.cpu_where);
    else
        printf("no cpu quota");
    if (env.memory_bytes > 0)
        printf(", memory %.1f GiB (%s)\n", (double)env.memory_bytes / (1ull << 30), env.memory_where);
    else
        printf(", no memory limit\n");
}

/* The RAPL zones a run reads cpu_energy_j (and dram_energy_j) from, their
 * counters' range, or why there are none. */
static void cpu_energy_info(void)
{
    dlg_rapl *r;
    char why[1024];
    int rc = dlg_rapl_open(&r, NULL, why, sizeof why);
    if (!r) {
        printf("cpu energy: none (%s)\n", why);
        return;
    }
    printf("cpu energy: RAPL, %s\n", r->root);
    for (size_t i = 0; i < r->n; i++)
        printf("  %-14s %-10s range %.1f J\n", r->z[i].dir, r->z[i].name, (double)r->z[i].range_uj / 1e6);
    if (rc != 0)
        printf("  not readable: %s\n", why);
    free(r);
}

/* One device: NVML's view (memory, PCIe, NVLink), CUDA's (SMs, compute
 * capability: cuda-probe.so) and the peak rates % of peak uses. */
static void gpu_device(dlg_nvml *nv, int i)
{
    dlg_gpu_info g;
    if (dlg_nvml_info(nv, i, &g) < 0) {
        printf("  gpu%d:     (NVML cannot open it)\n", i);
        return;
    }
    printf("  gpu%d:     %s, %.1f GiB\n", i, g.name, (double)g.mem_total / (1ull << 30));
    dlg_cuda_props p;
    char why[512];
    if (dlg_cuda_device_props(i, &p, why, sizeof why) == 0)
        printf("    cuda:   %d SMs, compute capability %d.%d, %.1f GiB\n", p.sm_count,
               p.cc_major, p.cc_minor, (double)p.mem_bytes / (1ull << 30));
    else
        printf("    cuda:   not visible to CUDA (%s)\n", why);
    if (g.pcie[0] > 0)
        printf("    pcie:   gen %d x%d (max gen %d x%d)\n", g.pcie[0], g.pcie[1], g.pcie[2],
               g.pcie[3]);
    if (g.nvlinks >= 0)
        printf("    nvlink: %d links active\n", g.nvlinks);
    const dlg_gpu_peak *pk = dlg_gpu_peak_find(g.name); /* for % of peak */
    if (pk)
        printf("    peak:   fp32 %.1f, tf32 %.1f, fp16/bf16 %.1f TFLOP/s (dense, datasheet)\n",
               pk->fp32, pk->tf32, pk->fp16);
    else
        printf("    peak:   unknown model (no %% of peak)\n");
}

/* NVML through dlopen (no link-time dependency on the NVIDIA driver;
 * $DLGAUGE_NVML_LIB names another library, as tests do), then the CUDA
 * libraries dlgauge's backend module loaded. */
static void gpu_info(void)
{
    dlg_nvml *nv;
    char why[512], line[256];
    if (dlg_nvml_open(&nv, getenv("DLGAUGE_NVML_LIB"), why, sizeof why) < 0) {
        printf("gpus:       none (%s)\n", why);
    } else {
        dlg_nvml_driver(nv, line, sizeof line);
        int n = dlg_nvml_count(nv);
        printf("gpus:       %d (driver %s)\n", n, line);
        for (int i = 0; i < n; i++)
            gpu_device(nv, i);
        dlg_nvml_close(nv);
    }
    if (dlg_cuda_versions(line, sizeof line, why, sizeof why) == 0)
        printf("cuda:       %s\n", line);
    else
        printf("cuda:       no backend (%s)\n", why);
}

/* Whether sysinfo lists a mount: a disk's filesystem, a network or
 * cluster one, overlay (containers), and tmpfs only at /tmp or /dev/shm
 * (where benchmark data may sit in memory). */
static bool listed_fs(const dlg_mount *m)
{
    static const char *const real_fs[] = {"ext4", "xfs", "btrfs", "zfs", "ext3", "f2fs", "nfs", "nfs4",
                                          "overlay", "lustre", "gpfs", "beegfs", "fuse.sshfs"};
    if (!strcmp(m->type, "tmpfs"))
        return !strcmp(m->dir, "/tmp") || !strcmp(m->dir, "/dev/shm");
    for (size_t i = 0; i < sizeof real_fs / sizeof *real_fs; i++)
        if (!strcmp(m->type, real_fs[i]))
            return true;
    return false;
}

static void disk_info(void)
{
    dlg_disk *d;
    int n = dlg_disks_read("/sys", &d);
    printf("disks:\n");
    for (int i = 0; i < n; i++)
        printf("  %-10s %-12s %8.1f GiB  %s\n", d[i].name, strcmp(d[i].kind, "ssd") ? d[i].kind : "ssd/virtual",
               d[i].gib, d[i].model);
    free(d);
    dlg_mount *m;
    n = dlg_mounts_read("/proc/self/mounts", &m);
    printf("filesystems:\n");
    for (int i = 0; i < n; i++) {
        struct statvfs sv;
        if (!listed_fs(&m[i]) || statvfs(m[i].dir, &sv) != 0)
            continue;
        printf("  %-24s %-8s %8.1f GiB, %8.1f GiB free  (%s)\n", m[i].dir, m[i].type,
               (double)sv.f_blocks * sv.f_frsize / (1u << 30), (double)sv.f_bavail * sv.f_frsize / (1u << 30),
               m[i].source);
    }
    dlg_mounts_free(m, n);
}

/* The run's ranks as `dlgauge run` would open them, without opening them
 * (MPI_Init is not cheap): the launcher's variable says this is one. */
static void ranks_info(void)
{
    char lib[256], var[128];
    dlg_comm_library(lib, sizeof lib);
    if (dlg_comm_launched(var, sizeof var))
        printf("ranks:      launched (%s): `dlgauge run` opens the ranks with %s\n", var,
               lib[0] ? lib : "no MPI (built without it: run refuses to start)");
    else if (lib[0])
        printf("ranks:      1 (no launcher); mpirun -np N starts N with %s\n", lib);
    else
        printf("ranks:      1 (built without MPI)\n");
}

/* A section of the inventory.  Those read from /proc and /sys answer
 * "unknown" or leave a line out when a read fails, so an allocation that
 * failed inside one would pass for a fact about the host.  Single values
 * are read without allocating (proc_file.h); what still allocates (a
 * topology's CPU list, the disk and mount tables, RAPL's zones) leaves
 * ENOMEM in errno, which nothing else they call sets, and no later read
 * of the section resets (the suite's sysinfo sweep fails each allocation
 * in turn: tests/e2e/oom_sweep_tools.sh): name the section, so the
 * listing is known to be short of something, and exit 1.  Not for the
 * sections that load NVIDIA's or MPI's libraries (check_errno false): what
 * those leave in errno is theirs (CUDA reserves address space by trying),
 * and they say their own failures in the line. */
static bool section_read(const char *what, void (*print)(void), bool check_errno)
{
    errno = 0;
    print();
    if (!check_errno || errno != ENOMEM)
        return true;
    fprintf(stderr, "dlgauge: sysinfo: out of memory reading the %s: what it printed of them is incomplete\n", what);
    return false;
}

static void host_info(void)
{
    struct utsname u;
    char host[256] = "?";
    gethostname(host, sizeof host);
    printf("host:       %s\n", host);
    if (uname(&u) == 0)
        printf("kernel:     %s %s %s\n", u.sysname, u.release, u.machine);
}

static void software_info(void)
{
    printf("software:   dlgauge %s (git %s), glibc %s\n", DLG_VERSION, dlg_git_rev(), gnu_get_libc_version());
    printf("built with: %s\n", DLG_LIBS_BUILT_WITH);
}

int dlg_cmd_sysinfo(const dlg_cli *cli, int argc, char **argv)
{
    (void)cli;
    (void)argc;
    (void)argv;
    static const struct {
        const char *what;
        void (*print)(void);
        bool check_errno;
    } sections[] = {
        {"host name and kernel", host_info, true},
        {"CPU model and flags", cpu_info, true},
        {"CPU topology", topology_info, true},
        {"CPU caches", cache_info, true},
        {"memory sizes", memory_info, true},
        {"cgroup limits", limits_info, true},
        {"RAPL energy zones", cpu_energy_info, true},
        {"GPUs", gpu_info, false},
        {"disks and file systems", disk_info, true},
        {"MPI ranks", ranks_info, false},
        {"software versions", software_info, true},
    };
    bool whole = true;
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++)
        whole &= section_read(sections[i].what, sections[i].print, sections[i].check_errno);
    return whole ? DLG_EXIT_OK : DLG_EXIT_FAILED;
}
