/* The report's content as tables and sentences, shared by the terminal,
 * Markdown and HTML outputs so that all three say the same thing. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_rank.h"
#include "report.h"
#include "units.h"

void rep_group_title(const rep_group *g, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s (job %s), mode %s, precision %s%s%s", g->workload, g->job, g->mode,
                     g->precision, strcmp(g->device, "-") ? ", device " : "", strcmp(g->device, "-") ? g->device : "");
    char rk[64];
    rep_group_ranks_text(g, rk, sizeof rk);
    if (g->ranks > 1 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ", %s", rk);
    if (g->split && n >= 0 && (size_t)n < len) /* rows of this job with other settings are another group */
        snprintf(buf + n, len - (size_t)n, ", %s", g->split);
}

const char *rep_axis_text(const rep_axis *ax, size_t v, char *buf, size_t len)
{
    if (ax->kind == REP_AX_CPUS && strcmp(ax->vals[v], "0") == 0 && ax->order[v] >= 1) {
        snprintf(buf, len, "0 (all %.0f)", ax->order[v]); /* what "0" meant on that machine */
        return buf;
    }
    return ax->vals[v];
}

void rep_cell_label(const rep_group *g, const rep_cell *c, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    char t[64];
    for (size_t a = 0; a < g->naxes && n < len; a++)
        n += snprintf(buf + n, len - n, "%s%s=%s", a ? " " : "", g->axes[a].key,
                      rep_axis_text(&g->axes[a], c->coord[a], t, sizeof t));
    if (g->naxes == 0)
        snprintf(buf, len, "(one cell)");
}

int rep_table_init(rep_table *t, size_t nrows, size_t ncols)
{
    memset(t, 0, sizeof *t);
    t->cell = calloc(nrows * ncols + 1, sizeof *t->cell);
    t->style = calloc(nrows * ncols + 1, 1);
    t->right = calloc(ncols + 1, sizeof *t->right);
    t->nrows = nrows;
    t->ncols = ncols;
    return t->cell && t->style && t->right ? 0 : -1;
}

int rep_table_put(rep_table *t, size_t r, size_t c, int style, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (rc < 0)
        return -1;
    free(t->cell[r * t->ncols + c]);
    t->cell[r * t->ncols + c] = s;
    t->style[r * t->ncols + c] = (unsigned char)style;
    return 0;
}

void rep_table_free(rep_table *t)
{
    for (size_t i = 0; t->cell && i < t->nrows * t->ncols; i++)
        free(t->cell[i]);
    free(t->cell);
    free(t->style);
    free(t->right);
    memset(t, 0, sizeof *t);
}

static const char *num_or_dash(double v, char *buf, size_t len, const char *fmt, double scale)
{
    if (isnan(v))
        return "-";
    snprintf(buf, len, fmt, v * scale);
    return buf;
}

/* A J/item figure as the tables show it: "-" where not measured, per GB
 * for a group counting bytes (a J/byte figure reads 1e-09), "/GB" after
 * it where the column's head does not say so (per_gb), "cpu" after the
 * CPU packages' (RAPL: whole packages, not a GPU). */
static const char *energy_text(double j_item, bool cpu, const char *unit, bool per_gb, char *buf, size_t len)
{
    if (isnan(j_item))
        return "-";
    bool bytes = rep_unit_is_bytes(unit);
    snprintf(buf, len, "%.3g%s%s", bytes ? j_item * 1e9 : j_item, bytes && per_gb ? "/GB" : "",
             cpu ? " cpu" : "");
    return buf;
}

/* Some cell of the group has a J/item: its table gets the column. */
static bool group_has_energy(const rep_group *g)
{
    for (size_t i = 0; i < g->ncells; i++)
        if (!isnan(g->cells[i].energy_item))
            return true;
    return false;
}

/* A cell to sort: qsort's comparator sees no group, so each carries its
 * coordinates and their count. */
typedef struct cell_key {
    const size_t *coord;
    size_t naxes, cell;
} cell_key;

static int by_coord(const void *pa, const void *pb)
{
    const cell_key *a = pa, *b = pb;
    for (size_t i = 0; i < a->naxes; i++)
        if (a->coord[i] != b->coord[i])
            return a->coord[i] < b->coord[i] ? -1 : 1;
    return 0;
}

/* The group's cell indices in axis order (by their coordinates, each
 * cell's own), or NULL.  A sort, not insertion: cells come in the files'
 * order, which a sweep listing its values other than ascending reverses. */
size_t *rep_group_cell_order(const rep_group *g)
{
    size_t *order = malloc((g->ncells + 1) * sizeof *order);
    cell_key *k = malloc((g->ncells + 1) * sizeof *k);
    if (!order || !k) {
        free(order);
        free(k);
        return NULL;
    }
    for (size_t i = 0; i < g->ncells; i++)
        k[i] = (cell_key){g->cells[i].coord, g->naxes, i};
    qsort(k, g->ncells, sizeof *k, by_coord);
    for (size_t i = 0; i < g->ncells; i++)
        order[i] = k[i].cell;
    free(k);
    return order;
}

