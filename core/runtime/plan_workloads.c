/* Plan checks that only a workload can answer: options that are each valid
 * but that its setup refuses together (dlg_workload_ops.check, version 3;
 * see dlg_plan_check_workloads in plan.h).  Every cell is asked before any
 * runs, so a run stops at the key's line instead of failing cell by cell. */
#include "plan.h"

#include "host.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlgauge/fnv1a.h>

/* What a job's cells said: how many fail, the first one's line, and which
 * cells fail (their sweep values), as far as cells[] holds them. */
typedef struct verdict {
    size_t nbad;
    char where[600]; /* "file:line: " of the first failing cell's key */
    char msg[2048];  /* its message, without the host's context */
    char cells[600];
} verdict;

/* " (a = 1, b = 2)": the cell's sweep values, "" for a job of one cell. */
static void cell_values(const dlg_cell *c, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t t = 0; t < c->ntags && at < len; t++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s = %s", t ? ", " : "", c->tags[t].key, c->tags[t].value);
}

/* rc: what check returned, said when it gave no message (as the runner
 * says a silent setup's). */
static void note_failure(const dlg_job *j, const dlg_cell *c, const dlg_host_impl *h, const char *error, int rc,
                         verdict *v)
{
    char vals[300];
    cell_values(c, vals, sizeof vals);
    if (!v->nbad++) {
        const char *msg = dlg_job_msg_where(j, h->context, error, v->where, sizeof v->where);
        if (*msg)
            snprintf(v->msg, sizeof v->msg, "%s", msg);
        else
            dlg_said_nothing(v->msg, sizeof v->msg, "", "check", rc);
    }
    size_t at = strlen(v->cells);
    if (at + strlen(vals) + 8 < sizeof v->cells)
        snprintf(v->cells + at, sizeof v->cells - at, "%s%s", at ? "; " : "", vals);
    else if (!strstr(v->cells, "; ..."))
        snprintf(v->cells + at, sizeof v->cells - at, "; ...");
}

/* FNV-1a of what check sees of a cell (its option values and job info):
 * cells that differ only in keys the workload never sees (cpu quota)
 * are asked once, not once each (a CNN's check
 * builds its model). */
static uint64_t cell_key(const dlg_job *j, const dlg_cell *c, const dlg_job_info *info)
{
    uint64_t h = DLG_FNV1A_INIT;
    for (size_t k = 0; k < j->nwl; k++) {
        h = dlg_fnv1a_str(h, c->wl[k].text ? c->wl[k].text : "");
        h = (h ^ (c->wl[k].text ? 0x100u : 0x200u) ^ (c->wl[k].set ? 0x400u : 0)) * DLG_FNV1A_PRIME;
    }
    const uint64_t more[] = {(uint64_t)info->cpus, info->seed, info->memory_limit, info->storage_caps};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        h = (h ^ more[i]) * DLG_FNV1A_PRIME;
    h = dlg_fnv1a_str(h, info->storage ? info->storage : ""); /* check may judge its name */
    return h ? h : 1;
}

/* The keys of cells asked, with their verdicts (what check returned):
 * open addressing, 0 empty, cap a power of 2 above twice the job's cells.
 * Failures are kept too: a sweep of core keys over a refused value asks
 * once, not once a cell. */
typedef struct asked_set {
    uint64_t *slot;
    int *rc;
    size_t cap;
} asked_set;

/* The slot that holds key, or the empty one where it goes. */
static size_t asked_slot(const asked_set *s, uint64_t key)
{
    size_t i = (size_t)key & (s->cap - 1);
    while (s->slot[i] && s->slot[i] != key)
        i = (i + 1) & (s->cap - 1);
    return i;
}

/* Asks the workload about every cell of job j (once per distinct key). */
static int ask_cells(dlg_plan *p, const dlg_job *j, dlg_services *svc, dlg_host_impl *h, verdict *v, char *err,
                     size_t errlen)
{
    const dlg_workload_ops *ops = j->workload->ops;
    asked_set seen = {NULL, NULL, 16};
    while (seen.cap < 2 * j->ncells)
        seen.cap *= 2;
    seen.slot = calloc(seen.cap, sizeof *seen.slot);
    seen.rc = calloc(seen.cap, sizeof *seen.rc);
    int rc = 0;
    if (!seen.slot || !seen.rc) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    for (size_t k = 0; k < j->ncells && rc == 0; k++) {
        dlg_cell c;
        if ((rc = dlg_plan_cell(p, j, k, &c, err, errlen)) != 0) {
            dlg_cell_free(&c);
            break;
        }
        /* cpus: the count the cell asks for (planning parsed it); 0: all it is given */
        dlg_job_info info = dlg_cell_job_info(p, &c, (int)c.core[DLG_K_CPUS].i, 0);
        uint64_t key = cell_key(j, &c, &info);
        size_t i = asked_slot(&seen, key);
        uint64_t mark = dlg_services_mark(svc);
        if (!seen.slot[i]) {
            seen.slot[i] = key;
            int said = ops->check(&h->pub, c.wl, &info);
            seen.rc[i] = said < 0 ? said : 0;
        }
        /* a repeated failure is never the first: its message is noted */
        if (seen.rc[i]) {
            char msg[sizeof svc->error.text];
            dlg_services_said(svc, mark, mark, msg, sizeof msg);
            note_failure(j, &c, h, msg, seen.rc[i], v);
        }
        dlg_cell_free(&c);
    }
    free(seen.slot);
    free(seen.rc);
    return rc ? -1 : 0;
}

static int check_job(dlg_plan *p, const dlg_job *j, dlg_services *svc, FILE *warn, char *err, size_t errlen)
{
    if (!dlg_workload_has_check(j->workload->ops))
        return 0;
    /* the context a cell's own host has, so check and setup read alike */
    dlg_host_impl *h = dlg_host_new(svc, "%s:%d: [job %s] %s", j->sec->file, j->sec->line, j->name, j->workload->name);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    verdict *v = calloc(1, sizeof *v);
    int rc = v ? ask_cells(p, j, svc, h, v, err, errlen) : -1;
    if (!v)
        snprintf(err, errlen, "out of memory");
    dlg_host_free(h);
    if (rc != 0 || !v->nbad) {
        free(v);
        return rc;
    }
    if (v->nbad == j->ncells) { /* nothing of this job could run */
        snprintf(err, errlen, "%s[job %s] %s: %s%s%s%s", v->where, j->name, j->workload->name, v->msg,
                 j->ncells > 1 ? " (every cell fails: " : "", j->ncells > 1 ? v->cells : "",
                 j->ncells > 1 ? ")" : "");
        rc = -1;
    } else {
        /* As with cpus that fit only some cells (plan_inputs.c): a grid like
         * device = cpu, cuda x precision = fp32, fp16 is one study, and
         * refusing it would make the user split it into jobs by hand.  The
         * failing cells still fail at setup, each with a row saying why. */
        fprintf(warn, "dlgauge: %s[job %s] %s: warning: %s: the %zu cell%s with %s will fail at setup\n", v->where,
                j->name, j->workload->name, v->msg, v->nbad, v->nbad == 1 ? "" : "s", v->cells);
    }
    free(v);
    return rc;
}

int dlg_plan_check_workloads(dlg_plan *p, int verbosity, FILE *warn, char *err, size_t errlen)
{
    dlg_services svc;
    dlg_services_init(&svc, p, NULL, verbosity);
    int rc = 0;
    for (size_t j = 0; j < p->njobs && rc == 0; j++)
        rc = check_job(p, &p->jobs[j], &svc, warn, err, errlen);
    dlg_services_fini(&svc);
    return rc;
}
