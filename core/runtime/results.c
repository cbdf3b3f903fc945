#include "results.h"

#include "git_rev.h"
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef DLG_VERSION
#define DLG_VERSION "0.0.0"
#endif

const char *dlg_failed_status(int rc) { return rc == -DLG_ENOMEM ? "oom" : "error"; }

int64_t dlg_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void dlg_format_rfc3339(int64_t ns, char *buf, size_t len)
{
    time_t s = (time_t)(ns / 1000000000ll);
    struct tm tm;
    gmtime_r(&s, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%09lldZ", base, (long long)(ns % 1000000000ll));
}

void dlg_format_ci_pct(double ci95, double mean, char *buf, size_t len)
{
    double pct = 100 * ci95 / mean;
    /* 9.96 would round to "10.0": from there on, whole percents */
    snprintf(buf, len, pct < 9.95 ? "%.1f%%" : "%.0f%%", pct);
}

static int cmp_tag(const void *a, const void *b)
{
    return strcmp(((const dlg_tag *)a)->key, ((const dlg_tag *)b)->key);
}

typedef struct builder {
    dlg_point_buf *pb;
    size_t nf;
} builder;

static void fd_(builder *b, const char *key, double v)
{
    if (!isfinite(v) || b->nf >= DLG_MAX_FIELDS)
        return;
    b->pb->fields[b->nf++] = (dlg_field){.key = key, .type = DLG_FIELD_DOUBLE, .v.d = v};
}

static void fu_(builder *b, const char *key, uint64_t v)
{
    if (b->nf < DLG_MAX_FIELDS)
        b->pb->fields[b->nf++] = (dlg_field){.key = key, .type = DLG_FIELD_UINT, .v.u = v};
}

static void fi_(builder *b, const char *key, int64_t v)
{
    if (b->nf < DLG_MAX_FIELDS)
        b->pb->fields[b->nf++] = (dlg_field){.key = key, .type = DLG_FIELD_INT, .v.i = v};
}

static void fs_(builder *b, const char *key, const char *v)
{
    if (v && *v && b->nf < DLG_MAX_FIELDS)
        b->pb->fields[b->nf++] = (dlg_field){.key = key, .type = DLG_FIELD_STRING, .v.s = v};
}

/* None where no repetition was measured: a failed cell's 0 would be
 * averaged and plotted as a rate. */
static void throughput_fields(builder *b, const dlg_summary *thr)
{
    if (thr->n == 0)
        return;
    fd_(b, "throughput", thr->mean);
    fd_(b, "throughput_ci95", thr->ci95);
    fd_(b, "throughput_stddev", thr->stddev);
}

static void latency_fields(builder *b, const dlg_histogram *h)
{
    if (dlg_hist_count(h) == 0)
        return;
    fd_(b, "latency_min_us", (double)dlg_hist_min(h) / 1e3);
    fd_(b, "latency_p50_us", dlg_hist_percentile(h, 50) / 1e3);
    fd_(b, "latency_p90_us", dlg_hist_percentile(h, 90) / 1e3);
    fd_(b, "latency_p99_us", dlg_hist_percentile(h, 99) / 1e3);
    fd_(b, "latency_p999_us", dlg_hist_percentile(h, 99.9) / 1e3);
    fd_(b, "latency_max_us", (double)dlg_hist_max(h) / 1e3);
    fd_(b, "latency_mean_us", dlg_hist_mean(h) / 1e3);
    fd_(b, "latency_stddev_us", dlg_hist_stddev(h) / 1e3);
}

static void workload_fields(builder *b, const dlg_cell_result *res)
{
    for (size_t i = 0; i < res->nwf; i++) {
        const dlg_wfield *w = &res->wf[i];
        if (w->type == DLG_FIELD_STRING)
            fs_(b, w->key, w->text);
        else if (w->count == 0)
            continue;
        else if (w->type == DLG_FIELD_DOUBLE)
            fd_(b, w->key, w->sum / w->count);
        else if (w->type == DLG_FIELD_INT) /* nearest, still an integer: a database types by first write */
            fi_(b, w->key, (int64_t)llround(w->sum / w->count));
        else if (w->type == DLG_FIELD_UINT)
            fu_(b, w->key, (uint64_t)llround(w->sum / w->count));
        else if (w->type == DLG_FIELD_BOOL && b->nf < DLG_MAX_FIELDS)
            b->pb->fields[b->nf++] = (dlg_field){.key = w->key, .type = DLG_FIELD_BOOL, .v.b = w->sum != 0};
    }
}

/* RAPL: whole packages, every process on them (runner.c, cpu_energy.c). */
static void cpu_energy_fields(builder *b, const dlg_cpu_energy *e, uint64_t items)
{
    if (!e->have)
        return;
    if (!e->pkg_lost) {
        fd_(b, "cpu_energy_j", e->pkg_j);
        if (e->seconds > 0)
            fd_(b, "cpu_power_avg_w", e->pkg_j / e->seconds);
        if (items)
            fd_(b, "cpu_energy_per_item_j", e->pkg_j / (double)items);
    }
    if (e->have_dram && !e->dram_lost)
        fd_(b, "dram_energy_j", e->dram_j);
}

/* Whether the cell waited for CPUs it was ready to run on (sched_stat.h). */
static void sched_fields(builder *b, const dlg_sched_totals *t)
{
    double wait = dlg_sched_wait_share(t), steal = dlg_sched_steal_share(t), other = dlg_sched_other_share(t);
    if (wait >= 0)
        fd_(b, "cpu_wait_share", wait);
    if (steal >= 0)
        fd_(b, "cpu_steal_share", steal);
    if (other >= 0)
        fd_(b, "cpu_other_share", other);
}

static void append_kv(char *buf, size_t len, size_t *o, const char *key, const char *val)
{
    if (*o + 1 >= len)
        return;
    *o += (size_t)snprintf(buf + *o, len - *o, "%s%s=", *o ? " " : "", key);
    for (const char *p = val; *p && *o + 2 < len; p++) {
        if (*p == ' ' || *p == '\\')
            buf[(*o)++] = '\\';
        buf[(*o)++] = *p;
    }
    if (*o >= len)
        *o = len - 1;
    buf[*o] = '\0';
}

/* Every key of the cell as it ran: core keys, then the workload's options. */
static void cell_config(const dlg_cell *cell, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < DLG_K_COUNT; i++)
        if (cell->core[i].set)
            append_kv(buf, len, &o, dlg_core_job_options[i].name, cell->core[i].text);
    for (size_t i = 0; i < cell->job->nwl; i++)
        if (cell->wl[i].set)
            append_kv(buf, len, &o, cell->job->workload->options[i].name, cell->wl[i].text);
}

