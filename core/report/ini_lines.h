/* inih over whole lines, for the report's INI files (catalogs, disk
 * profiles).  inih's own reader cuts a line at its buffer (199 characters)
 * and reads the rest as a line of its own: the tail of a long comment
 * became a key, and every later line number was off by one. */
#ifndef DLG_REPORT_INI_LINES_H
#define DLG_REPORT_INI_LINES_H

#include <ini.h>
#include <stddef.h>
#include <stdio.h>

typedef struct rep_ini {
    FILE *f;
    char *buf; /* getline's */
    size_t cap;
    int line;         /* lines read so far: the line the handler is called for */
    int section_line; /* line of the latest [section] header */
    int keys_since;   /* key lines since that header */
    int first_line;   /* the first line neither blank nor a comment */
    int empty_line;   /* first [section] header with no keys (0: none), which
                       * inih never shows the handler */
    int bad_line;     /* first line the reader refused (0: none) */
    int open_errno;   /* fopen's errno when it failed (-1 or -2) */
    char bad[96];
} rep_ini;

/* ini_parse over path with whole lines: a comment of any length is one
 * line; a longer line of anything else, or one holding a NUL byte, is an
 * error.  The handler's user is `user`; it may read ini->line and
 * ini->section_line while called.  Returns as ini_parse (0, -1 cannot
 * open, -2 out of memory, or the first bad line); when that line is the
 * reader's, ini->bad says why (else ini->bad is ""). */
int rep_ini_parse(rep_ini *ini, const char *path, ini_handler handler, void *user);

#endif
