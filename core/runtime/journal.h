/* The run journal: an append-only file, fsynced after every cell, so that
 * `dlgauge run --resume` after a kill -9 or a power loss skips the cells
 * already delivered to the sinks and keeps the run's identity.
 *
 *   dlgauge-journal 1 RUN_ID CONFIG_HASH
 *   ranks RANKS NODES               (the MPI ranks and nodes it ran on)
 *   done JOB CELL STATUS            (one line per delivered cell)
 *   inventory ID                    (the dlgauge_host point was delivered)
 *   inventory_sent ID SINK          (it reached that sink, not yet all)
 *   inventory_time ID TIME_NS       (its time, before any sink gets it)
 *   sent JOB CELL SINK              (the cell's row reached that sink)
 *   kept JOB CELL STATUS ROW        (its row, before any sink gets it: journal_row.h)
 *
 * A cell is done once its result row reached every sink.  Its row is kept
 * whole (`kept`, fsynced) before the first sink gets it, and with two
 * sinks or more each one it reached is recorded as it goes (`sent`, not
 * fsynced: the `done` after it is).  So whatever stops dlgauge after the
 * `kept` (a sink that refuses the row, one that kills dlgauge in its
 * write, a kill -9 or a power cut while the last sink syncs its file),
 * --resume sends that very row, not a new measurement, to each sink
 * without a `sent` for it, through the sink's write_again (plugin.h),
 * which skips a row the sink holds already, and records the cell done
 * once they all have it.  No sink gets a cell's row twice, nor lacks it;
 * a sink without write_again (ops version < 4) may get it twice.  A row
 * costs the journal about 3 KB (hex of a point_wire.h frame).
 * The dlgauge_host point goes the same way: its time first
 * (`inventory_time`), `inventory` once every sink took it, before that an
 * `inventory_sent` for each sink that did, so that --resume writes it to
 * the others alone, at its first time and through write_again: a sink
 * that took it just before dlgauge died skips it (an older dlgauge skips
 * those records, and at worst writes the point twice to a sink).
 *
 * Forward compatibility: a record's kind is its first word.  A line of a
 * kind this version does not know (a newer dlgauge's) is skipped, with one
 * note; fields past the ones a known kind has are ignored.  A newer kind
 * must therefore be safe to ignore (at worst a cell measured again); a
 * change that is not bumps the header's format number, which this version
 * refuses by name.  A known kind that cannot be read is an error at its
 * file:line, as is a first word that is no lowercase name (a damaged file).
 *
 * The ranks record follows the header: a run is one count of ranks and
 * nodes, and its rows say it, so --resume under another count is refused
 * (a row of 2 ranks and one of 1 under one run_id measure different
 * things).  A journal without it (written before it existed) is resumed
 * under any count; an older dlgauge skips it, as any unknown kind.
 *
 * A journal that cannot take the `kept` (a full disk) leaves the cell
 * to be measured again by --resume for the sinks that lack its row.  A
 * record is
 * appended whole or not at all (a full disk), so the file stays readable.
 * A run holds an exclusive flock on its journal until it closes it: a
 * second run of the same journal (create or resume) is refused. */
#ifndef DLG_JOURNAL_H
#define DLG_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct dlg_journal_entry {
    char *job;
    size_t cell;
} dlg_journal_entry;

/* A cell not done whose row reached some sinks, or was kept. */
typedef struct dlg_journal_pending {
    char *job;
    size_t cell;
    char *sinks;  /* ",a,b,": the sinks its row reached ("," none) */
    char *status; /* of the kept row, else NULL */
    char *row;    /* the kept row (journal_row.h), else NULL */
} dlg_journal_pending;

typedef struct dlg_journal {
    int fd;
    char path[1024];
    char run_id[64]; /* DLG_RUN_ID_MAX (plan.h) + 1 */
    char hash[32];
    dlg_journal_entry *done;
    size_t ndone;
    size_t nfailed; /* of those, cells whose status was not ok */
    uint64_t end; /* bytes of whole lines in the file */
    bool torn;    /* a failed append left a fragment past end */
    char inventory[24]; /* id of the last inventory delivered, "" none */
    char inventory_sent_id[24]; /* id of the last inventory_sent records, "" none */
    char *inventory_sinks;      /* ",a,b,": the sinks those name, NULL none */
    char inventory_time_id[24]; /* id of the last inventory_time record, "" none */
    int64_t inventory_time_ns;  /* its time */
    int unlocked;       /* flock's errno where the file system has no locks, else 0 */
    int unknown_line;   /* first line of a kind this version does not know, 0 none */
    char unknown_kind[32]; /* its kind, shortened with "..." past 31 bytes */
    size_t nunknown;    /* lines skipped as such */
    dlg_journal_pending *pending; /* cells with sent or kept records, not done */
    size_t npending;
    int ranks, nodes; /* of its ranks record; 0 none (an older journal) */
} dlg_journal;