/* "best, knee cpus": what cell ci is on the group's curves. */
static void cell_note(const rep_group *g, size_t ci, char *note, size_t len)
{
    size_t n = 0;
    note[0] = 0;
    if (g->has_best && ci == g->best)
        n += (size_t)snprintf(note + n, len - n, "best");
    for (size_t a = 0; a < g->naxes && n < len; a++)
        if (g->has_best && g->knees[a].cell == ci && !g->knees[a].unordered && g->axes[a].n > 1) /* swept */
            n += (size_t)snprintf(note + n, len - n, "%sknee %s", n ? ", " : "", g->axes[a].key);
    const rep_cell *c = &g->cells[ci];
    if (c->ok && c->partial && n < len) /* its figure is a repetition cut short */
        n += (size_t)snprintf(note + n, len - n, "%spartial", n ? ", " : "");
    if (c->ok && c->unenforced && n < len) /* it ran without a limit its axes name */
        n += (size_t)snprintf(note + n, len - n, "%s%s not enforced", n ? ", " : "", rep_limit_names(c->unenforced));
    if (c->ok && c->nfailed && n < len) { /* its figures are the runs that worked */
        n += (size_t)snprintf(note + n, len - n, "%s%zu failed run%s (", n ? ", " : "", c->nfailed,
                              c->nfailed == 1 ? "" : "s");
        for (size_t i = 0; i < c->nfailed_status && n < len; i++)
            n += (size_t)snprintf(note + n, len - n, "%s%s", i ? ", " : "", c->failed_status[i]);
        if (n < len)
            snprintf(note + n, len - n, "%s)", c->failed_status_more ? ", ..." : "");
    }
}

/* Columns after the axes; J/item only in groups where some cell has one. */
static const char *const cell_heads[] = {"throughput", "+-CI95", "n",          "J/item", "AU",
                                         "data wait",  "CPU busy", "read MB/s", "bottleneck", "note"};
enum { CELL_H_ENERGY = 3, CELL_H_TEXT = 8 }; /* from bottleneck on: text, aligned left */

int rep_table_cells(rep_table *t, const rep_report *r, const rep_group *g)
{
    bool energy = group_has_energy(g);
    size_t nh = sizeof cell_heads / sizeof *cell_heads - !energy, nc = g->naxes + nh;
    if (rep_table_init(t, g->ncells + 1, nc) != 0)
        return -1;
    int rc = 0;
    for (size_t a = 0; a < g->naxes; a++)
        rc |= rep_table_put(t, 0, a, REP_ST_STRONG, "%s", g->axes[a].key);
    for (size_t h = 0, col = g->naxes; col < nc; h++) {
        if (h == CELL_H_ENERGY && !energy)
            continue;
        t->right[col] = h < CELL_H_TEXT;
        rc |= rep_table_put(t, 0, col++, REP_ST_STRONG, "%s",
                  h == CELL_H_ENERGY && rep_unit_is_bytes(g->unit) ? "J/GB" : cell_heads[h]);
    }
    size_t *order = rep_group_cell_order(g);
    if (!order)
        return -1;
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cell *c = &g->cells[order[i]];
        size_t row = i + 1, col = g->naxes;
        char b1[64], b2[64];
        for (size_t a = 0; a < g->naxes; a++)
            rc |= rep_table_put(t, row, a, REP_ST_PLAIN, "%s", rep_axis_text(&g->axes[a], c->coord[a], b1, sizeof b1));
        if (c->ok) {
            dlg_format_rate(c->thr, g->unit, b1, sizeof b1);
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", b1);
            dlg_format_rate(c->repeats >= 2 ? c->ci : NAN, g->unit, b1, sizeof b1); /* one repetition: "-" */
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", b1);
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%.0f", c->repeats);
        } else {
            rep_cell_failures_text(c, b1, sizeof b1); /* "error x2, timeout x1" */
            rc |= rep_table_put(t, row, col++, REP_ST_BAD, "%s", b1);
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "-");
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "-");
        }
        bool ok = c->ok;
        if (energy)
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s",
                      ok ? energy_text(c->energy_item, c->energy_cpu, g->unit, false, b2, sizeof b2) : "-");
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", ok ? num_or_dash(c->au, b2, sizeof b2, "%.2f", 1) : "-");
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", ok ? num_or_dash(c->data_wait, b2, sizeof b2, "%.2f", 1) : "-");
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", ok ? num_or_dash(c->cpu_share, b2, sizeof b2, "%.0f%%", 100) : "-");
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", ok ? num_or_dash(c->read_bps, b2, sizeof b2, "%.1f", 1e-6) : "-");
        rc |= rep_table_put(t, row, col++, c->bn == REP_BN_COMPUTE ? REP_ST_GOOD : REP_ST_BAD, "%s", rep_bn_name(c->bn));
        char note[160];
        cell_note(g, order[i], note, sizeof note);
        rc |= rep_table_put(t, row, col++, REP_ST_STRONG, "%s", note);
    }
    free(order);
    return rc ? -1 : 0;
}