/* Appends storage s's settings, each key after prefix; a storage it wraps
 * (an option flagged DLG_OPT_STORAGE naming a [storage] section) follows
 * with "OPTION." added to the prefix.  depth bounds a loop of wrappers
 * (the host refuses one when it opens them; a failed cell still writes a
 * row). */
static void spec_config(const dlg_plan *plan, const dlg_instance_spec *s, const char *prefix, int depth, char *buf,
                        size_t len, size_t *o)
{
    char key[256];
    snprintf(key, sizeof key, "%stype", prefix);
    append_kv(buf, len, o, key, s->desc->name);
    const dlg_option *opts = s->desc->options;
    for (size_t i = 0; s->vals && opts && opts[i].name; i++)
        if (s->vals[i].set && s->vals[i].text) {
            snprintf(key, sizeof key, "%s%s", prefix, opts[i].name);
            append_kv(buf, len, o, key, s->vals[i].text);
        }
    for (size_t i = 0; depth > 0 && s->vals && opts && opts[i].name; i++) {
        const dlg_instance_spec *in = (opts[i].flags & DLG_OPT_STORAGE) && s->vals[i].set && s->vals[i].text
                                          ? dlg_plan_storage(plan, s->vals[i].text)
                                          : NULL;
        if (!in || !in->desc)
            continue; /* a bare type name: its value already says all */
        char sub[256];
        snprintf(sub, sizeof sub, "%s%s.", prefix, opts[i].name);
        spec_config(plan, in, sub, depth - 1, buf, len, o);
    }
}

