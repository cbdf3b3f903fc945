/* The journal's cells that are pending (journal.h): not done, with a row
 * that reached some sinks (`sent`) or was kept (`kept`).  Few at a time:
 * a cell's entry goes at its `done`.  For journal.c. */
#ifndef DLG_JOURNAL_PENDING_H
#define DLG_JOURNAL_PENDING_H

#include "journal.h"

/* The cell's row reached sink / was kept as row with status: 0, or -1
 * when out of memory. */
int dlg_journal_add_sent(dlg_journal *j, const char *job, size_t cell, const char *sink);
int dlg_journal_add_kept(dlg_journal *j, const char *job, size_t cell, const char *status, const char *row);
/* The cell is done: no longer pending. */
void dlg_journal_drop_pending(dlg_journal *j, const char *job, size_t cell);
void dlg_journal_pending_free_all(dlg_journal *j);

#endif