/* Why axis ax has no knee (its knee is marked unordered). */
static const char *no_knee_reason(const rep_axis *ax)
{
    switch (ax->kind) {
    case REP_AX_STORAGE:
        return "no storage value has a disk profile to order it by "
               "(a throttle's, conf/disks/NAME.ini or --disk NAME=PROFILE.ini)";
    case REP_AX_DURATION:
        return "a duration, not a resource an instance supplies (values in order of length)";
    default:
        return "its values have no order";
    }
}

/* Where no value below axis a's knee counted: why the smaller values
 * measured are no point of it, or that there are none. */
static const char *below_left_out(const rep_group *g, size_t a)
{
    if (!rep_knee_below_unranked(g, a))
        return "; it is the smallest value measured";
    switch (rep_knee_below_why(g, a)) {
    case REP_LEFT_PARTIAL:
        return "; the smaller values were cut short (partial), not ranked";
    case REP_LEFT_UNENFORCED:
        return "; the smaller values ran without their limit (not enforced), not ranked";
    default:
        return "; the smaller values measured the cache (cache-bound), not ranked";
    }
}

/* What leaves axis a's uncertain knee open: a smaller value the intervals
 * do not show short ("cpus = 1 may reach the target too"), else the
 * knee's own interval ("cpus = 1 may be as low as 36.0% of the best"). */
static void knee_doubt(const rep_group *g, size_t a, char *buf, size_t len)
{
    const rep_knee *k = &g->knees[a];
    const rep_axis *ax = &g->axes[a];
    char vb[64];
    if (k->cheaper >= 0)
        snprintf(buf, len, "%s = %s may reach the target too", ax->key,
                 rep_axis_text(ax, g->cells[k->cheaper].coord[a], vb, sizeof vb));
    else
        snprintf(buf, len, "%s = %s may be as low as %.1f%% of the best", ax->key,
                 rep_axis_text(ax, k->val, vb, sizeof vb), 100 * (k->reach_low > 0 ? k->reach_low : 0));
}

void rep_knee_text(const rep_report *r, const rep_group *g, size_t a, char *buf, size_t len)
{
    const rep_knee *k = &g->knees[a];
    const rep_axis *ax = &g->axes[a];
    char thr[64], vb[64];
    dlg_format_rate(g->cells[k->cell].thr, g->unit, thr, sizeof thr);
    const char *val = rep_axis_text(ax, k->val, vb, sizeof vb);
    if (k->npoints < 2) {
        snprintf(buf, len, "%s = %s: only one value measured with the other axes at their best (%s)", ax->key,
                 val, thr);
        return;
    }
    if (k->unenforced) { /* the best ran without this limit: its value on it is no measurement */
        unsigned bit = rep_limit_bit(ax->key);
        snprintf(buf, len, "%s = %s is the best (%s); no knee: %s not enforced (%s = false: no cgroup applied the "
                 "limit, the cells ran without it)", ax->key, val, thr, rep_limit_names(bit), rep_limit_field(bit));
        return;
    }
    if (k->unordered) {
        snprintf(buf, len, "%s = %s is the best (%s); no knee: %s", ax->key, val, thr, no_knee_reason(ax));
        return;
    }
    /* how far the knee is from the best, then how clear the value below it
     * falls short; one repetition has no interval to judge either by */
    bool once = g->cells[k->cell].repeats < 2 || g->cells[g->best].repeats < 2;
    bool is_best = k->cell == g->best;
    const rep_cell *bc = k->below >= 0 ? &g->cells[k->below] : NULL; /* the value below, if measured */
    const char *gap = is_best        ? "no smaller value reaches the target"
                      : once         ? "measured once: no CIs to judge it by (repeat = 3 gives them)"
                      : !k->reach_clear ? "within the 95% CIs (its and the best's) it may fall far short of the "
                                          "target"
                      : k->significant ? "the shortfall from the best is significant (beyond the 95% CIs)"
                                       : "not significantly below the best (within the 95% CIs)";
    const char *below = !bc ? below_left_out(g, a)
                        : once && is_best ? "; measured once: no CIs (repeat = 3 gives them)"
                        : once          ? ""
                        : bc->ok && bc->repeats < 2
                            ? "; the value below was measured once: no CI to tell whether it falls short (repeat = 3 "
                              "gives one)"
                        : k->below_clear ? "; the value below falls short beyond the 95% CIs (its and the best's)"
                                         : "; the value below is within the 95% CIs (its and the best's) of the "
                                           "target";
    char doubt[160] = "";
    if (k->uncertain)
        knee_doubt(g, a, doubt, sizeof doubt);
    snprintf(buf, len, "%s = %s: %s, %.1f%% of the best%s; %s%s%s%s%s", ax->key, val, thr, 100 * k->ratio,
             is_best ? " (it is the best)" : "", gap, below, doubt[0] ? "; the knee is uncertain (" : "", doubt,
             doubt[0] ? "): more repeats would settle it" : "");
    (void)r;
}

