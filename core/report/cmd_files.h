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

/* Writes ctx through fn to path ("-": standard output).  A new file is
 * written as PATH.part and renamed to PATH when complete.  An existing
 * PATH its user may not write is refused, as opening it would be.  One
 * they may is replaced the same way, the .part taking its owner, group and
 * permissions; where that would lose something (PATH has other hard
 * links, its owner or group cannot be given to the .part) or the folder
 * takes no .part (a note on stderr), the report is made in memory and
 * then written over PATH in place, its space reserved first (where the
 * file system can).  A failed write, or a SIGINT, SIGTERM or SIGHUP
 * meanwhile, leaves PATH as it was (but for an I/O error while written in
 * place, which err says may have left it incomplete) and no .part.  A device
 * or FIFO (/dev/stdout) is written in place.  fn returns 0, or ENOMEM
 * when it left part out for want of memory: a failed write.  Returns 0;
 * -DLG_ENOMEM or -DLG_EIO after one line in err naming path and why; or
 * the stop signal's number (> 0), err saying so. */
typedef int rep_writer(FILE *f, const void *ctx);
int rep_output_write(const char *path, rep_writer *fn, const void *ctx, char *err, size_t errlen);

#endif
