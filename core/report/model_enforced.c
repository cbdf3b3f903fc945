/* Limits a cell's axis names but no cgroup applied: a row of a job that
 * set `memory` or `cpu_quota` says whether the limit was enforced
 * (`memory_enforced`, `cpu_quota_enforced`); false (no controller, no
 * writable cgroup) means the cell ran without it while its column says
 * the limit.  Such a cell is no measurement at that value (model_rank.c
 * leaves it out), and the rows that say so are named once on stderr. */
#define _GNU_SOURCE
#include "model_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rows.h"

const rep_limit_axis rep_limit_axes[2] = {
    {"memory", "memory_enforced", REP_UNENF_MEMORY},
    {"cpu_quota", "cpu_quota_enforced", REP_UNENF_CPU_QUOTA},
};

enum { NLIMITS = sizeof rep_limit_axes / sizeof *rep_limit_axes, ROWS_NAMED = 4 };

unsigned rep_limit_bit(const char *key)
{
    for (size_t i = 0; i < NLIMITS; i++)
        if (strcmp(key, rep_limit_axes[i].key) == 0)
            return rep_limit_axes[i].bit;
    return 0;
}

const char *rep_limit_names(unsigned bits)
{
    if ((bits & REP_UNENF_MEMORY) && (bits & REP_UNENF_CPU_QUOTA))
        return "memory and cpu_quota";
    return bits & REP_UNENF_MEMORY ? "memory" : "cpu_quota";
}

const char *rep_limit_field(unsigned bits)
{
    return bits & REP_UNENF_MEMORY ? "memory_enforced" : "cpu_quota_enforced";
}

/* A boolean field written false ("false" in CSV and JSONL alike, or 0);
 * absent (an older dlgauge, no such limit set) is not false. */
static bool field_false(const rep_row *r, const char *key)
{
    const char *v = rep_str(r, key);
    return v && (strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0);
}

unsigned rep_row_unenforced(const rep_row *r)
{
    unsigned bits = 0;
    for (size_t i = 0; i < NLIMITS; i++)
        if (field_false(r, rep_limit_axes[i].field))
            bits |= rep_limit_axes[i].bit;
    return bits;
}

unsigned rep_group_limit_bits(const rep_group *g)
{
    unsigned bits = 0;
    for (size_t i = 0; i < NLIMITS; i++)
        if (rep_group_axis(g, rep_limit_axes[i].key) >= 0)
            bits |= rep_limit_axes[i].bit;
    return bits;
}

/* "stream: 2 measured rows say no cgroup applied their memory limit
 * (memory_enforced = false: r.csv:2, r.csv:3): ..." for the rows of group
 * gi (n of them) that say so of limit l. */
static int add_warning(rep_model *m, size_t gi, const rep_limit_axis *l, const rep_rows *rs, const long *gid,
                       size_t n)
{
    char tag[256];
    size_t named = 0;
    rep_mem_out line;
    FILE *f = rep_mem_open(&line);
    if (!f)
        return -1;
    rep_group_tag(m, gi, tag, sizeof tag);
    fprintf(f, "%s: %zu measured row%s say%s no cgroup applied %s %s limit (%s = false: ", tag, n,
            n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "its" : "their", l->key, l->field);
    for (size_t i = 0; i < rs->n && named < ROWS_NAMED; i++) {
        const rep_row *r = &rs->v[i];
        if (gid[i] == (long)gi && rep_row_measured(r) && (rep_row_unenforced(r) & l->bit))
            fprintf(f, "%s%s:%ld", named++ ? ", " : "", r->src, r->line);
    }
    fprintf(f, "%s): %s ran without it, so %s no measurement at %s %s value: left out "
               "of the best, the knees and the recommendation beside cells that ran with it, and no knee of it "
               "where none did",
            n > named ? ", ..." : "", n == 1 ? "its cell" : "those cells",
            n == 1 ? "its figure is" : "their figures are", n == 1 ? "its" : "their", l->key);
    return rep_model_push_warning(m, f, &line);
}

int rep_model_warn_unenforced(rep_model *m, const rep_rows *rs, const long *gid)
{
    int rc = 0;
    for (size_t gi = 0; gi < m->n && !rc; gi++) {
        unsigned axes = rep_group_limit_bits(&m->g[gi]);
        for (size_t l = 0; l < NLIMITS && !rc; l++) {
            size_t n = 0;
            for (size_t i = 0; (axes & rep_limit_axes[l].bit) && i < rs->n; i++)
                n += gid[i] == (long)gi && rep_row_measured(&rs->v[i]) &&
                     (rep_row_unenforced(&rs->v[i]) & rep_limit_axes[l].bit);
            if (n)
                rc = add_warning(m, gi, &rep_limit_axes[l], rs, gid, n);
        }
    }
    return rc;
}
