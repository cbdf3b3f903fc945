/* A cell that cannot be pinned to its CPUs (a range this machine does not
 * give the process) fails at the line of its cpus key, as the plan's own
 * check says it, whether the job or [global] sets it, not at the job's
 * section line. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rt_cell.h"
#include "rt_util.h"

static void pin_fails_at(const rt_dir *d, const char *text, int line)
{
    char ini[512], want[1024];
    rt_write(d, "pin.ini", text, ini, sizeof ini);
    rt_cell c;
    rt_cell_run(&c, ini);
    assert_string_equal(c.res.status, "error");
    snprintf(want, sizeof want, "%s:%d: [job w] cpus = 1000-1001: CPU 1000 is not available", ini, line);
    if (strncmp(c.res.error, want, strlen(want)) != 0)
        fail_msg("error '%s', expected it to start with '%s'", c.res.error, want);
    rt_cell_done(&c);
}

static void pin_error_at_cpus_line(void **state)
{
    const rt_dir *d = *state;
    char text[2048];
    snprintf(text, sizeof text,
             "[job w]\nplugin = %s/writewl.so\nworkload = write_blocks\npath = %s/out.bin\niterations = 1\n"
             "cpus = 1000-1001\n",
             DLG_TEST_WRITEWL_DIR, d->path);
    pin_fails_at(d, text, 6);
    snprintf(text, sizeof text,
             "[global]\ncpus = 1000-1001\n\n[job w]\nplugin = %s/writewl.so\nworkload = write_blocks\n"
             "path = %s/out.bin\niterations = 1\n",
             DLG_TEST_WRITEWL_DIR, d->path);
    pin_fails_at(d, text, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(pin_error_at_cpus_line, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