static void fmt_gib(double b, char *buf, size_t len)
{
    snprintf(buf, len, "%.4g", b / 1073741824.0);
}

bool rep_reco_selected(const rep_report *r, size_t gi)
{
    return rep_group_counted(&r->model, r->selected, gi);
}

/* A group with a value in the recommendation's columns: counted, or
 * selected with no cell that ran ok ("not measured", and why). */
static bool in_reco_table(const rep_report *r, size_t gi)
{
    return rep_reco_selected(r, gi) || rep_group_unmeasured(&r->model, r->selected, gi);
}

static size_t ncounted(const rep_report *r)
{
    size_t n = 0;
    for (size_t gi = 0; gi < r->model.n; gi++)
        n += rep_reco_selected(r, gi);
    return n;
}

void rep_score_text(const rep_report *r, const rep_choice *ch, char *buf, size_t len)
{
    const char *cur = ch->inst->currency;
    char per[64];
    if (!isfinite(ch->score))
        snprintf(buf, len, "not measured");
    else if (r->reco.weighted)
        snprintf(buf, len, "%.4g %s for the weighted mix", ch->score, cur);
    else if (r->reco.unit)
        snprintf(buf, len, "%.4g %s per %s%s", ch->score, cur, rep_cost_label(r->reco.unit, false, per, sizeof per),
                 ncounted(r) > 1 ? " of each group" : "");
    else
        snprintf(buf, len, "%.3fx the lowest cost per item (geometric mean over %zu groups of different units)",
                 ch->score, ncounted(r));
}

/* One group's cost per quantum; with several units, each named. */
static void cost_text(const rep_report *r, const rep_group *g, double cost, char *buf, size_t len)
{
    char per[64];
    if (!isfinite(cost))
        snprintf(buf, len, "-");
    else if (r->reco.unit)
        snprintf(buf, len, "%.4g", cost);
    else
        snprintf(buf, len, "%.4g/%s", cost, rep_cost_label(g->unit, true, per, sizeof per));
}

int rep_table_reco(rep_table *t, const rep_report *r)
{
    static const char *const heads[] = {"#", "instance", "provider", "GPUs", "GPU", "vCPUs", "memory GiB",
                                        "price/h", "expected", "cost", "J/item", "meets knees", "ranked by"};
    bool several = ncounted(r) > 1 || r->reco.weighted; /* the ranking figure differs from the one cost */
    size_t nh = sizeof heads / sizeof *heads - !several;
    if (rep_table_init(t, r->reco.n + 1, nh) != 0)
        return -1;
    int rc = 0;
    for (size_t h = 0; h < nh; h++) {
        rc |= rep_table_put(t, 0, h, REP_ST_STRONG, "%s", heads[h]);
        t->right[h] = h == 0 || h == 3 || (h >= 5 && h <= 10) || h == 12;
    }
    char per[64];
    if (r->reco.unit)
        rc |= rep_table_put(t, 0, 9, REP_ST_STRONG, "cost per %s", rep_cost_label(r->reco.unit, true, per, sizeof per));
    if (r->reco.weighted)
        rc |= rep_table_put(t, 0, nh - 1, REP_ST_STRONG, "mix cost");
    else if (several && r->reco.unit)
        rc |= rep_table_put(t, 0, nh - 1, REP_ST_STRONG, "sum per %s", per);
    else if (several)
        rc |= rep_table_put(t, 0, nh - 1, REP_ST_STRONG, "relative cost");
    for (size_t i = 0; i < r->reco.n; i++) {
        const rep_choice *ch = &r->reco.v[i];
        const rep_instance *in = ch->inst;
        size_t row = i + 1, col = 0;
        char buf[512], b2[64];
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%zu", i + 1);
        rc |= rep_table_put(t, row, col++, i < r->reco.nmeet && i < 2 ? REP_ST_STRONG : REP_ST_PLAIN, "%s%s", in->name,
                  rep_choice_price_verified(ch) ? "" : " (price unverified)");
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", in->provider);
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%d", in->gpus);
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s%s", in->gpu, ch->other_gpu ? " (other GPU)" : "");
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%g", in->vcpus);
        fmt_gib(in->memory, b2, sizeof b2);
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", b2);
        if (ch->disk_hour > 0) /* the disk's share of it */
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%.4g %s (disk %.3g)", rep_choice_hourly(ch),
                                in->currency, ch->disk_hour);
        else
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%.4g %s", in->price, in->currency);
        size_t n = 0, n2 = 0, n3 = 0;
        char cost[256] = "", energy[128] = "";
        buf[0] = 0;
        for (size_t gi = 0; gi < r->model.n; gi++) {
            if (!in_reco_table(r, gi))
                continue;
            const rep_fit *f = &ch->fits[gi];
            if (isnan(f->thr))
                snprintf(b2, sizeof b2, "not measured");
            else
                dlg_format_rate(f->thr, r->model.g[gi].unit, b2, sizeof b2);
            char how[96];
            n += snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, "%s%s%s%s%s", n ? " / " : "", b2,
                          f->estimated ? " (est.)" : "", f->extrapolated ? " (ext.)" : "",
                          rep_fit_scaling_text(f, in->gpus, how, sizeof how));
            cost_text(r, &r->model.g[gi], f->cost, b2, sizeof b2);
            n2 += snprintf(cost + n2, n2 < sizeof cost ? sizeof cost - n2 : 0, "%s%s", n2 ? " / " : "", b2);
            n3 += snprintf(energy + n3, n3 < sizeof energy ? sizeof energy - n3 : 0, "%s%s", n3 ? " / " : "",
                           energy_text(f->energy_item, f->energy_cpu, r->model.g[gi].unit, true, b2, sizeof b2));
        }
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", buf);
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s %s", cost, in->currency);
        rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "%s", energy);
        if (ch->meets) {
            char disk[160];
            rep_choice_disk_text(ch, disk, sizeof disk);
            rc |= rep_table_put(t, row, col++, REP_ST_GOOD, "yes%s%s%s", ch->disk ? " (disk " : "", disk,
                                ch->disk ? ")" : "");
        } else {
            const char *why = "no";
            for (size_t gi = 0; gi < r->model.n; gi++)
                if (!ch->fits[gi].meets) {
                    why = ch->fits[gi].why;
                    break;
                }
            rc |= rep_table_put(t, row, col++, REP_ST_BAD, "no: %s", why);
        }
        if (several && !isfinite(ch->score))
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, "-");
        else if (several)
            rc |= rep_table_put(t, row, col++, REP_ST_PLAIN, r->reco.unit || r->reco.weighted ? "%.4g" : "%.3fx", ch->score);
    }
    return rc ? -1 : 0;
}

