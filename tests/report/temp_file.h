/* Temporary files for the report's tests: one holding text, and a file's
 * text read back. */
#ifndef DLG_TEST_REPORT_TEMP_FILE_H
#define DLG_TEST_REPORT_TEMP_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The whole file at path (malloc'd, NUL-terminated), or NULL where there
 * is none. */
static inline char *file_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    p[n] = '\0';
    fclose(f);
    return p;
}

#endif
