#define _GNU_SOURCE
#include "inventory.h"

#include "git_rev.h"
#include "journal.h"
#include "topology.h"

#include <dirent.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef DLG_VERSION
#define DLG_VERSION "0.0.0"
#endif

static int proc_value(const char *path, const char *key, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[8192];
    size_t kl = strlen(key);
    int rc = -1;
    while (rc != 0 && fgets(line, sizeof line, f)) {
        char *v = strchr(line, ':');
        if (strncmp(line, key, kl) != 0 || !v || (line[kl] != ' ' && line[kl] != '\t' && line[kl] != ':'))
            continue;
        for (v++; *v == ' ' || *v == '\t'; v++)
            ;
        v[strcspn(v, "\n")] = '\0';
        snprintf(out, len, "%s", v);
        rc = 0;
    }
    fclose(f);
    return rc;
}

static void read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (f && fgets(out, (int)len, f))
        out[strcspn(out, "\n")] = '\0';
    if (f)
        fclose(f);
}

/* ISA extensions that decide which kernels run. */
static void isa_list(char *out, size_t len)
{
    static const char *const isa[] = {"avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                                      "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_int8", "asimd", "sve"};
    char *flags = malloc(16384);
    out[0] = '\0';
    if (!flags)
        return;
    flags[0] = ' ';
    if (proc_value("/proc/cpuinfo", "flags", flags + 1, 16000) != 0)
        proc_value("/proc/cpuinfo", "Features", flags + 1, 16000);
    strcat(flags, " ");
    size_t o = 0;
    for (size_t i = 0; i < sizeof isa / sizeof *isa; i++) {
        char pat[32];
        snprintf(pat, sizeof pat, " %s ", isa[i]);
        if (strstr(flags, pat) && o < len)
            o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " " : "", isa[i]);
    }
    free(flags);
}

/* "vda:hdd:256GiB nvme0n1:nvme:1.7TiB" from /sys/block. */
static void disk_list(char *out, size_t len)
{
    DIR *d = opendir("/sys/block");
    size_t o = 0;
    out[0] = '\0';
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.' || !strncmp(e->d_name, "loop", 4) || !strncmp(e->d_name, "ram", 3) ||
            !strncmp(e->d_name, "zram", 4))
            continue;
        char path[512], rot[8], size[32];
        snprintf(path, sizeof path, "/sys/block/%s/queue/rotational", e->d_name);
        read_line(path, rot, sizeof rot);
        snprintf(path, sizeof path, "/sys/block/%s/size", e->d_name);
        read_line(path, size, sizeof size);
        const char *kind = !strncmp(e->d_name, "nvme", 4) ? "nvme" : !strcmp(rot, "1") ? "rotational" : "ssd";
        if (o < len)
            o += (size_t)snprintf(out + o, len - o, "%s%s:%s:%.0fGiB", o ? " " : "", e->d_name, kind,
                                  strtod(size, NULL) * 512.0 / (1u << 30));
    }
    if (d)
        closedir(d);
}

static void add_s(dlg_wire_point *wp, const char *k, const char *v)
{
    if (!v || !*v)
        return;
    dlg_field f = {.key = k, .type = DLG_FIELD_STRING, .v.s = v};
    dlg_wire_add_field(wp, &f);
}

static void add_i(dlg_wire_point *wp, const char *k, int64_t v)
{
    dlg_field f = {.key = k, .type = DLG_FIELD_INT, .v.i = v};
    dlg_wire_add_field(wp, &f);
}

int dlg_inventory_point(dlg_wire_point *wp, const char *run_id, const char *host, int64_t time_ns)
{
    if (dlg_wire_point_init(wp, DLG_MEASUREMENT_HOST, time_ns) != 0)
        return -1;
    dlg_wire_set_tag(wp, "run_id", run_id);
    dlg_wire_set_tag(wp, "host", host);
    char buf[1024], isa[512], disks[1024], siblings[32] = "", cores[32] = "";
    if (proc_value("/proc/cpuinfo", "model name", buf, sizeof buf) == 0)
        add_s(wp, "cpu_model", buf);
    add_i(wp, "cpus_online", sysconf(_SC_NPROCESSORS_ONLN));
    proc_value("/proc/cpuinfo", "siblings", siblings, sizeof siblings);
    proc_value("/proc/cpuinfo", "cpu cores", cores, sizeof cores);
    if (atoi(cores) > 0)
        add_i(wp, "threads_per_core", atoi(siblings) / atoi(cores));
    add_i(wp, "numa_nodes", dlg_numa_nodes("/sys")); /* as sysinfo counts them */
    isa_list(isa, sizeof isa);
    add_s(wp, "isa", isa);
    if (proc_value("/proc/meminfo", "MemTotal", buf, sizeof buf) == 0)
        add_i(wp, "mem_total_bytes", strtoll(buf, NULL, 10) * 1024);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        add_s(wp, "kernel", buf);
    }
    disk_list(disks, sizeof disks);
    add_s(wp, "disks", disks);
    add_s(wp, "glibc", gnu_get_libc_version());
    add_s(wp, "version", DLG_VERSION);
    add_s(wp, "git_rev", dlg_git_rev());
    return 0;
}

void dlg_inventory_id(const dlg_wire_point *wp, char *out, size_t len)
{
    uint64_t h = 0;
    for (size_t i = 0; i < wp->point.ntags; i++) {
        dlg_journal_hash(wp->point.tags[i].key, strlen(wp->point.tags[i].key) + 1, &h);
        dlg_journal_hash(wp->point.tags[i].value, strlen(wp->point.tags[i].value) + 1, &h);
    }
    for (size_t i = 0; i < wp->point.nfields; i++) {
        const dlg_field *f = &wp->point.fields[i];
        dlg_journal_hash(f->key, strlen(f->key) + 1, &h);
        if (f->type == DLG_FIELD_STRING)
            dlg_journal_hash(f->v.s, strlen(f->v.s) + 1, &h);
        else
            dlg_journal_hash(&f->v.i, sizeof f->v.i, &h); /* add_i's fields */
    }
    snprintf(out, len, "%016llx", (unsigned long long)h);
}