/* The settings of the storage the cell read through ("type=throttle
 * profile=conf/disks/x.ini ... inner.type=direct inner.depth=8"), so that
 * a report can judge an emulated disk whatever its [storage] section is
 * called, and tell apart cells over differently set inner storages.
 * False for none. */
static bool storage_config(const dlg_plan *plan, const dlg_cell *cell, char *buf, size_t len)
{
    const char *name = cell->core[DLG_K_STORAGE].set ? cell->core[DLG_K_STORAGE].text : NULL;
    const dlg_instance_spec *s = name ? dlg_plan_storage(plan, name) : NULL;
    if (!s || !s->desc)
        return false;
    size_t o = 0;
    buf[0] = '\0';
    spec_config(plan, s, "", 4, buf, len, &o);
    return true;
}

/* The shortest text that reads back as v (as the sinks write numbers):
 * 0.1, as a swept value is written, not 0.10000000000000001, which a
 * dashboard would group apart from it. */
static void double_text(double v, char *buf, size_t len)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void field_text(const dlg_field *f, char *buf, size_t len)
{
    switch (f->type) {
    case DLG_FIELD_STRING: snprintf(buf, len, "%s", f->v.s ? f->v.s : ""); break;
    case DLG_FIELD_DOUBLE: double_text(f->v.d, buf, len); break;
    case DLG_FIELD_INT: snprintf(buf, len, "%lld", (long long)f->v.i); break;
    case DLG_FIELD_UINT: snprintf(buf, len, "%llu", (unsigned long long)f->v.u); break;
    case DLG_FIELD_BOOL: snprintf(buf, len, "%s", f->v.b ? "true" : "false"); break;
    default: buf[0] = '\0';
    }
}

void dlg_result_tag_columns(const dlg_plan *plan, dlg_wire_point *wp)
{
    size_t kept = 0;
    for (size_t i = 0; i < wp->point.nfields; i++) {
        const dlg_field *f = &wp->fields[i];
        if (!dlg_plan_is_tag(plan, f->key)) {
            wp->fields[kept++] = *f;
            continue;
        }
        bool tagged = false;
        for (size_t t = 0; t < wp->point.ntags && !tagged; t++)
            tagged = strcmp(wp->tags[t].key, f->key) == 0;
        char text[64];
        field_text(f, text, sizeof text);
        if (!tagged && text[0])
            dlg_wire_set_tag(wp, f->key, text); /* copies key and text into the point */
    }
    wp->point.nfields = kept;
}

