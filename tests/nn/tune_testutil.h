/* A tuning record of the test's own (DLGAUGE_TUNE, core/nn/tune.h), and
 * what the code under test printed on stderr.  Public interfaces only, so
 * that the tests also build against code without the record. */
#ifndef DLG_TEST_NN_TUNE_TESTUTIL_H
#define DLG_TEST_NN_TUNE_TESTUTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A path no file has yet, set as $DLGAUGE_TUNE. */
static inline void tt_fresh_record(char path[64])
{
    snprintf(path, 64, "/tmp/dlg_tune_test_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    assert_int_equal(setenv("DLGAUGE_TUNE", path, 1), 0);
}

/* Removes the record and its lock file. */
static inline void tt_remove_record(const char *path)
{
    char lock[80];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    unlink(lock);
}

/* The whole file (malloc'ed, NUL-terminated), or NULL if there is none. */
static inline char *tt_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    assert_non_null(buf);
    size_t got = fread(buf, 1, (1 << 20) - 1, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

static inline void tt_write(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* stderr into a temporary file from tt_capture() to tt_captured(), which
 * returns what was written (malloc'ed) and restores stderr. */
typedef struct tt_stderr {
    int saved;
    char path[64];
} tt_stderr;

static inline void tt_capture(tt_stderr *c)
{
    snprintf(c->path, sizeof c->path, "/tmp/dlg_tune_err_XXXXXX");
    int fd = mkstemp(c->path);
    assert_true(fd >= 0);
    fflush(stderr);
    c->saved = dup(2);
    assert_true(c->saved >= 0 && dup2(fd, 2) == 2);
    close(fd);
}

static inline char *tt_captured(tt_stderr *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    char *text = tt_read(c->path);
    unlink(c->path);
    fprintf(stderr, "%s", text ? text : ""); /* still shown in the test's log */
    return text;
}

/* What a plan tells through dlg_plan_opts.note (note = tt_note_line,
 * note_ctx = a tt_noted): its lines, joined. */
typedef struct tt_noted {
    char text[2048];
    int lines;
} tt_noted;

static inline void tt_note_line(void *ctx, const char *line)
{
    tt_noted *nd = ctx;
    size_t len = strlen(nd->text);
    snprintf(nd->text + len, sizeof nd->text - len, "%s\n", line);
    nd->lines++;
}

/* $DLGAUGE_TUNE set to "off": no record, which would keep a test's
 * injected timings or hand it another test's choices.  Returns the value
 * to give back to tt_tune_restore. */
static inline char *tt_tune_off(void)
{
    char *saved = getenv("DLGAUGE_TUNE") ? strdup(getenv("DLGAUGE_TUNE")) : NULL;
    setenv("DLGAUGE_TUNE", "off", 1);
    return saved;
}

static inline void tt_tune_restore(char *saved)
{
    if (saved)
        setenv("DLGAUGE_TUNE", saved, 1);
    else
        unsetenv("DLGAUGE_TUNE");
    free(saved);
}

#endif
