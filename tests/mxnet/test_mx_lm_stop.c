/* lstm-ptb's corpus load heeds a stop request (Ctrl-C): reading the text,
 * generating a synthetic one and tokenising each ask host->stopping()
 * every MiB and end with a bare -DLG_ESTOP (no error: the runner writes
 * the cell as stopped).  A storage backend of the test's own serves a
 * text of PIECES read pieces and raises the mock host's stop flag during
 * its first read (the load must read no further) or its last (the load
 * must stop in the tokenising).  Before, the load ran to its end: a
 * Ctrl-C waited for the whole of a large corpus. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lm_corpus.h"
#include "mock_host.h"

#define PIECE ((uint64_t)1 << 20) /* lm_corpus.c's STOP_POLL_BYTES */
#define SIZE (3 * PIECE - 9)      /* three read pieces, the last short, at a line end */

typedef struct text_store {
    mock_host *m;
    uint64_t bytes; /* served so far */
    enum { STOP_NEVER, STOP_FIRST, STOP_LAST } stop; /* the read that raises it */
} text_store;

static int ts_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst, (void)h, (void)path, (void)flags, (void)f;
    return 0;
}

static int ts_close(dlg_file *f)
{
    (void)f;
    return 0;
}

static int ts_size(dlg_file *f, uint64_t *out)
{
    (void)f;
    *out = SIZE;
    return 0;
}

/* "w0 w1 ... \n" lines of ten-byte cycles: words and line ends alike. */
static int64_t ts_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    text_store *s = f->inst;
    size_t k = off >= SIZE ? 0 : SIZE - off < n ? (size_t)(SIZE - off) : n;
    for (size_t i = 0; i < k; i++)
        ((char *)buf)[i] = "ab cd ef\n "[(off + i) % 10];
    s->bytes += k;
    if (s->stop == STOP_FIRST || (s->stop == STOP_LAST && off + k == SIZE))
        s->m->stop = true;
    return (int64_t)k;
}

static const dlg_storage_ops text_ops = {
    .version = 1,
    .file_size = sizeof(dlg_file),
    .open = ts_open,
    .close = ts_close,
    .size = ts_size,
    .read = ts_read,
};

/* lm_corpus_load of data on a mock host (with s's backend, or plain files
 * when s is NULL), stop preset as given; its return, errors in *errors. */
static int load(const char *data, text_store *s, bool stop, int *errors)
{
    mock_host m;
    mock_host_init(&m);
    m.stop = stop;
    if (s) {
        s->m = &m;
        assert_int_equal(mock_add_storage(&m, "text", &text_ops, s), 0);
    }
    lm_corpus c;
    int rc = lm_corpus_load(&c, &m.host, data, 100, 1);
    if (rc == 0)
        lm_corpus_free(&c);
    *errors = m.errors;
    mock_host_fini(&m);
    return rc;
}

static void read_stops_at_once(void **st)
{
    (void)st;
    text_store s = {.stop = STOP_FIRST};
    int errors = 0;
    assert_int_equal(load("text:corpus.txt", &s, false, &errors), -DLG_ESTOP);
    assert_int_equal(errors, 0);
    assert_int_equal(s.bytes, PIECE); /* the first piece, no more */
}

static void tokenising_stops(void **st)
{
    (void)st;
    text_store s = {.stop = STOP_LAST};
    int errors = 0;
    assert_int_equal(load("text:corpus.txt", &s, false, &errors), -DLG_ESTOP);
    assert_int_equal(errors, 0);
    assert_int_equal(s.bytes, SIZE); /* read whole, then stopped */
}

/* The same text without a stop loads (the backend's reads are whole). */
static void no_stop_loads(void **st)
{
    (void)st;
    mock_host m;
    mock_host_init(&m);
    text_store s = {.m = &m, .stop = STOP_NEVER};
    assert_int_equal(mock_add_storage(&m, "text", &text_ops, &s), 0);
    lm_corpus c;
    assert_int_equal(lm_corpus_load(&c, &m.host, "text:corpus.txt", 100, 1), 0);
    /* 3 words and <eos> per 10 bytes, the last 10% of lines held out */
    assert_int_equal(c.vocab, 4);
    int64_t lines = (int64_t)((SIZE + 1) / 10);
    assert_int_equal(c.ntrain + c.nvalid, 4 * lines);
    lm_corpus_free(&c);
    mock_host_fini(&m);
}

static void synthetic_stops(void **st)
{
    (void)st;
    int errors = 0;
    assert_int_equal(load("synthetic:100000", NULL, true, &errors), -DLG_ESTOP);
    assert_int_equal(errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_stops_at_once),
        cmocka_unit_test(tokenising_stops),
        cmocka_unit_test(no_stop_loads),
        cmocka_unit_test(synthetic_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
