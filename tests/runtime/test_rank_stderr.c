/* A rank's prefixed stderr (core/cli/run_ranks.c): lines come out as
 * "rank N: ...", and the prefixing FILE outlives dlg_rank_stderr_end.  A
 * library loaded while it was stderr keeps it: libstdc++ (pulled in by a
 * plugin's oneDNN) binds std::cerr to the stderr of that moment and
 * flushes it at exit; when _end closed it, that flush went to freed
 * memory and hung rank exits under mpirun. */
#include "run_ranks.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fd 2 into a temporary file for the test's writes; returns the old fd 2 */
static int capture_fd2(FILE **tmp)
{
    *tmp = tmpfile();
    assert_non_null(*tmp);
    int old = dup(2);
    assert_true(old >= 0);
    assert_int_equal(dup2(fileno(*tmp), 2), 2);
    return old;
}

static void read_back(FILE *tmp, int old, char *buf, size_t len)
{
    assert_int_equal(dup2(old, 2), 2);
    close(old);
    rewind(tmp);
    size_t n = fread(buf, 1, len - 1, tmp);
    buf[n] = '\0';
    fclose(tmp);
}

static void test_held_stderr_outlives_end(void **st)
{
    (void)st;
    FILE *tmp;
    int old = capture_fd2(&tmp);
    FILE *before = stderr;
    dlg_rank_stderr rs;
    dlg_rank_stderr_begin(&rs, 3);
    FILE *held = stderr; /* what a library loaded now would keep */
    assert_ptr_not_equal(held, before);
    assert_true(fputs("during\n", stderr) >= 0);
    dlg_rank_stderr_end(&rs);
    assert_ptr_equal(stderr, before);
    /* the held FILE is still open and still prefixes */
    assert_true(fputs("after", held) >= 0);
    assert_true(fputs(" the end\n", held) >= 0);
    assert_int_equal(fflush(held), 0);
    char buf[256];
    read_back(tmp, old, buf, sizeof buf);
    assert_string_equal(buf, "rank 3: during\nrank 3: after the end\n");
}

static void test_rank0_unchanged(void **st)
{
    (void)st;
    FILE *before = stderr;
    dlg_rank_stderr rs;
    dlg_rank_stderr_begin(&rs, 0);
    assert_ptr_equal(stderr, before);
    dlg_rank_stderr_end(&rs);
    assert_ptr_equal(stderr, before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_stderr_outlives_end),
        cmocka_unit_test(test_rank0_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