struct dlg_config;

/* FNV-1a over the configuration as resolved (files, --set), for resume. */
void dlg_journal_hash(const void *data, size_t len, uint64_t *h);
/* Adds every resolved section and entry of cfg to h (start h at 0). */
void dlg_journal_hash_config(const struct dlg_config *cfg, uint64_t *h);
/* That hash of cfg alone, in hex: a cell's process compares its own with
 * its parent's, as the file may have been edited since the run began. */
void dlg_journal_config_id(const struct dlg_config *cfg, char *out, size_t len);
/* Reads file (with its --set overrides) again and compares its id with id:
 * 0 the same; 1 edited since, why[] saying so; -1 when it cannot be read
 * (out of memory, no longer there...), why[] naming the reason, which is
 * no sign of an edit. */
int dlg_journal_config_recheck(const char *file, const char *const *sets, size_t nsets, const char *id,
                               char *why, size_t len);

/* Starts a fresh journal (truncating an old one that no run holds). */
int dlg_journal_create(dlg_journal *j, const char *path, const char *run_id, const char *hash, char *err,
                       size_t errlen);
/* Reopens an interrupted run's journal; refuses one made for another
 * configuration. */
int dlg_journal_resume(dlg_journal *j, const char *path, const char *hash, char *err, size_t errlen);
/* After create: the run's count of ranks and nodes (fsynced). */
int dlg_journal_record_ranks(dlg_journal *j, int ranks, int nodes, char *err, size_t errlen);
/* After resume: 0 when the journal's run had ranks and nodes (or says
 * nothing of them); else -1, err[] naming both counts. */
int dlg_journal_check_ranks(const dlg_journal *j, int ranks, int nodes, char *err, size_t errlen);
bool dlg_journal_is_done(const dlg_journal *j, const char *job, size_t cell);
/* Records the cell done (fsynced); it is pending no more. */
int dlg_journal_record(dlg_journal *j, const char *job, size_t cell, const char *status, char *err,
                       size_t errlen);
/* The cell's row reached sink (appended, not fsynced: see above). */
int dlg_journal_record_sent(dlg_journal *j, const char *job, size_t cell, const char *sink, char *err,
                            size_t errlen);
/* The cell's row, as hex (journal_row.h), missed a sink: kept (fsynced). */
int dlg_journal_record_kept(dlg_journal *j, const char *job, size_t cell, const char *status, const char *row,
                            char *err, size_t errlen);
/* The cell's pending record (its row reached some sinks, or was kept), or
 * NULL: a cell done, or not begun. */
const dlg_journal_pending *dlg_journal_pending_of(const dlg_journal *j, const char *job, size_t cell);
/* Whether p says its row reached sink. */
bool dlg_journal_sent_to(const dlg_journal_pending *p, const char *sink);
/* How many cells have a kept row (for the resume's first line). */
size_t dlg_journal_nkept(const dlg_journal *j);
/* The run's dlgauge_host point (inventory.h), of id, went to the sinks: a
 * resumed run on the same machine, unchanged, does not write it again. */
int dlg_journal_record_inventory(dlg_journal *j, const char *id, char *err, size_t errlen);
bool dlg_journal_has_inventory(const dlg_journal *j, const char *id);
/* The point of id reached sink, not yet every sink (fsynced); and whether
 * the journal says so, or that every sink has it. */
int dlg_journal_record_inventory_sent(dlg_journal *j, const char *id, const char *sink, char *err,
                                      size_t errlen);
bool dlg_journal_inventory_sent_to(const dlg_journal *j, const char *id, const char *sink);
/* The time of the point of id, before any sink gets it (fsynced); and
 * that time, where the journal has one for id. */
int dlg_journal_record_inventory_time(dlg_journal *j, const char *id, int64_t time_ns, char *err, size_t errlen);
bool dlg_journal_inventory_time(const dlg_journal *j, const char *id, int64_t *time_ns);
/* Once per run, after create or resume: a "dlgauge: note: " line to out for
 * a journal used unlocked, and one for the lines that resume skipped. */
void dlg_journal_print_notes(const dlg_journal *j, FILE *out);
void dlg_journal_close(dlg_journal *j);

#endif
