/* Whose spool a file is: every spool's lock holds its sink's name, so the
 * live spool of sink "a_b" is not taken for the one an older dlgauge gave
 * sink "a b" (both a_b.lp), while one with an empty lock still is; and an open
 * that finds nothing spooled says where it looked (what `dlgauge flush`
 * shows).  Port 1 refuses connections: every point is spooled. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spool_sink.h"

/* Sink `name` spools one point into dir and closes. */
static void spool_one(const char *name, const char *dir)
{
    spool_sink s;
    spool_sink_open(&s, name, dir, true);
    spool_write_one(s.ops, s.st, 1);
    assert_int_equal(s.ops->flush(s.st, 1000000000u), -DLG_EAGAIN); /* kept in the spool */
    s.ops->close(s.st);
}

/* Opens and closes sink `name` on dir's spools; its warnings. */
static int open_warnings(const char *name, const char *dir, char *last, size_t len)
{
    spool_sink s;
    spool_sink_open(&s, name, dir, false);
    snprintf(last, len, "%s", s.m.last_log);
    int warnings = s.m.warnings;
    s.ops->flush(s.st, 1000000000u);
    s.ops->close(s.st);
    return warnings;
}

/* "a b" beside a live "a_b": no warning (there was one at every open);
 * the same a_b.lp with an empty lock (a dlgauge with spool locks but the
 * old names) is still pointed out. */
static void test_live_spool_of_another_sink(void **unused)
{
    (void)unused;
    char *dir = st_tempdir(), *lock = st_join(dir, "a_b.lp.lock"), *spool = st_join(dir, "a_b.lp"), last[1024];
    spool_one("a_b", dir);
    char *text = st_slurp(lock, NULL);
    assert_non_null(text);
    assert_string_equal(text, "a_b");
    free(text);
    assert_int_equal(open_warnings("a b", dir, last, sizeof last), 0);
    text = st_slurp(spool, NULL);
    assert_non_null(text);
    assert_int_equal(st_count_lines(text), 1); /* left to its sink */
    free(text);
    FILE *f = fopen(lock, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(open_warnings("a b", dir, last, sizeof last), 1);
    assert_non_null(strstr(last, spool));
    free(spool);
    free(lock);
    st_rmtree(dir);
    free(dir);
}

/* Nothing spooled: the spool looked at, absolute, and why it is there
 * when spool_dir is relative. */
static void test_nothing_spooled_says_where(void **unused)
{
    (void)unused;
    char *dir = st_tempdir(), cwd[4096], want[8400], last[1024];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    char *real = get_current_dir_name(); /* $TMPDIR may be a link */
    assert_non_null(real);
    assert_int_equal(open_warnings("x y", "sp", last, sizeof last), 0);
    snprintf(want, sizeof want, "nothing spooled in %s/sp/x%%20y.lp (spool_dir = sp is taken from the directory "
             "dlgauge runs in)", real);
    assert_string_equal(last, want);
    char *abs = st_join(real, "sp");
    assert_int_equal(open_warnings("x y", abs, last, sizeof last), 0);
    snprintf(want, sizeof want, "nothing spooled in %s/x%%20y.lp", abs);
    assert_string_equal(last, want);
    assert_int_equal(chdir(cwd), 0);
    free(abs);
    free(real);
    st_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_spool_of_another_sink),
        cmocka_unit_test(test_nothing_spooled_says_where),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