/* Appends " (est.: cpus=1 memory=2G not measured)" where a counted
 * group's figure for the choice is an estimate (the instance's combination
 * of resources was not measured; with several groups each named). */
static void est_marks(const rep_report *r, const rep_choice *ch, char *buf, size_t len, size_t *n)
{
    bool several = ncounted(r) > 1;
    char tag[128];
    size_t named = 0;
    for (size_t gi = 0; gi < r->model.n && *n < len; gi++) {
        const rep_fit *f = &ch->fits[gi];
        if (!rep_reco_selected(r, gi) || !f->estimated)
            continue;
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        *n += (size_t)snprintf(buf + *n, len - *n, "%s%s%s%s not measured", named++ ? "; " : " (est.: ",
                               several ? tag : "", several ? " at " : "", f->est_at[0] ? f->est_at : "its combination");
    }
    if (named && *n < len)
        *n += (size_t)snprintf(buf + *n, len - *n, ")");
}

/* Appends " (ext.: cpus not swept, the instance has fewer vCPUs per GPU
 * than the cell ran with)" where a counted group's figure is extrapolated. */
static void ext_marks(const rep_report *r, const rep_choice *ch, char *buf, size_t len, size_t *n)
{
    bool several = ncounted(r) > 1;
    char tag[128];
    size_t named = 0;
    for (size_t gi = 0; gi < r->model.n && *n < len; gi++) {
        if (!rep_reco_selected(r, gi) || !ch->fits[gi].extrapolated)
            continue;
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        *n += (size_t)snprintf(buf + *n, len - *n, "%s%s", named++ ? ", " : " (ext.: ", several ? tag : "");
    }
    if (named && *n < len)
        *n += (size_t)snprintf(buf + *n, len - *n, "%scpus not swept, the instance has fewer vCPUs%s than the cell "
                               "ran with)", several ? ": " : "", ch->inst->gpus > 1 ? " per GPU" : "");
}

/* Appends " (x8 upper bound: one GPU's cell x 8, scaling not measured)"
 * where a counted group's figure on the choice is that (rows of no other
 * rank count: measured_scaling's own text says more where there are). */
static void upper_marks(const rep_report *r, const rep_choice *ch, char *buf, size_t len, size_t *n)
{
    for (size_t gi = 0; gi < r->model.n && *n < len; gi++) {
        const rep_fit *f = &ch->fits[gi];
        if (rep_reco_selected(r, gi) && rep_fit_upper_bound(f, &r->model.g[gi], ch->inst) && !f->scale_upper) {
            *n += (size_t)snprintf(buf + *n, len - *n, " (x%d upper bound: one GPU's cell x %d, scaling not measured)",
                                   ch->inst->gpus, ch->inst->gpus);
            return;
        }
    }
}

