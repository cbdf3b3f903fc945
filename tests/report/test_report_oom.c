/* dlgauge report when memory runs out: each allocation of a whole report
 * (fixtures/known.csv with the test catalog, the terminal table, --html
 * and --markdown) fails in turn (rt_oom.h).  Each pass must finish, and
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

#include "report.h"
#include "rt_oom.h"

static void fixture(char *out, size_t len, const char *name)
{
    const char *src = getenv("DLG_SOURCE_DIR");
    snprintf(out, len, "%s/tests/report/fixtures/%s", src ? src : ".", name);
}

/* rep_main on argv with stdout and stderr in files under dir; what it
 * wrote to stderr in said. */
static int report_to(const char *dir, char **argv, int argc, char *said, size_t len)
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
    int rc = rep_main(argc, argv);
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

/* The file at path (malloc'd, NUL-terminated; NULL if none), read with the
 * failures disarmed. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    p[n] = '\0';
    fclose(f);
    return p;
}

/* A file the failed pass left is the whole one. */
static void whole_or_absent(const char *path, const char *whole, long n, const char *said)
{
    char *got = slurp(path);
    if (got && strcmp(got, whole) != 0)
        fail_msg("allocation %ld failed ('%s'), yet %s was written, not whole (%zu bytes of %zu)", n, said, path,
                 strlen(got), strlen(whole));
    free(got);
}

static void every_allocation_fails_once(void **state)
{
    (void)state;
    if (!rt_oom_possible())
        skip();
    char dir[] = "/tmp/dlg-report-oom-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char csv[600], cat[600], html[600], md[600], out[600], said[4096];
    fixture(csv, sizeof csv, "known.csv");
    fixture(cat, sizeof cat, "catalog.ini");
    snprintf(html, sizeof html, "%s/r.html", dir);
    snprintf(md, sizeof md, "%s/r.md", dir);
    snprintf(out, sizeof out, "%s/stdout", dir); /* report_to's */
    char *argv[] = {"report", csv, "--catalog", cat, "--html", html, "--markdown", md, "--color", "never", NULL};
    int argc = (int)(sizeof argv / sizeof *argv) - 1;
    assert_int_equal(report_to(dir, argv, argc, said, sizeof said), 0); /* the whole report, unhurt */
    char *whole_html = slurp(html), *whole_md = slurp(md), *whole_text = slurp(out);
    assert_true(whole_html && whole_md && whole_text && strlen(whole_html) > 1000 && strlen(whole_md) > 300 &&
                strlen(whole_text) > 300);
    int failures = 0;
    long n = 1;
    for (; n < 200000; n++) {
        unlink(html);
        unlink(md);
        rt_oom_arm(n);
        int rc = report_to(dir, argv, argc, said, sizeof said);
        long made = rt_oom_disarm();
        if (rc != 0) {
            failures++;
            if (!strstr(said, "out of memory") && !strstr(said, "Cannot allocate memory"))
                fail_msg("allocation %ld failed: exit %d, said '%s'", n, rc, said);
        } else { /* an allocation it could do without: the same report, every form of it */
            char *text = slurp(out);
            if (!text || strcmp(text, whole_text) != 0)
                fail_msg("allocation %ld failed, exit 0, yet the terminal's report differs", n);
            free(text);
            if (access(html, F_OK) != 0 || access(md, F_OK) != 0)
                fail_msg("allocation %ld failed, exit 0, yet no %s", n, access(html, F_OK) ? "--html" : "--markdown");
        }
        whole_or_absent(html, whole_html, n, said);
        whole_or_absent(md, whole_md, n, said);
        if (made < n)
            break; /* nothing failed: every allocation was seen */
    }
    fprintf(stderr, "report: %ld allocations, %d passes failed\n", n, failures);
    assert_true(n < 200000);
    assert_true(failures > 50);
    free(whole_html);
    free(whole_md);
    free(whole_text);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_fails_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
