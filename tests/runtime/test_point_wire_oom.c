/* The cell's pipe when memory runs out.  Sending allocates nothing, so a
 * cell short of memory still sends the result it measured (it built the
 * frame in a growing buffer: a failed realloc lost the result, and the
 * cell exited 1 without a word).  Receiving a frame there is no memory for
 * reads past it and says -ENOMEM, so the next frame is read whole (the
 * parent stopped reading, and took a lost progress point for a torn
 * pipe: the cell's result was lost behind it). */
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
#include "rt_oom.h"

static const dlg_tag tags[] = {{"job", "j"}, {"workload", "w"}};

/* A point of `fields` fields, one a string of `text` bytes. */
static dlg_point make_point(const char *measurement, dlg_field *f, char *text, size_t len)
{
    memset(text, 'x', len);
    text[len] = '\0';
    f[0] = (dlg_field){"throughput", DLG_FIELD_DOUBLE, {.d = 12.5}};
    f[1] = (dlg_field){"steps", DLG_FIELD_UINT, {.u = 7}};
    f[2] = (dlg_field){"log", DLG_FIELD_STRING, {.s = text}};
    return (dlg_point){.measurement = measurement, .time_ns = 42, .tags = tags, .ntags = 2, .fields = f,
                       .nfields = 3};
}

static void check_point(const dlg_wire_point *wp, const char *measurement, size_t len)
{
    assert_string_equal(wp->point.measurement, measurement);
    assert_int_equal(wp->point.ntags, 2);
    assert_string_equal(wp->point.tags[1].value, "w");
    assert_int_equal(wp->point.nfields, 3);
    assert_true(wp->point.fields[0].v.d == 12.5);
    assert_int_equal(wp->point.fields[1].v.u, 7);
    assert_int_equal(strlen(wp->point.fields[2].v.s), len);
}

/* Frames of 10 KiB go out through the sender's 4 KiB buffer: no
 * allocation, and they read back whole. */
static void send_allocates_nothing(void **state)
{
    (void)state;
    if (!rt_oom_possible())
        skip();
    static char text[10000];
    dlg_field f[3];
    dlg_point p = make_point("dlgauge_result", f, text, sizeof text - 1);
    FILE *wire = tmpfile();
    assert_non_null(wire);
    rt_oom_arm(1);
    int rc = dlg_wire_send(fileno(wire), &p);
    long made = rt_oom_disarm();
    assert_int_equal(rc, 0);
    assert_int_equal(made, 0);
    lseek(fileno(wire), 0, SEEK_SET);
    dlg_wire_point wp;
    assert_int_equal(dlg_wire_recv(fileno(wire), &wp), 1);
    check_point(&wp, "dlgauge_result", sizeof text - 1);
    dlg_wire_point_free(&wp);
    fclose(wire);
}

/* A progress point, then the result: each allocation of receiving the
 * first fails in turn; the result after it still arrives whole. */
static void lost_frame_keeps_the_next(void **state)
{
    (void)state;
    if (!rt_oom_possible())
        skip();
    static char text[6000];
    dlg_field f[3];
    FILE *wire = tmpfile();
    assert_non_null(wire);
    dlg_point progress = make_point("dlgauge_progress", f, text, 3000);
    assert_int_equal(dlg_wire_send(fileno(wire), &progress), 0);
    dlg_point result = make_point("dlgauge_result", f, text, sizeof text - 1);
    assert_int_equal(dlg_wire_send(fileno(wire), &result), 0);
    int lost = 0;
    for (long n = 1;; n++) {
        lseek(fileno(wire), 0, SEEK_SET);
        dlg_wire_point wp;
        rt_oom_arm(n);
        int rc = dlg_wire_recv(fileno(wire), &wp);
        long made = rt_oom_disarm();
        if (rc == 1) {
            check_point(&wp, "dlgauge_progress", 3000);
            dlg_wire_point_free(&wp);
        } else {
            assert_int_equal(rc, -ENOMEM);
            lost++;
        }
        assert_int_equal(dlg_wire_recv(fileno(wire), &wp), 1);
        check_point(&wp, "dlgauge_result", sizeof text - 1);
        dlg_wire_point_free(&wp);
        assert_int_equal(dlg_wire_recv(fileno(wire), &wp), 0); /* end of stream, in step */
        if (made < n)
            break;
    }
    assert_int_equal(lost, 2); /* the body's buffer, the point's arena */
    fclose(wire);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(send_allocates_nothing),
        cmocka_unit_test(lost_frame_keeps_the_next),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