/* The marks of the choice's figures for the headline, as the table has
 * them (est., ext.), and where it multiplies one GPU's cell; "" where
 * none. */
static const char *marks_text(const rep_report *r, const rep_choice *ch, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    est_marks(r, ch, buf, len, &n);
    ext_marks(r, ch, buf, len, &n);
    upper_marks(r, ch, buf, len, &n);
    if (ch->other_gpu && n < len)
        snprintf(buf + n, len - n, " (other GPU)");
    return buf;
}

void rep_choice_disk_text(const rep_choice *ch, char *buf, size_t len)
{
    char size[32], iops[48] = "", bw[48] = "", rate[32];
    dlg_format_size((int64_t)ch->disk_bytes, size, sizeof size);
    if (ch->disk_iops > 0)
        snprintf(iops, sizeof iops, "%.0f IOPS", ch->disk_iops);
    if (ch->disk_bw > 0) {
        dlg_format_size((int64_t)ch->disk_bw, rate, sizeof rate);
        snprintf(bw, sizeof bw, "%s/s", rate);
    }
    bool sized = ch->disk && ch->disk_bytes > 0, bought = ch->disk && (iops[0] || bw[0]);
    snprintf(buf, len, "%s%s%s%s%s%s%s", ch->disk ? ch->disk : "", sized ? " of " : "", sized ? size : "",
             bought ? " with " : "", bought ? iops : "", iops[0] && bw[0] ? " and " : "", bought ? bw : "");
}

/* "1.006 USD/h", with the disk to attach: "1.132 USD/h with disk
 * aws-st1 of 2TiB (0.1262 of it)", "1.006 USD/h, disk local-nvme"
 * (instance store), "3.06 USD/h, disk aws-st1 (not priced in the
 * catalog)". */
static void choice_price_text(const rep_choice *ch, char *buf, size_t len)
{
    const char *cur = ch->inst->currency;
    char disk[160];
    rep_choice_disk_text(ch, disk, sizeof disk);
    if (!ch->disk)
        snprintf(buf, len, "%.4g %s/h", ch->inst->price, cur);
    else if (ch->disk_hour > 0)
        snprintf(buf, len, "%.4g %s/h with disk %s (%.4g of it)", rep_choice_hourly(ch), cur, disk, ch->disk_hour);
    else
        snprintf(buf, len, "%.4g %s/h, disk %s%s", ch->inst->price, cur, disk,
                 ch->disk_hour == 0 ? "" : " (not priced in the catalog)");
}

/* Appends the uncertain knees the recommendation rests on, each with
 * what leaves it open ("; it rests on an uncertain knee: io-pipeline cpus
 * (cpus = 1 may reach the target too): more repeats would settle it"):
 * the knee's own line said so, the headline had not. */
static void append_uncertain_knees(const rep_report *r, char *buf, size_t len, size_t *n)
{
    size_t named = 0, total = 0;
    for (size_t gi = 0; gi < r->model.n; gi++)
        for (size_t a = 0; rep_reco_selected(r, gi) && a < r->model.g[gi].naxes; a++)
            total += r->model.g[gi].knees[a].uncertain && rep_axis_sizes_instance(&r->model.g[gi].axes[a]);
    for (size_t gi = 0; gi < r->model.n && *n < len; gi++) {
        const rep_group *g = &r->model.g[gi];
        char tag[128], doubt[160];
        for (size_t a = 0; rep_reco_selected(r, gi) && a < g->naxes && *n < len; a++) {
            if (!g->knees[a].uncertain || !rep_axis_sizes_instance(&g->axes[a]))
                continue;
            rep_group_tag(&r->model, gi, tag, sizeof tag);
            knee_doubt(g, a, doubt, sizeof doubt);
            *n += (size_t)snprintf(buf + *n, len - *n, "%s%s %s (%s)",
                                   named++ ? ", " : total > 1 ? "; it rests on uncertain knees: "
                                                              : "; it rests on an uncertain knee: ",
                                   tag, g->axes[a].key, doubt);
        }
    }
    if (named && *n < len)
        *n += (size_t)snprintf(buf + *n, len - *n, ": more repeats would settle %s", total > 1 ? "them" : "it");
}

/* "no recommendation: no cell of X ran ok; ..." where a selected group
 * has no figure at all (it cannot be priced, and a mix without it is not
 * what was asked); false where every selected group has one. */
static bool unmeasured_text(const rep_report *r, char *buf, size_t len)
{
    size_t n = 0, named = 0;
    char tag[128];
    for (size_t gi = 0; gi < r->model.n && n < len; gi++) {
        if (!rep_group_unmeasured(&r->model, r->selected, gi))
            continue;
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        n += (size_t)snprintf(buf + n, len - n, "%s%s", named++ ? ", " : "no recommendation: no cell of ", tag);
    }
    if (named && n < len)
        snprintf(buf + n, len - n, " ran ok, so no instance can be judged for %s (the table says what failed): "
                 "rerun %s, or select the others (--workload)", named > 1 ? "them" : "it",
                 named > 1 ? "them" : "it");
    return named > 0;
}

