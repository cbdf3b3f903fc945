#define _GNU_SOURCE
#include "journal_pending.h"

#include <stdlib.h>
#include <string.h>

/* The cell's pending entry, or NULL. */
static dlg_journal_pending *find_pending(const dlg_journal *j, const char *job, size_t cell)
{
    for (size_t i = 0; i < j->npending; i++)
        if (j->pending[i].cell == cell && strcmp(j->pending[i].job, job) == 0)
            return &j->pending[i];
    return NULL;
}

/* The cell's pending entry, a new empty one where it has none; NULL when
 * out of memory. */
static dlg_journal_pending *pending_for(dlg_journal *j, const char *job, size_t cell)
{
    dlg_journal_pending *p = find_pending(j, job, cell);
    if (p)
        return p;
    if (!(p = realloc(j->pending, (j->npending + 1) * sizeof *p)))
        return NULL;
    j->pending = p;
    p += j->npending;
    memset(p, 0, sizeof *p);
    p->cell = cell;
    if (!(p->job = strdup(job)) || !(p->sinks = strdup(","))) {
        free(p->job);
        free(p->sinks);
        return NULL;
    }
    j->npending++;
    return p;
}

static void pending_free(dlg_journal_pending *p)
{
    free(p->job);
    free(p->sinks);
    free(p->status);
    free(p->row);
}

void dlg_journal_drop_pending(dlg_journal *j, const char *job, size_t cell)
{
    dlg_journal_pending *p = find_pending(j, job, cell);
    if (!p)
        return;
    pending_free(p);
    *p = j->pending[--j->npending];
}

int dlg_journal_add_sent(dlg_journal *j, const char *job, size_t cell, const char *sink)
{
    dlg_journal_pending *p = pending_for(j, job, cell);
    if (!p)
        return -1;
    if (dlg_journal_sent_to(p, sink))
        return 0;
    size_t n = strlen(p->sinks), m = strlen(sink);
    char *s = realloc(p->sinks, n + m + 2);
    if (!s)
        return -1;
    memcpy(s + n, sink, m);
    memcpy(s + n + m, ",", 2);
    p->sinks = s;
    return 0;
}

int dlg_journal_add_kept(dlg_journal *j, const char *job, size_t cell, const char *status, const char *row)
{
    dlg_journal_pending *p = pending_for(j, job, cell);
    char *st = p ? strdup(status) : NULL, *r = st ? strdup(row) : NULL;
    if (!r) {
        free(st);
        return -1;
    }
    free(p->status);
    free(p->row);
    p->status = st;
    p->row = r;
    return 0;
}

void dlg_journal_pending_free_all(dlg_journal *j)
{
    for (size_t i = 0; i < j->npending; i++)
        pending_free(&j->pending[i]);
    free(j->pending);
    j->pending = NULL;
    j->npending = 0;
}

const dlg_journal_pending *dlg_journal_pending_of(const dlg_journal *j, const char *job, size_t cell)
{
    return find_pending(j, job, cell);
}

bool dlg_journal_sent_to(const dlg_journal_pending *p, const char *sink)
{
    size_t m = strlen(sink);
    for (const char *s = p && m ? strstr(p->sinks, sink) : NULL; s; s = strstr(s + 1, sink))
        if (s > p->sinks && s[-1] == ',' && s[m] == ',')
            return true;
    return false;
}

size_t dlg_journal_nkept(const dlg_journal *j)
{
    size_t n = 0;
    for (size_t i = 0; i < j->npending; i++)
        n += j->pending[i].row != NULL;
    return n;
}
