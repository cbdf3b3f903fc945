/* A file's whole text in a test (cmocka asserts: include after cmocka.h). */
#ifndef DLG_TEST_FILE_TEXT_H
#define DLG_TEST_FILE_TEXT_H

#include <stdio.h>
#include <stdlib.h>

/* The whole file at path (malloc'd, NUL-terminated; *len its bytes when
 * len is not NULL), or NULL where there is none. */
static inline char *file_text_len(const char *path, size_t *len)
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
    if (len)
        *len = (size_t)n;
    return p;
}

static inline char *file_text(const char *path) { return file_text_len(path, NULL); }

#endif