/* "; throughput was measured on NVIDIA H100 80GB HBM3: instances of
 * another GPU (other GPU) are ranked as if theirs performed like it
 * (--gpu H100 compares only those)", where the table lists any. */
static void other_gpu_text(const rep_report *r, char *buf, size_t len, size_t *n)
{
    bool any = false;
    for (size_t i = 0; i < r->reco.n && !any; i++)
        any = r->reco.v[i].other_gpu;
    if (!any || *n >= len)
        return;
    char model[64];
    rep_gpu_model(r->reco.measured_gpu, model, sizeof model);
    *n += (size_t)snprintf(buf + *n, len - *n, "; throughput was measured on %s: instances of another GPU (other GPU) "
                           "are ranked as if theirs performed like it%s%s%s", r->reco.measured_gpu,
                           model[0] ? " (--gpu " : "", model, model[0] ? " compares only those)" : "");
}

void rep_reco_text(const rep_report *r, char *buf, size_t len)
{
    const rep_reco *re = &r->reco;
    if (!r->have_reco) {
        snprintf(buf, len, "no recommendation: no instance catalog given (--catalog conf/instances/X.ini)");
        return;
    }
    if (unmeasured_text(r, buf, len))
        return;
    if (re->nmeet == 0) {
        snprintf(buf, len, "no instance in the catalog meets every knee%s%s%s", r->gpu_filter ? " (GPU filter '" : "",
                 r->gpu_filter ? r->gpu_filter : "", r->gpu_filter ? "')" : "");
        return;
    }
    char score[160];
    const rep_choice *a = &re->v[0];
    if (!isfinite(a->score)) { /* sorted by cost: none of them has one */
        snprintf(buf, len, "no recommendation: %zu instance%s meet%s every knee, but no measured throughput prices "
                 "%s (a throughput of 0, or less than any measured cell: see the table)", re->nmeet,
                 re->nmeet == 1 ? "" : "s", re->nmeet == 1 ? "s" : "", re->nmeet == 1 ? "it" : "them");
        return;
    }
    rep_score_text(r, a, score, sizeof score);
    char price[160];
    choice_price_text(a, price, sizeof price);
    char marks[320];
    size_t n = (size_t)snprintf(buf, len, "recommended: %s (%s, %s), %s%s", a->inst->name, a->inst->provider, price,
                                score, marks_text(r, a, marks, sizeof marks));
    if (re->nmeet > 1 && n < len) {
        const rep_choice *b = &re->v[1];
        rep_score_text(r, b, score, sizeof score);
        choice_price_text(b, price, sizeof price);
        n += (size_t)snprintf(buf + n, len - n, "; runner-up: %s (%s, %s), %s%s", b->inst->name, b->inst->provider,
                              price, score, isfinite(b->score) ? marks_text(r, b, marks, sizeof marks) : "");
    } else if (n < len) {
        n += (size_t)snprintf(buf + n, len - n, "; no runner-up meets every knee");
    }
    append_uncertain_knees(r, buf, len, &n);
    rep_reco_scaling_text(r, buf, len, &n);
    rep_reco_starved_text(r, buf, len, &n);
    other_gpu_text(r, buf, len, &n);
}

/* Appends the tags of the judged groups (host workloads only, when
 * host_only) to buf at *n: lead before the first, sep between. */
static void append_tags(const rep_report *r, bool host_only, const char *lead, const char *sep, char *buf,
                        size_t len, size_t *n)
{
    char tag[128];
    for (size_t gi = 0, k = 0; gi < r->model.n && *n < len; gi++) {
        if (!in_reco_table(r, gi) || (host_only && (r->model.g[gi].per_gpu || !rep_reco_selected(r, gi))))
            continue;
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        *n += (size_t)snprintf(buf + *n, len - *n, "%s%s", k++ ? sep : lead, tag);
    }
}

/* "; mix cost = the sum of weight x cost: 50 M images of sim/train + ..." */
static void append_weights(const rep_report *r, char *buf, size_t len, size_t *n)
{
    char tag[128], per[64];
    for (size_t gi = 0, k = 0; gi < r->model.n && *n < len; gi++) {
        if (!rep_reco_selected(r, gi))
            continue;
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        *n += (size_t)snprintf(buf + *n, len - *n, "%s%g %s of %s",
                               k++ ? " + " : "; mix cost = the sum of weight x cost (--weight): ",
                               r->weights ? r->weights[gi] : 1,
                               rep_cost_label(r->model.g[gi].unit, true, per, sizeof per), tag);
    }
}

