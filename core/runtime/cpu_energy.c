/* CPU package energy from the Linux powercap sysfs (RAPL).
 *
 * What this relies on, and where it was checked (docs.kernel.org
 * power/powercap/powercap.html and Documentation/ABI/testing/
 * sysfs-class-powercap for the tree; Intel's INTEL-SA-00389 / CVE-2020-8694
 * advisory and the runc advisory GHSA-jq35-85cj-fj4p for root-only reads;
 * RAPL domain descriptions for what a package includes):
 * - /sys/class/powercap holds one entry per power zone, named after its
 *   control type and position: intel-rapl:0 is a top-level zone, and
 *   intel-rapl:0:1 its subzone; each has `name`, `energy_uj` (a counter in
 *   microjoules) and `max_energy_range_uj` (the counter's range: past it,
 *   it starts again from 0).
 * - Top-level intel-rapl zones named package-N are the sockets (cores,
 *   uncore and LLC); subzones are core, uncore and dram.  core and uncore
 *   are parts of the package and are not added again; dram is not part of
 *   it (RAPL's DRAM domain is beside the package's) and is reported apart,
 *   as dram_energy_j.  Other top-level zones (psys: the whole platform,
 *   intel-rapl-mmio: the package again through MMIO) are ignored: summing
 *   them would count the package twice.
 * - energy_uj is readable by root only since Linux 5.10 (the PLATYPUS
 *   side-channel fix, CVE-2020-8694); before, by anyone.
 * - AMD Zen packages are said to appear through the same intel-rapl
 *   zones since Linux 5.8 / 5.11, without a dram subzone (not confirmed by
 *   the documentation searched; the zone names above are what is read).
 * The counter's step is RAPL's energy unit (~61 uJ on most Intel parts):
 * a wrap is taken as range - last + now, which is exact to one unit.
 * Whatever cannot be read gives no field and one note, never a failure. */
#define _GNU_SOURCE
#include "cpu_energy.h"
#include "proc_file.h"

#include "ticker.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *dlg_powercap_root(void)
{
    const char *e = getenv("DLG_POWERCAP_ROOT");
    return e && *e ? e : "/sys/class/powercap";
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The first line of root/dir/file into buf; -errno on failure. */
static int read_attr(const char *root, const char *dir, const char *file, char *buf, size_t len)
{
    char path[640];
    snprintf(path, sizeof path, "%s/%s/%s", root, dir, file);
    return dlg_file_line(path, buf, len) == 0 ? 0 : -errno;
}

static int read_u64(const char *root, const char *dir, const char *file, uint64_t *v)
{
    char buf[64], *end;
    int rc = read_attr(root, dir, file, buf, sizeof buf);
    if (rc < 0)
        return rc;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 10);
    if (end == buf || *end || errno)
        return -EINVAL;
    *v = x;
    return 0;
}

/* intel-rapl:N (depth 1) or intel-rapl:N:M (depth 2); 0 for anything else. */
static int zone_depth(const char *name)
{
    if (strncmp(name, "intel-rapl:", 11) != 0)
        return 0;
    int depth = 0;
    for (const char *p = name + 10; *p == ':'; depth++) {
        const char *d = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p == d || (*p && *p != ':'))
            return 0;
    }
    return depth <= 2 ? depth : 0;
}

static void add_zone(dlg_rapl *r, const char *dir)
{
    int depth = zone_depth(dir);
    char name[32];
    if (!depth || r->n >= DLG_RAPL_MAX_ZONES || strlen(dir) >= sizeof r->z[0].dir ||
        read_attr(r->root, dir, "name", name, sizeof name) < 0)
        return;
    bool package = depth == 1 && strncmp(name, "package-", 8) == 0;
    bool dram = depth == 2 && strcmp(name, "dram") == 0;
    if (!package && !dram)
        return;
    dlg_rapl_zone *z = &r->z[r->n++];
    memset(z, 0, sizeof *z);
    snprintf(z->dir, sizeof z->dir, "%s", dir);
    snprintf(z->name, sizeof z->name, "%s", name);
    z->dram = dram;
    if (read_u64(r->root, dir, "max_energy_range_uj", &z->range_uj) < 0)
        z->range_uj = 0;
}

static int cmp_zone(const void *a, const void *b)
{
    return strcmp(((const dlg_rapl_zone *)a)->dir, ((const dlg_rapl_zone *)b)->dir);
}

/* A dram subzone of a package not found (or not listed) is dropped: its
 * energy would be reported without its package's. */
static void drop_orphans(dlg_rapl *r)
{
    size_t kept = 0;
    for (size_t i = 0; i < r->n; i++) {
        bool keep = !r->z[i].dram;
        for (size_t j = 0; j < r->n && !keep; j++) {
            size_t pl = strlen(r->z[j].dir);
            keep = !r->z[j].dram && strncmp(r->z[i].dir, r->z[j].dir, pl) == 0 && r->z[i].dir[pl] == ':';
        }
        if (keep)
            r->z[kept++] = r->z[i];
    }
    r->n = kept;
}

