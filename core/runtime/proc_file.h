/* Small text files of /proc and /sys, read without allocating: open(2)
 * and read(2) into the caller's buffer, where fopen() would malloc a FILE.
 * So a value never reads as "unknown", and a line is never left out of an
 * inventory, because memory was short at that moment. */
#ifndef DLG_PROC_FILE_H
#define DLG_PROC_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* The first line of path without its newline, cut to len (> 0): 0, or -1
 * with out "" when the file cannot be opened or read (errno says why). */
int dlg_file_line(const char *path, char *out, size_t len);

/* Calls each(line, ctx) for every line of path, without its newline (a
 * line longer than 16 KiB is cut there, its rest skipped), until each
 * returns false: 0, or -1 when the file cannot be opened or read (errno
 * says why; lines before a failed read were seen). */
int dlg_file_lines(const char *path, bool (*each)(const char *line, void *ctx), void *ctx);

/* The value of the first line "key: value" (spaces or tabs may come
 * before the colon: "cpu MHz\t\t: 2596.148") of a
 * file such as /proc/cpuinfo or /proc/meminfo into out, cut to len: 0, or
 * -1 when the file or the key is missing.  Lines are read 16 KiB at most
 * (the longest, cpuinfo's flags, is about 1.5 KiB). */
int dlg_proc_value(const char *path, const char *key, char *out, size_t len);

#endif
