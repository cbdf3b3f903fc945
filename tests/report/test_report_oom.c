/* dlgauge report and compare when memory runs out: each allocation of a
 * whole report (fixtures/known.csv with the test catalog, the terminal
 * table, --html and --markdown) or comparison fails in turn (rt_oom.h).  Each pass must finish, and
 * one that fails must exit non-zero saying "out of memory"; an --html or
 * --markdown file it leaves must be whole (each is replaced only when
 * complete): the one of a pass with no failure, byte for byte.  One that
 * exits 0 must have written the whole report, all three forms: a table or
 * chart left out for want of memory was dropped without a word (620 of
 * 3200 passes), and a few characters of a chart where glibc's
 * open_memstream could not grow. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "compare.h"
#include "report.h"
#include "rt_oom.h"
#include "rt_util.h"
#include "temp_file.h"

static void fixture(char *out, size_t len, const char *name)
{
    const char *src = getenv("DLG_SOURCE_DIR");
    snprintf(out, len, "%s/tests/report/fixtures/%s", src ? src : ".", name);
}

typedef int cli_main(int argc, char **argv);

/* fn (rep_main, rep_compare_main) on argv with stdout and stderr in files
 * under dir; what it wrote to stderr in said. */
static int report_to(cli_main *fn, const char *dir, char **argv, int argc, char *said, size_t len)
{
    char out[600], errp[600];
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    fflush(stdout);
    fflush(stderr);
    int o = dup(1), e = dup(2);
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(o >= 0 && e >= 0 && fo >= 0 && fe >= 0);
    dup2(fo, 1);
    dup2(fe, 2);
    int rc = fn(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(o, 1);
    dup2(e, 2);
    close(o), close(e), close(fo), close(fe);
    FILE *f = fopen(errp, "r");
    size_t n = f ? fread(said, 1, len - 1, f) : 0;
    said[n] = '\0';
    if (f)
        fclose(f);
    return rc;
}

/* A file the failed pass left is the whole one. */
static void whole_or_absent(const char *path, const char *whole, long n, const char *said)
{
    char *got = file_text(path);
    if (got && strcmp(got, whole) != 0)
        fail_msg("allocation %ld failed ('%s'), yet %s was written, not whole (%zu bytes of %zu)", n, said, path,
                 strlen(got), strlen(whole));
    free(got);
}

/* Each allocation of fn on argv (writing the Markdown file md, and html
 * unless NULL, under dir) fails in turn; returns the passes that failed. */
static int sweep(cli_main *fn, const char *dir, char **argv, const char *html, const char *md)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    char out[600], said[4096];
    snprintf(out, sizeof out, "%s/stdout", dir); /* report_to's */
    assert_int_equal(report_to(fn, dir, argv, argc, said, sizeof said), 0); /* the whole report, unhurt */
    char *whole_html = html ? file_text(html) : NULL, *whole_md = file_text(md), *whole_text = file_text(out);
    assert_true((!html || (whole_html && strlen(whole_html) > 1000)) && whole_md && strlen(whole_md) > 300 &&
                whole_text && strlen(whole_text) > 300);
    int failures = 0;
    long n = 1;
    for (; n < 200000; n++) {
        if (html)
            unlink(html);
        unlink(md);
        rt_oom_arm(n);
        int rc = report_to(fn, dir, argv, argc, said, sizeof said);
        long made = rt_oom_disarm();
        if (rc != 0) {
            failures++;
            if (!strstr(said, "out of memory") && !strstr(said, "Cannot allocate memory"))
                fail_msg("%s: allocation %ld failed: exit %d, said '%s'", argv[0], n, rc, said);
        } else { /* an allocation it could do without: the same report, every form of it */
            char *text = file_text(out);
            if (!text || strcmp(text, whole_text) != 0)
                fail_msg("%s: allocation %ld failed, exit 0, yet the terminal's output differs", argv[0], n);
            free(text);
            if ((html && access(html, F_OK) != 0) || access(md, F_OK) != 0)
                fail_msg("%s: allocation %ld failed, exit 0, yet a file is missing", argv[0], n);
        }
        if (html)
            whole_or_absent(html, whole_html, n, said);
        whole_or_absent(md, whole_md, n, said);
        if (made < n)
            break; /* nothing failed: every allocation was seen */
    }
    fprintf(stderr, "%s: %ld allocations, %d passes failed\n", argv[0], n, failures);
    assert_true(n < 200000);
    free(whole_html);
    free(whole_md);
    free(whole_text);
    return failures;
}

static void report_oom(void **state)
{
    if (!rt_oom_possible())
        skip();
    const char *dir = ((const rt_dir *)*state)->path;
    char csv[600], cat[600], html[600], md[600];
    fixture(csv, sizeof csv, "known.csv");
    fixture(cat, sizeof cat, "catalog.ini");
    snprintf(html, sizeof html, "%s/r.html", dir);
    snprintf(md, sizeof md, "%s/r.md", dir);
    char *argv[] = {"report", csv, "--catalog", cat, "--html", html, "--markdown", md, "--color", "never", NULL};
    assert_true(sweep(rep_main, dir, argv, html, md) > 50);
}

/* compare: the same results as base and new (every cell matched). */
static void compare_oom(void **state)
{
    if (!rt_oom_possible())
        skip();
    const char *dir = ((const rt_dir *)*state)->path;
    char csv[600], md[600];
    fixture(csv, sizeof csv, "known.csv");
    snprintf(md, sizeof md, "%s/c.md", dir);
    char *argv[] = {"compare", csv, "--", csv, "--markdown", md, "--color", "never", NULL};
    assert_true(sweep(rep_compare_main, dir, argv, NULL, md) > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(report_oom, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(compare_oom, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