static const char *errno_hint(int err)
{
    if (err == EACCES || err == EPERM)
        return " (root only since Linux 5.10)";
    if (err == ENOENT)
        return " (no RAPL here: a virtual machine, a container masking it, or not x86)";
    return "";
}

/* Every counter read once (last_uj set, primed); -1 with why at the first
 * that cannot be: a sum missing one package would understate the energy. */
static int first_read(dlg_rapl *r, char *why, size_t len)
{
    for (size_t i = 0; i < r->n; i++) {
        int rc = read_u64(r->root, r->z[i].dir, "energy_uj", &r->z[i].last_uj);
        if (rc < 0) {
            snprintf(why, len, "%s/%s/energy_uj: %s%s", r->root, r->z[i].dir,
                     rc == -EINVAL ? "not a number" : strerror(-rc), errno_hint(-rc));
            return -1;
        }
        r->z[i].primed = true;
    }
    return 0;
}

int dlg_rapl_open(dlg_rapl **out, const char *root, char *why, size_t len)
{
    *out = NULL;
    why[0] = '\0';
    if (!root)
        root = dlg_powercap_root();
    DIR *d = opendir(root);
    if (!d) {
        int err = errno;
        snprintf(why, len, "%s: %s%s", root, strerror(err), errno_hint(err));
        return -1;
    }
    dlg_rapl *r = calloc(1, sizeof *r);
    if (!r) {
        closedir(d);
        snprintf(why, len, "out of memory");
        return -1;
    }
    snprintf(r->root, sizeof r->root, "%s", root);
    for (struct dirent *e; (e = readdir(d));)
        add_zone(r, e->d_name);
    closedir(d);
    drop_orphans(r);
    qsort(r->z, r->n, sizeof *r->z, cmp_zone);
    bool package = false;
    for (size_t i = 0; i < r->n; i++)
        package |= !r->z[i].dram;
    if (!package) {
        snprintf(why, len, "%s: no package zone (intel-rapl:N named package-N)", root);
        free(r);
        return -1;
    }
    *out = r;
    return first_read(r, why, len);
}

/* Advances zone z to its counter's value now; false where it cannot be
 * read (its energy since the last reading is then not yet counted). */
static bool sample_zone(const dlg_rapl *r, dlg_rapl_zone *z)
{
    uint64_t now;
    if (read_u64(r->root, z->dir, "energy_uj", &now) < 0)
        return false;
    if (!z->primed) /* last_uj predates the measurement */
        z->lost = true;
    else if (now >= z->last_uj)
        z->total_uj += now - z->last_uj;
    else if (z->range_uj >= z->last_uj) /* wrapped past its range */
        z->total_uj += z->range_uj - z->last_uj + now;
    else /* went back without a known range: the interval is lost */
        z->lost = true;
    z->last_uj = now;
    z->primed = true;
    return true;
}

void dlg_rapl_sample(dlg_rapl *r)
{
    for (size_t i = 0; i < r->n; i++)
        sample_zone(r, &r->z[i]); /* unreadable: the next reading covers this interval */
}

int dlg_rapl_period_ms(const dlg_rapl *r)
{
    uint64_t lo = UINT64_MAX;
    for (size_t i = 0; i < r->n; i++)
        if (r->z[i].range_uj && r->z[i].range_uj < lo)
            lo = r->z[i].range_uj;
    /* range / 1 kW / 2, in ms: uJ / (1e9 uJ/s) / 2 * 1e3 */
    uint64_t ms = lo / 2000000u;
    return ms < 10 ? 10 : ms > 1000 ? 1000 : (int)ms;
}

static void tick(void *arg) { dlg_rapl_sample(arg); }

void dlg_rapl_begin(dlg_rapl *r)
{
    for (size_t i = 0; i < r->n; i++) {
        dlg_rapl_zone *z = &r->z[i];
        /* a counter unreadable now must not count from an older reading */
        z->primed = read_u64(r->root, z->dir, "energy_uj", &z->last_uj) == 0;
        z->lost = false;
        z->total_uj = 0;
    }
    r->t0 = mono_s();
    /* no thread: the measurement only misses wraps between begin and end */
    if (dlg_ticker_start(&r->ticker, dlg_rapl_period_ms(r), tick, r) != 0)
        r->ticker = NULL;
}

void dlg_rapl_end(dlg_rapl *r, dlg_cpu_energy *acc)
{
    dlg_ticker_stop(r->ticker);
    r->ticker = NULL;
    acc->seconds += mono_s() - r->t0;
    acc->have = true;
    for (size_t i = 0; i < r->n; i++) {
        dlg_rapl_zone *z = &r->z[i];
        /* no later reading covers the end: unreadable now, the energy since
         * the last tick (all of it without a tick) is missing */
        bool lost = !sample_zone(r, z) || z->lost || !z->primed;
        double j = (double)z->total_uj / 1e6;
        if (z->dram) {
            acc->dram_j += j;
            acc->have_dram = true;
            acc->dram_lost |= lost;
        } else {
            acc->pkg_j += j;
            acc->pkg_lost |= lost;
        }
    }
}
