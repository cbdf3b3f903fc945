#define _GNU_SOURCE
#include "inventory.h"

#include "git_rev.h"
#include "journal.h"
#include "proc_file.h"
#include "sinkset.h"
#include "topology.h"

#include <dirent.h>
#include <gnu/libc-version.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef DLG_VERSION
#define DLG_VERSION "0.0.0"
#endif

/* ISA extensions that decide which kernels run. */
static void isa_list(char *out, size_t len)
{
    static const char *const isa[] = {"avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                                      "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_int8", "asimd", "sve"};
    char flags[16384];
    out[0] = '\0';
    flags[0] = ' ';
    if (dlg_proc_value("/proc/cpuinfo", "flags", flags + 1, 16000) != 0)
        dlg_proc_value("/proc/cpuinfo", "Features", flags + 1, 16000);
    strcat(flags, " ");
    size_t o = 0;
    for (size_t i = 0; i < sizeof isa / sizeof *isa; i++) {
        char pat[32];
        snprintf(pat, sizeof pat, " %s ", isa[i]);
        if (strstr(flags, pat) && o < len)
            o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " " : "", isa[i]);
    }
}

static bool is_disk(const char *name)
{
    return name[0] != '.' && strncmp(name, "loop", 4) != 0 && strncmp(name, "ram", 3) != 0 &&
           strncmp(name, "zram", 4) != 0;
}

static void read_disk(const char *sys_root, const char *name, dlg_disk *d)
{
    char path[4096], rot[8], size[32];
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(path, sizeof path, "%s/block/%s/queue/rotational", sys_root, name);
    dlg_file_line(path, rot, sizeof rot);
    snprintf(path, sizeof path, "%s/block/%s/size", sys_root, name);
    dlg_file_line(path, size, sizeof size);
    snprintf(path, sizeof path, "%s/block/%s/device/model", sys_root, name);
    dlg_file_line(path, d->model, sizeof d->model);
    d->kind = !strncmp(name, "nvme", 4) ? "nvme" : !strcmp(rot, "1") ? "rotational" : "ssd";
    d->gib = strtod(size, NULL) * 512.0 / (1u << 30); /* sysfs counts 512-byte sectors */
}

static int disk_cmp(const void *a, const void *b)
{
    return strcmp(((const dlg_disk *)a)->name, ((const dlg_disk *)b)->name);
}

int dlg_disks_read(const char *sys_root, dlg_disk **out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/block", sys_root);
    DIR *d = opendir(path);
    dlg_disk *v = NULL;
    int n = 0, cap = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!is_disk(e->d_name))
            continue;
        if (n == cap) {
            dlg_disk *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *v);
            if (!nv) {
                n = -1;
                break;
            }
            v = nv;
        }
        read_disk(sys_root, e->d_name, &v[n++]);
    }
    if (d)
        closedir(d);
    if (n < 0) {
        free(v);
        v = NULL;
    } else if (n > 1) {
        qsort(v, (size_t)n, sizeof *v, disk_cmp);
    }
    *out = v;
    return n;
}

/* "vda:hdd:256GiB nvme0n1:nvme:1.7TiB" from /sys/block. */
static void disk_list(char *out, size_t len)
{
    dlg_disk *v;
    int n = dlg_disks_read("/sys", &v);
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(out + o, len - o, "%s%s:%s:%.0fGiB", o ? " " : "", v[i].name, v[i].kind, v[i].gib);
    free(v);
}

/* Index order of mounts by folder, then by table order. */
typedef struct mount_key {
    const char *dir;
    int idx;
} mount_key;

