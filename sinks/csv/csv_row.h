/* CSV text per RFC 4180: quoting, rows of a point, and reading a header
 * line back into columns (to say which column of an old file differs). */
#ifndef DLG_CSV_ROW_H
#define DLG_CSV_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlgauge/plugin.h>

#include "sbuf.h"

/* Appends s as one CSV field: quoted when it holds a comma, a double quote,
 * CR or LF or starts or ends with a space or tab, inner quotes doubled. */
int csv_add_field(dlg_sbuf *b, const char *s);

/* Appends the header line ("time", tag keys, field names; '\n' ended). */
int csv_add_header(dlg_sbuf *b, const char *const *tags, size_t ntags,
                   const char *const *fields, size_t nfields);

/* Appends the row for p: time, then the value of each tag and field column
 * (empty when p lacks it; non-finite floats are empty too).  '\n' ended. */
int csv_add_row(dlg_sbuf *b, const dlg_point *p, const char *const *tags, size_t ntags,
                const char *const *fields, size_t nfields);

/* Splits one header line (no line end) into column `index` (0-based),
 * unquoted, into out.  Returns 1 when the column exists, 0 when the line
 * has fewer columns, -DLG_ENOMEM. */
int csv_column(const char *line, size_t index, dlg_sbuf *out);

/* Finds where the last record of CSV text starts, fed in pieces: a record
 * ends at a line end outside quotes (a quoted field may hold line ends).
 * The text ends with a whole record when !quoted && start == len. */
typedef struct csv_scan {
    bool quoted;
    uint64_t len;   /* bytes fed */
    uint64_t start; /* offset of the last record */
} csv_scan;

void csv_scan_add(csv_scan *c, const char *buf, size_t n);

#endif
