#include "progress.h"

#include "comm.h"
#include "metrics.h"
#include "runner_ranks.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define INTERVAL_NS 1000000000ull

void dlg_progress_begin(dlg_progress *p, dlg_run *run, const dlg_cell *cell, int rep, int reps,
                        uint64_t start_ns, uint64_t iterations, uint64_t duration_ns)
{
    memset(p, 0, sizeof *p);
    p->run = run;
    p->cell = cell;
    p->rep = rep;
    p->reps = reps;
    p->start_ns = p->last_ns = start_ns;
    p->iterations = iterations;
    p->duration_ns = duration_ns;
    p->items_scale = 1;
}

double dlg_progress_items_scale(dlg_run *run, uint64_t own_items)
{
    int ranks = dlg_comm_size(run->comm);
    if (ranks <= 1)
        return 1;
    uint64_t job = own_items, wall_ns = 0;
    bool stopped = false;
    dlg_ranks_rep_totals(run, &job, &wall_ns, &stopped); /* items summed */
    return own_items > 0 && job > 0 ? (double)job / (double)own_items : ranks;
}

static void emit_point(dlg_progress *p, double rate, double item_rate, uint64_t steps, double elapsed)
{
    char cell[32];
    snprintf(cell, sizeof cell, "%zu", p->cell->index);
    dlg_tag tags[] = {
        {"cell", cell},
        {"host", p->run->host},
        {"job", p->cell->job->name},
        {"run_id", p->run->run_id},
        {"workload", p->cell->job->workload->name},
    };
    dlg_field fields[5];
    fields[0] = (dlg_field){.key = "step_rate", .type = DLG_FIELD_DOUBLE, .v.d = rate};
    fields[1] = (dlg_field){.key = "items_per_s", .type = DLG_FIELD_DOUBLE, .v.d = item_rate};
    fields[2] = (dlg_field){.key = "steps", .type = DLG_FIELD_UINT, .v.u = steps};
    fields[3] = (dlg_field){.key = "elapsed_s", .type = DLG_FIELD_DOUBLE, .v.d = elapsed};
    fields[4] = (dlg_field){.key = "repetition", .type = DLG_FIELD_INT, .v.i = p->rep};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    dlg_point pt = {DLG_MEASUREMENT_PROGRESS, tags, 5, fields, 5,
                    (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec};
    p->run->emit(p->run, &pt);
}

static void draw_line(dlg_progress *p, double rate, uint64_t steps, double elapsed)
{
    double left;
    if (p->iterations)
        left = rate > 0 ? (double)(p->iterations > steps ? p->iterations - steps : 0) / rate : 0;
    else
        left = (double)p->duration_ns / 1e9 - elapsed;
    if (left < 0)
        left = 0;
    left += (double)(p->reps - p->rep - 1) * (p->iterations && rate > 0 ? (double)p->iterations / rate
                                                                       : (double)p->duration_ns / 1e9);
    fprintf(stderr, "\r\033[K[%zu/%zu] %s rep %d/%d: %llu steps, %.1f steps/s, ETA %.0fs",
            p->run->cell_no, p->run->plan->total_cells, p->cell->job->name, p->rep + 1, p->reps,
            (unsigned long long)steps, rate, left);
    p->drawn = true;
}

void dlg_progress_tick(dlg_progress *p, uint64_t now_ns, uint64_t steps, uint64_t items)
{
    if (now_ns - p->last_ns < INTERVAL_NS)
        return;
    double dt = (double)(now_ns - p->last_ns) / 1e9;
    double rate = (double)(steps - p->last_steps) / dt;
    double item_rate = (double)(items - p->last_items) / dt * p->items_scale;
    double elapsed = (double)(now_ns - p->start_ns) / 1e9;
    emit_point(p, rate, item_rate, steps, elapsed);
    if (p->run->tty)
        draw_line(p, rate, steps, elapsed);
    p->last_ns = now_ns;
    p->last_steps = steps;
    p->last_items = items;
}

void dlg_progress_end(dlg_progress *p)
{
    if (p->drawn)
        fprintf(stderr, "\r\033[K");
    p->drawn = false;
}
