/* sink_holds_line (sinks/common/sinkline.c): a whole line anywhere in a
 * file, found across its 64 KiB read windows, and never a line's tail,
 * a prefix of a longer line or a last line without its '\n'. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sink_test_util.h"
#include "sinkline.h"

typedef struct fixture {
    char *dir, *path;
    int fd;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = st_tempdir();
    assert_non_null(f->dir);
    f->path = st_join(f->dir, "lines");
    f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(f->fd >= 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    close(f->fd);
    st_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

static void put(fixture *f, const char *text)
{
    assert_int_equal(write(f->fd, text, strlen(text)), (ssize_t)strlen(text));
}

static bool holds(fixture *f, const char *line)
{
    bool found = true;
    assert_int_equal(sink_holds_line(f->fd, line, strlen(line), &found), 0);
    return found;
}

static void test_small_file(void **state)
{
    fixture *f = *state;
    assert_false(holds(f, "a,1\n")); /* empty */
    put(f, "time,job\na,1\nxb,2\nc,3");
    assert_true(holds(f, "time,job\n")); /* the first line: no '\n' before it */
    assert_true(holds(f, "a,1\n"));
    assert_false(holds(f, "b,2\n")); /* a line's tail */
    assert_false(holds(f, "a,\n"));
    assert_false(holds(f, "c,3\n")); /* the last line lacks its '\n' (a cut row) */
    assert_false(holds(f, "a,1\nxb")); /* not '\n' ended: no whole line */
    assert_true(holds(f, "a,1\nxb,2\n")); /* two lines at once */
}

/* Lines of 100 bytes over 1 MiB: some straddle a 64 KiB window edge. */
static void test_across_windows(void **state)
{
    fixture *f = *state;
    char line[101];
    for (int i = 0; i < 10486; i++) {
        snprintf(line, sizeof line, "%08d%091d\n", i, 0);
        put(f, line);
    }
    for (int i = 0; i < 10486; i += 37) {
        snprintf(line, sizeof line, "%08d%091d\n", i, 0);
        assert_true(holds(f, line));
    }
    /* the windows are laid from the end: the lines about each edge */
    for (long edge = 10486L * 100 - 100 + 1; edge > 0; edge -= 65536)
        for (long i = edge / 100 - 1; i <= edge / 100 + 1 && i < 10486; i++) {
            snprintf(line, sizeof line, "%08ld%091d\n", i, 0);
            assert_true(holds(f, line));
        }
    snprintf(line, sizeof line, "%08d%091d\n", 10486, 0);
    assert_false(holds(f, line));
    snprintf(line, sizeof line, "%08d%091d\n", 5, 1); /* differs in its last digit */
    assert_false(holds(f, line));
}

/* A line that starts where a window starts: its line start is the byte
 * before, read with that window. */
static void test_at_window_start(void **state)
{
    fixture *f = *state;
    char line[101], *fill = malloc(65535);
    snprintf(line, sizeof line, "%099d\n", 7);
    memset(fill, 'x', 65534);
    fill[65534] = '\0';
    put(f, "head\n");
    put(f, line); /* at 5, in a file of 65640 bytes: the window read first
                   * covers matches starting at 65541 - 65536 = 5 to 65540 */
    put(f, fill);
    put(f, "\n");
    assert_true(holds(f, line));
    free(fill);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_small_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_across_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_at_window_start, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
