/* Where a run's rows go when the CSV file's header does not fit them:
 * PATH with ".N" before its extension (results/run.csv -> run.2.csv). */
#ifndef DLG_CSV_ROTATE_H
#define DLG_CSV_ROTATE_H

/* The n-th alternative of path (malloc'd), or NULL when out of memory. */
char *csv_rotated_path(const char *path, int n);

#endif
