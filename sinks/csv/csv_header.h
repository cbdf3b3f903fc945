/* Appending to a CSV file whose header is not the one this run would
 * write: the run's rows can still go in when every one of its columns is
 * in that header (in any order, among others), each value under its own
 * name. */
#ifndef DLG_CSV_HEADER_H
#define DLG_CSV_HEADER_H

#include <stddef.h>

/* Fits this run's columns (cols: ntags tag keys, then nfields field names)
 * into an existing header line (no line end) that starts with "time".
 * Returns 0 with *file_cols (the file's columns after "time", strdup'ed,
 * the caller frees each and the array), *nfile and *file_ntags (the
 * columns before the first of ours that is a field, read as tags); 1 when
 * they do not fit, *missing naming a column of ours the file lacks (NULL
 * when all are there but out of place or repeated); -DLG_ENOMEM. */
int csv_header_fit(const char *line, const char *const *cols, size_t ntags, size_t nfields, char ***file_cols,
                   size_t *nfile, size_t *file_ntags, const char **missing);

#endif
