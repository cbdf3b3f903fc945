/* Whether a line-per-record file (CSV rows, JSON Lines) already holds a
 * record: how a sink's write_again (plugin.h) skips a row that the run
 * --resume completes had stored just before it died. */
#ifndef DLG_SINKLINE_H
#define DLG_SINKLINE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the file at fd holds line (len bytes, '\n' ended) as a whole
 * line: at the start of the file or after a '\n'.  Searched from the end,
 * where a row written just before a crash is, so a hit costs one read and
 * a miss one pass over the file.  Hold sink_lock, so that no append lands
 * midway.  0 or an errno value. */
int sink_holds_line(int fd, const char *line, size_t len, bool *found);

/* A sink's write_again on a file of such records (path, for messages),
 * under the caller's sink_lock: 1 when the file holds line already (an
 * info line says it is not written again), 0 when it does not, or
 * -DLG_EIO after host->error() when the file cannot be read. */
struct dlg_host;
int sink_skip_held(const struct dlg_host *h, int fd, const char *path, const char *line, size_t len);

#endif
