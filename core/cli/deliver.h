/* A cell's result row into the run's sinks, each exactly once, across
 * --resume: the journal keeps the row before the sinks get it and says
 * which sinks have it (journal.h); --resume sends that very row again to
 * the others, which skip it where they hold it already (write_again).  A
 * cell is done once every sink has its row. */
#ifndef DLG_DELIVER_H
#define DLG_DELIVER_H

#include "journal.h"
#include "point_wire.h"
#include "sinkset.h"

#include <stdio.h>

typedef struct dlg_delivery {
    dlg_sinkset *ss;
    dlg_journal *jn;
    char said[1200]; /* the journal error said last: a full disk is said once */
    size_t unkept;   /* rows that missed a sink and that the journal could not keep */
} dlg_delivery;

/* What a row given to dlg_deliver_row is. */
typedef enum dlg_row_kind {
    DLG_ROW_MEASURED, /* just measured: kept, then done where every sink took it */
    DLG_ROW_KEPT,     /* the journal's kept row, sent again (write_again): done, or stays kept */
    DLG_ROW_PARTIAL,  /* a stopped cell's: sent, not recorded (--resume measures it again) */
} dlg_row_kind;

/* Sends row, the result of cell k of job (status st), to every sink that
 * lacks it, and records that in the journal as kind says: kept before
 * the sinks get a measured row, done where every sink has it.  Returns
 * how many sinks lack it. */
size_t dlg_deliver_row(dlg_delivery *d, const char *job, size_t k, const char *st, const dlg_point *row,
                       dlg_row_kind kind);
/* The row of cell k of job that the journal kept (its status into st):
 * 0, or -1 when it has none, or one that does not decode (said once on
 * stderr: the cell is measured again). */
int dlg_deliver_kept_row(dlg_delivery *d, const char *job, size_t k, dlg_wire_point *out, char *st, size_t stlen);
/* Whether some sink already has the row of cell k of job, which is not
 * done (its row reached some sinks before dlgauge died): names the
 * others, which lack it, into lacking (", "-separated). */
bool dlg_deliver_partly_sent(const dlg_delivery *d, const char *job, size_t k, char *lacking, size_t len);
/* One line per sink that lacks result rows of this process (said before
 * the sinks close); skip[i] is then set for its files. */
void dlg_deliver_say_missed(const dlg_delivery *d, bool *skip, FILE *out);

#endif
