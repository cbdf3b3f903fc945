/* Temporary files for the report's tests: one holding text, and a file's
 * text read back. */
#ifndef DLG_TEST_REPORT_TEMP_FILE_H
#define DLG_TEST_REPORT_TEMP_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_text.h" /* a file's text read back */

/* A file holding text; the caller unlinks path (at least 32 bytes). */
static inline void temp_file(char *path, const char *text)
{
    strcpy(path, "/tmp/dlg-report-testXXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

#endif
