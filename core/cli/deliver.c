#include "deliver.h"

#include "journal_row.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A journal that cannot be written (a full disk) is said once, not once
 * per cell. */
static void journal_error(dlg_delivery *d, const char *err)
{
    if (strcmp(err, d->said) == 0)
        return;
    fprintf(stderr, "dlgauge: %s (--resume would measure the cells not recorded again)\n", err);
    snprintf(d->said, sizeof d->said, "%s", err);
}

static bool has_it(const dlg_delivery *d, const char *job, size_t k, size_t i)
{
    return dlg_journal_sent_to(dlg_journal_pending_of(d->jn, job, k), d->ss->sinks[i].spec->name);
}

/* The index of the last open sink that lacks the row, or n for none. */
static size_t last_lacking(const dlg_delivery *d, const char *job, size_t k)
{
    size_t last = d->ss->n;
    for (size_t i = 0; i < d->ss->n; i++)
        if (d->ss->sinks[i].state && !has_it(d, job, k, i))
            last = i;
    return last;
}

/* The row kept whole before any sink gets it: should dlgauge die after a
 * sink stored it and before the journal says so, --resume sends this very
 * row again through write_again (which skips a row a sink has) rather
 * than measuring the cell again, a second row.  Kept also while a sink
 * lacks it.  0, or -1 said once (the journal cannot take it). */
static int keep_row(dlg_delivery *d, const char *job, size_t k, const char *st, const dlg_point *row)
{
    char err[1200];
    char *hex = dlg_journal_row_encode(row);
    if (!hex) {
        snprintf(err, sizeof err, "%s: cannot keep the row of [job %s] cell %zu before sending it: %s",
                 d->jn->path, job, k, strerror(errno));
        journal_error(d, err);
        return -1;
    }
    int rc = dlg_journal_record_kept(d->jn, job, k, st, hex, err, sizeof err);
    if (rc != 0)
        journal_error(d, err);
    free(hex);
    return rc != 0 ? -1 : 0;
}

/* Sink i gets row: a kept row perhaps again (the interrupted run may
 * have stored it just before it died). */
static int write_row(dlg_delivery *d, size_t i, const dlg_point *row, dlg_row_kind kind)
{
    if (kind == DLG_ROW_KEPT)
        return dlg_sinkset_write_again_one(d->ss, i, row, 1);
    return dlg_sinkset_write_one(d->ss, i, row, 1);
}

size_t dlg_deliver_row(dlg_delivery *d, const char *job, size_t k, const char *st, const dlg_point *row,
                       dlg_row_kind kind)
{
    bool recorded = kind != DLG_ROW_PARTIAL;
    bool kept = kind == DLG_ROW_KEPT || (kind == DLG_ROW_MEASURED && keep_row(d, job, k, st, row) == 0);
    char err[1200];
    size_t lack = 0, last = last_lacking(d, job, k);
    for (size_t i = 0; i < d->ss->n; i++) {
        dlg_sink_live *s = &d->ss->sinks[i];
        if (has_it(d, job, k, i))
            continue;
        if (write_row(d, i, row, kind) != 0) {
            lack++;
            s->missed++;
            continue;
        }
        /* before the next sink's write, which may crash: which sinks have
         * it is then in the journal (the last one's is the `done`) */
        if (recorded && (i != last || lack > 0) &&
            dlg_journal_record_sent(d->jn, job, k, s->spec->name, err, sizeof err) != 0)
            journal_error(d, err);
    }
    if (!recorded)
        return lack;
    if (lack == 0) {
        if (dlg_journal_record(d->jn, job, k, st, err, sizeof err) != 0)
            journal_error(d, err);
    } else if (!kept) /* --resume measures it again for the sinks that lack it */
        d->unkept++;
    return lack;
}

int dlg_deliver_kept_row(dlg_delivery *d, const char *job, size_t k, dlg_wire_point *out, char *st, size_t stlen)
{
    const dlg_journal_pending *p = dlg_journal_pending_of(d->jn, job, k);
    if (!p || !p->row)
        return -1;
    if (dlg_journal_row_decode(p->row, out) != 0) {
        char err[1200];
        snprintf(err, sizeof err, "%s: the kept row of [job %s] cell %zu does not decode: it is measured again for "
                 "the sinks that lack it", d->jn->path, job, k);
        journal_error(d, err);
        return -1;
    }
    snprintf(st, stlen, "%s", p->status);
    return 0;
}

bool dlg_deliver_partly_sent(const dlg_delivery *d, const char *job, size_t k, char *lacking, size_t len)
{
    const dlg_journal_pending *p = dlg_journal_pending_of(d->jn, job, k);
    size_t at = 0;
    lacking[0] = '\0';
    if (!p || strcmp(p->sinks, ",") == 0)
        return false;
    for (size_t i = 0; i < d->ss->n && at < len; i++)
        if (!dlg_journal_sent_to(p, d->ss->sinks[i].spec->name))
            at += (size_t)snprintf(lacking + at, len - at, "%s%s", at ? ", " : "", d->ss->sinks[i].spec->name);
    return true;
}

void dlg_deliver_say_missed(const dlg_delivery *d, bool *skip, FILE *out)
{
    for (size_t i = 0; i < d->ss->n; i++) {
        const dlg_sink_live *s = &d->ss->sinks[i];
        skip[i] = s->missed > 0;
        if (s->missed && !d->unkept)
            fprintf(out, "dlgauge: %s: incomplete: %zu result row%s did not reach it; %s keeps %s: dlgauge run "
                    "--resume sends %s\n", s->host->context, s->missed, s->missed == 1 ? "" : "s", d->jn->path,
                    s->missed == 1 ? "it" : "them", s->missed == 1 ? "it" : "them");
        else if (s->missed) /* the journal could not take some of them */
            fprintf(out, "dlgauge: %s: incomplete: %zu result row%s did not reach it; dlgauge run --resume sends "
                    "it those that %s keeps and measures the others again\n", s->host->context, s->missed,
                    s->missed == 1 ? "" : "s", d->jn->path);
    }
}