void rep_reco_basis(const rep_report *r, char *buf, size_t len)
{
    size_t nper = 0, nhost = 0, n = 0;
    for (size_t gi = 0; gi < r->model.n; gi++)
        if (rep_reco_selected(r, gi))
            *(r->model.g[gi].per_gpu ? &nper : &nhost) += 1;
    n += (size_t)snprintf(buf, len, "expected throughput: %s",
                          nper ? "the best measured cell within each instance's per-GPU resources times its GPUs "
                                 "(a data-parallel upper bound)"
                               : "the best measured cell within each instance's vCPUs and memory, once (no workload fed a GPU)");
    if (nper && nhost) {
        append_tags(r, true, "; for ", ", ", buf, len, &n);
        if (n < len)
            n += (size_t)snprintf(buf + n, len - n, ", which fed no GPU, the best cell within the whole instance's "
                                  "resources, once");
    }
    if (n < len)
        n += (size_t)snprintf(buf + n, len - n,
                              "; est. = no such cell was measured, the smallest knee throughput is used; ext. = cpus "
                              "were not swept and the instance has fewer vCPUs (per GPU) than the cell ran with: not "
                              "measured there; not measured = the instance has less than any measured cell, or no GPU "
                              "to feed");
    rep_reco_scaling_basis(r, buf, len, &n);
    bool disk = false;
    for (size_t i = 0; i < r->reco.n && !disk; i++)
        disk = r->reco.v[i].disk != NULL;
    if (disk && n < len)
        n += (size_t)snprintf(buf + n, len - n, "; disk = the one to attach: of the instance's disks with which "
                              "alone it meets the knees and carries the measured I/O, the one with the lowest cost "
                              "per item (the catalog's [disk NAME] price a month / 730 h added; unpriced ones only "
                              "where no priced one meets), expected throughput and cost with it; \"of 20GiB\": a "
                              "disk the catalog prices by the GiB is sized as large as the files the work read "
                              "(storage_files_bytes) and, where its rates grow with its size, as the knees need; "
                              "else as its conf/disks profile is sized");
    size_t ncols = 0;
    for (size_t gi = 0; gi < r->model.n; gi++)
        ncols += in_reco_table(r, gi);
    if (ncols > 1)
        append_tags(r, false, "; a value per group in the columns: ", " / ", buf, len, &n);
    char per[64], per_long[64];
    if (r->reco.weighted)
        append_weights(r, buf, len, &n);
    else if (nper + nhost > 1 && n < len && r->reco.unit)
        snprintf(buf + n, len - n, "; sum per %s = the cost of a %s of each group",
                 rep_cost_label(r->reco.unit, true, per, sizeof per),
                 rep_cost_label(r->reco.unit, false, per_long, sizeof per_long));
    else if (nper + nhost > 1 && n < len)
        snprintf(buf + n, len - n, "%s",
                 "; relative cost = the geometric mean over the groups of each one's cost per item "
                 "relative to the lowest in the table (costs in different units cannot be added)");
}

/* The model has an io-pipeline group with a best cell: something that
 * `--workload io-pipeline` can recommend from. */
static bool has_pipeline(const rep_model *m)
{
    for (size_t gi = 0; gi < m->n; gi++)
        if (m->g[gi].has_best && strcmp(m->g[gi].workload, "io-pipeline") == 0)
            return true;
    return false;
}

bool rep_price_source(const rep_report *r, size_t i, char *buf, size_t len)
{
    const rep_instance *in = &r->cat.v[i];
    for (size_t j = 0; j < i; j++)
        if (strcmp(r->cat.v[j].catalog, in->catalog) == 0)
            return false; /* listed at its first instance */
    snprintf(buf, len, "%s: %s, %s, %s (retrieved %s)", in->catalog, in->provider, in->region, in->source,
             in->retrieved);
    return true;
}

void rep_reco_caveat(const rep_report *r, char *buf, size_t len)
{
    size_t n = 0, named = 0;
    buf[0] = '\0';
    for (size_t gi = 0; gi < r->model.n && n < len; gi++) {
        const rep_group *g = &r->model.g[gi];
        const char *be = g->has_best ? rep_str(g->cells[g->best].row, "backend") : NULL;
        if (!rep_reco_selected(r, gi) || !be || (strcmp(be, "cpu") != 0 && strcmp(be, "ref") != 0))
            continue;
        char tag[128];
        rep_group_tag(&r->model, gi, tag, sizeof tag);
        n += (size_t)snprintf(buf + n, len - n, "%s%s", named++ ? ", " : "note: ", tag);
    }
    if (named && n < len) /* the io-pipeline advice only where it would not fail */
        snprintf(buf + n, len - n,
                 " ran on this machine's CPUs (backend cpu): each GPU is credited with that CPU throughput, "
                 "which predicts nothing about a GPU; measure %s with device = cuda:N on a GPU%s",
                 named > 1 ? "them" : "it",
                 has_pipeline(&r->model) ? ", or recommend from the input pipeline alone (--workload io-pipeline)"
                                         : "");
}
