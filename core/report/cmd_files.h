/* Files that dlgauge report and compare name on their command line: an
 * input is checked before it is read, so that a typo or a folder gets the
 * reason; an output replaces the old file only once it is whole. */
#ifndef DLG_REP_CMD_FILES_H
#define DLG_REP_CMD_FILES_H

#include <stddef.h>
#include <stdio.h>

/* 0 when path opens for reading and is no folder; else -DLG_EIO after
 * "PATH: cannot open WHAT: REASON" or "PATH: is a directory, not WHAT".
 * what: "a results file", "the instance catalog", ... */
int rep_input_check(const char *path, const char *what, char *err, size_t errlen);

/* Writes ctx through fn to path ("-": standard output).  A regular file is
 * written as PATH.part and renamed over PATH when complete, with the
 * permissions of the PATH it replaces; on a failed write, or a SIGINT,
 * SIGTERM or SIGHUP meanwhile, the .part is removed and PATH is left as it
 * was.  A device or FIFO (/dev/stdout) is written in place.  Returns 0;
 * -DLG_EIO after one line in err naming path and why; or the stop
 * signal's number (> 0), err saying so. */
typedef void rep_writer(FILE *f, const void *ctx);
int rep_output_write(const char *path, rep_writer *fn, const void *ctx, char *err, size_t errlen);

#endif