static int mount_key_cmp(const void *a, const void *b)
{
    const mount_key *x = a, *y = b;
    int c = strcmp(x->dir, y->dir);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static void mount_clear(dlg_mount *m)
{
    free(m->dir);
    free(m->type);
    free(m->source);
    *m = (dlg_mount){0};
}

void dlg_mounts_free(dlg_mount *m, int n)
{
    for (int i = 0; m && i < n; i++)
        mount_clear(&m[i]);
    free(m);
}

/* Drops from m every mount that a later one at the same folder covers
 * (the table lists mounts in the order they were made); returns the count
 * left, or -1 if there is no memory. */
static int keep_top_mounts(dlg_mount *m, int n)
{
    mount_key *k = malloc((size_t)n * sizeof *k);
    if (!k)
        return -1;
    for (int i = 0; i < n; i++)
        k[i] = (mount_key){m[i].dir, i};
    qsort(k, (size_t)n, sizeof *k, mount_key_cmp);
    for (int i = 0; i + 1 < n; i++)
        if (strcmp(k[i].dir, k[i + 1].dir) == 0)
            mount_clear(&m[k[i].idx]); /* k[i].dir is not read again */
    free(k);
    int o = 0;
    for (int i = 0; i < n; i++)
        if (m[i].dir)
            m[o++] = m[i];
    return o;
}

int dlg_mounts_read(const char *mounts, dlg_mount **out)
{
    *out = NULL;
    FILE *f = setmntent(mounts, "r");
    if (!f)
        return -1;
    dlg_mount *v = NULL;
    int n = 0, cap = 0;
    bool oom = false;
    for (struct mntent *me; !oom && (me = getmntent(f));) {
        if (n == cap) {
            dlg_mount *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 32) * sizeof *v);
            if (!(oom = !nv))
                v = nv;
        }
        if (oom)
            break;
        dlg_mount *m = &v[n++];
        *m = (dlg_mount){strdup(me->mnt_dir), strdup(me->mnt_type), strdup(me->mnt_fsname)};
        oom = !m->dir || !m->type || !m->source;
    }
    endmntent(f);
    int kept = oom ? -1 : n > 0 ? keep_top_mounts(v, n) : 0;
    if (kept < 0)
        dlg_mounts_free(v, n);
    else
        *out = v;
    return kept;
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
    if (dlg_proc_value("/proc/cpuinfo", "model name", buf, sizeof buf) == 0)
        add_s(wp, "cpu_model", buf);
    add_i(wp, "cpus_online", sysconf(_SC_NPROCESSORS_ONLN));
    dlg_proc_value("/proc/cpuinfo", "siblings", siblings, sizeof siblings);
    dlg_proc_value("/proc/cpuinfo", "cpu cores", cores, sizeof cores);
    if (atoi(cores) > 0)
        add_i(wp, "threads_per_core", atoi(siblings) / atoi(cores));
    add_i(wp, "numa_nodes", dlg_numa_nodes("/sys")); /* as sysinfo counts them */
    isa_list(isa, sizeof isa);
    add_s(wp, "isa", isa);
    if (dlg_proc_value("/proc/meminfo", "MemTotal", buf, sizeof buf) == 0)
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

int dlg_inventory_send(dlg_sinkset *ss, dlg_journal *jn, const dlg_wire_point *wp, const char *id)
{
    char err[1200];
    int failed = 0;
    if (dlg_journal_has_inventory(jn, id))
        return 0;
    /* the interrupted run's point, at its time: a sink that took it just
     * before dlgauge died, unrecorded, skips it (write_again) */
    dlg_point p = wp->point;
    bool again = dlg_journal_inventory_time(jn, id, &p.time_ns);
    if (!again)
        (void)dlg_journal_record_inventory_time(jn, id, p.time_ns, err, sizeof err);
    for (size_t i = 0; i < ss->n; i++) {
        const char *name = ss->sinks[i].spec->name;
        if (!ss->sinks[i].state || dlg_journal_inventory_sent_to(jn, id, name))
            continue;
        if ((again ? dlg_sinkset_write_again_one(ss, i, &p, 1) : dlg_sinkset_write_one(ss, i, &p, 1)) != 0)
            failed++;
        else if (ss->n > 1) /* with one sink, `inventory` below says it */
            (void)dlg_journal_record_inventory_sent(jn, id, name, err, sizeof err);
    }
    if (failed == 0)
        (void)dlg_journal_record_inventory(jn, id, err, sizeof err);
    return failed;
}
