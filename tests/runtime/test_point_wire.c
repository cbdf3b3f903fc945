/* Points over the cell's pipe: a point past the wire's limits (4 MiB, 256
 * fields or tags) was sent whole and refused by the parent as a broken
 * frame, the cell's whole result lost with no word of why.  Now the send
 * keeps what fits and names the workload and the limit on stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "point_wire.h"

typedef struct sent {
    int rc;             /* dlg_wire_send's */
    int got;            /* dlg_wire_recv's of what it wrote */
    dlg_wire_point wp;
    char err[1024];     /* its stderr */
} sent;

/* Sends p through a file (a pipe would fill), reads it back. */
static void send_back(const dlg_point *p, sent *s)
{
    FILE *wire = tmpfile(), *err = tmpfile();
    assert_true(wire && err);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(err), 2);
    s->rc = dlg_wire_send(fileno(wire), p);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(err);
    size_t n = fread(s->err, 1, sizeof s->err - 1, err);
    s->err[n] = '\0';
    lseek(fileno(wire), 0, SEEK_SET);
    s->got = dlg_wire_recv(fileno(wire), &s->wp);
    fclose(wire);
    fclose(err);
}

static const dlg_tag tags[] = {{"job", "j"}, {"workload", "wordy"}};

/* A 5 MiB string field: the rest of the result arrives, the field is
 * named as left out (it was all refused as a broken frame). */
static void oversized_string_left_out(void **state)
{
    (void)state;
    size_t big = 5u << 20;
    char *text = malloc(big + 1);
    assert_non_null(text);
    memset(text, 'x', big);
    text[big] = '\0';
    dlg_field f[] = {{"throughput", DLG_FIELD_DOUBLE, {.d = 123.5}},
                     {"log", DLG_FIELD_STRING, {.s = text}},
                     {"note", DLG_FIELD_STRING, {.s = "short"}}};
    dlg_point p = {"dlgauge_result", tags, 2, f, 3, 42};
    sent s;
    send_back(&p, &s);
    assert_int_equal(s.rc, 0);
    assert_int_equal(s.got, 1);
    assert_int_equal(s.wp.point.nfields, 2);
    assert_true(dlg_wire_field(&s.wp, "throughput")->v.d == 123.5);
    assert_string_equal(dlg_wire_field(&s.wp, "note")->v.s, "short");
    assert_null(dlg_wire_field(&s.wp, "log"));
    assert_non_null(strstr(s.err, "dlgauge: workload wordy: its dlgauge_result point is "));
    assert_non_null(strstr(s.err, "more than the 4194304 a point may be: its string field 'log' (5242880 bytes) "
                                  "is left out\n"));
    assert_ptr_equal(strchr(s.err, '\n') + 1, s.err + strlen(s.err)); /* one line */
    dlg_wire_point_free(&s.wp);
    free(text);
}

/* 300 fields: refused at the send with one line (it was written, and the
 * parent read a broken frame); nothing goes down the wire. */
static void too_many_fields_refused(void **state)
{
    (void)state;
    dlg_field *f = calloc(300, sizeof *f);
    char(*keys)[8] = calloc(300, sizeof *keys);
    assert_true(f && keys);
    for (size_t i = 0; i < 300; i++) {
        snprintf(keys[i], sizeof keys[i], "f%zu", i);
        f[i] = (dlg_field){keys[i], DLG_FIELD_INT, {.i = (int64_t)i}};
    }
    dlg_point p = {"dlgauge_result", tags, 2, f, 300, 42};
    sent s;
    send_back(&p, &s);
    assert_int_equal(s.rc, -EMSGSIZE);
    assert_int_equal(s.got, 0); /* an empty stream */
    assert_string_equal(s.err, "dlgauge: workload wordy: its dlgauge_result point has 2 tags and 300 fields, more "
                               "than the 256 of either a point may carry to the run: not sent\n");
    free(f);
    free(keys);
}

/* A string field with no value whose 5 MiB key is what overflows: left
 * out as any string field (its value's length was read from NULL). */
static void null_string_with_huge_key(void **state)
{
    (void)state;
    size_t big = 5u << 20;
    char *key = malloc(big + 1);
    assert_non_null(key);
    memset(key, 'k', big);
    key[big] = '\0';
    dlg_field f[] = {{"throughput", DLG_FIELD_DOUBLE, {.d = 1}}, {key, DLG_FIELD_STRING, {.s = NULL}}};
    dlg_point p = {"dlgauge_result", tags, 2, f, 2, 42};
    sent s;
    send_back(&p, &s);
    assert_int_equal(s.rc, 0);
    assert_int_equal(s.got, 1);
    assert_int_equal(s.wp.point.nfields, 1);
    assert_non_null(strstr(s.err, "(0 bytes) is left out\n"));
    dlg_wire_point_free(&s.wp);
    free(key);
}

/* Within the limits: sent as it is, nothing said. */
static void small_point_unchanged(void **state)
{
    (void)state;
    dlg_field f[] = {{"ok", DLG_FIELD_BOOL, {.b = true}}, {"s", DLG_FIELD_STRING, {.s = "v"}}};
    dlg_point p = {"dlgauge_progress", tags, 2, f, 2, 7};
    sent s;
    send_back(&p, &s);
    assert_int_equal(s.rc, 0);
    assert_int_equal(s.got, 1);
    assert_int_equal(s.wp.point.nfields, 2);
    assert_int_equal(s.wp.point.ntags, 2);
    assert_string_equal(s.err, "");
    dlg_wire_point_free(&s.wp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oversized_string_left_out),
        cmocka_unit_test(too_many_fields_refused),
        cmocka_unit_test(null_string_with_huge_key),
        cmocka_unit_test(small_point_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