void dlg_result_point(const dlg_run *run, const dlg_cell *cell, const dlg_cell_result *res, dlg_point_buf *out)
{
    memset(out, 0, sizeof *out);
    size_t nt = 0;
    out->tags[nt++] = (dlg_tag){"run_id", run->run_id};
    out->tags[nt++] = (dlg_tag){"job", cell->job->name};
    out->tags[nt++] = (dlg_tag){"workload", cell->job->workload->name};
    out->tags[nt++] = (dlg_tag){"host", run->host};
    out->tags[nt++] = (dlg_tag){"status", res->status};
    for (size_t i = 0; i < cell->ntags && nt < DLG_MAX_TAGS; i++)
        out->tags[nt++] = cell->tags[i];
    qsort(out->tags, nt, sizeof *out->tags, cmp_tag);

    builder b = {out, 0};
    throughput_fields(&b, &res->throughput);
    fs_(&b, "unit", res->unit);
    fu_(&b, "items", res->items);
    fu_(&b, "steps", res->steps);
    fi_(&b, "repeats", res->reps);
    fi_(&b, "warmup_steps", res->warmup);
    fd_(&b, "wall_s", res->wall_s);
    fi_(&b, "ranks", res->ranks > 0 ? res->ranks : 1);
    fi_(&b, "nodes", res->nodes > 0 ? res->nodes : 1);
    latency_fields(&b, res->latency);
    if (res->busy_ns)
        fd_(&b, "data_wait_fraction", (double)res->wait_ns / (double)res->busy_ns);
    fd_(&b, "cpu_user_s", res->cpu_user_s);
    fd_(&b, "cpu_sys_s", res->cpu_sys_s);
    fu_(&b, "rss_peak_bytes", res->rss_peak);
    fu_(&b, "read_bytes", res->read_bytes);
    fu_(&b, "disk_read_bytes", res->disk_read_bytes);
    fu_(&b, "storage_read_bytes", res->storage_bytes);
    fu_(&b, "storage_ios", res->storage_ios);
    fu_(&b, "storage_write_bytes", res->storage_write_bytes);
    fu_(&b, "storage_write_ios", res->storage_write_ios);
    if (res->disk_counted) {
        fu_(&b, "emulated_disk_read_bytes", res->disk_charged_bytes);
        fd_(&b, "emulated_disk_read_ios", res->disk_charged_ios);
    }
    if (res->files_bytes && !res->files_lost)
        fu_(&b, "storage_files_bytes", res->files_bytes);
    fi_(&b, "cpus_used", res->cpus_used);
    fs_(&b, "cpu_list", res->cpu_list);
    fu_(&b, "major_faults", res->major_faults);
    fu_(&b, "ctx_switches_voluntary", res->ctx_voluntary);
    fu_(&b, "ctx_switches_involuntary", res->ctx_involuntary);
    fd_(&b, "host_iowait_fraction", res->iowait_fraction);
    /* by the time the CPUs could give (a quota of 0.5 busy is 1), not by
     * the thread count, which a fractional quota rounds; under several
     * ranks each rank's window x its own capacity, summed (a result that
     * has no such sum: the window x the cell's capacity) */
    double cap = res->cpu_capacity > 0 ? res->cpu_capacity : res->cpus_used;
    double cap_s = res->cpu_window_cap_s > 0 ? res->cpu_window_cap_s : res->cpu_window_s * cap;
    /* the CPU time over the window it was read in, not over the timed
     * steps' wall alone, which excludes the readings (a cell of a few
     * microseconds had shares of 25) */
    if (res->cpu_window_s > 0 && cap_s > 0)
        fd_(&b, "cpu_user_share", res->cpu_window_cpu_s / cap_s);
    sched_fields(&b, &res->sched);
    dlg_format_rfc3339(res->start_realtime_ns, out->start_time, sizeof out->start_time);
    fs_(&b, "start_time", out->start_time);
    fs_(&b, "version", DLG_VERSION);
    fs_(&b, "git_rev", dlg_git_rev());
    if (res->gpu_samples > 0 && res->gpu_seconds > 0) {
        fs_(&b, "gpu_name", res->gpu_name);
        fi_(&b, "gpus", res->gpus > 0 ? res->gpus : 1);
        fd_(&b, "gpu_util", res->gpu_util_sum_s / res->gpu_seconds);
        fu_(&b, "gpu_mem_peak_bytes", res->gpu_mem_peak);
        fd_(&b, "power_avg_w", res->gpu_power_sum_s / res->gpu_seconds);
        fd_(&b, "energy_j", res->gpu_energy_j);
        if (res->items)
            fd_(&b, "energy_per_item_j", res->gpu_energy_j / (double)res->items);
    }
    cpu_energy_fields(&b, &res->cpu_energy, res->items);
    fs_(&b, "error", res->error);
    cell_config(cell, out->config, sizeof out->config);
    fs_(&b, "config", out->config);
    if (storage_config(run->plan, cell, out->storage_config, sizeof out->storage_config))
        fs_(&b, "storage_config", out->storage_config);
    workload_fields(&b, res);

    out->point = (dlg_point){DLG_MEASUREMENT_RESULT, out->tags, nt, out->fields, b.nf, res->start_realtime_ns};
}
