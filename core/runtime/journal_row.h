/* A result row kept in the run journal (journal.h, the `kept` record)
 * before the sinks get it, so that --resume can send that very row to the
 * sinks that may lack it instead of measuring the cell again (which would
 * put a second, different row into the sinks that have it).
 * The row is a point_wire.h frame, in lowercase hex: one journal line. */
#ifndef DLG_JOURNAL_ROW_H
#define DLG_JOURNAL_ROW_H

#include "point_wire.h"

/* p as hex (malloc'd), or NULL with errno (out of memory, too large). */
char *dlg_journal_row_encode(const dlg_point *p);
/* The row of hex into *out: 0, or -1 for one that does not decode. */
int dlg_journal_row_decode(const char *hex, dlg_wire_point *out);
/* Whether s is hex of whole bytes (what a `kept` record must hold). */
bool dlg_journal_row_is_hex(const char *s);

#endif
