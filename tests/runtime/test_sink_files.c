/* The "results in" line at the end of a run (core/cli/sink_files.c): the
 * relative files the sinks wrote, made absolute.  Not a relative
 * directory an option flagged as written names (the influx sink's
 * spool_dir holds only what could not be sent), nor a file that is not
 * there (its sink failed before making it), nor one the run did not change
 * (a csv sink's rows went to PATH.2.csv): the line used to name them all
 * as where the results are.  A file an open sink made that is gone by the
 * end is named as gone. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "plan.h"
#include "sinkset.h"

/* A sink's options as the csv and influx sinks flag theirs. */
static const dlg_option opts[] = {
    {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "the file", DLG_OPT_NOSWEEP | DLG_OPT_PATH_OUT},
    {"spool_dir", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "a folder", DLG_OPT_NOSWEEP | DLG_OPT_PATH_OUT},
    {"url", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "not a path", DLG_OPT_NOSWEEP},
    {0},
};
static const dlg_plugin_desc desc = {
    .struct_size = sizeof(dlg_plugin_desc), .kind = DLG_KIND_SINK, .name = "fake", .options = opts};

typedef struct fixture {
    char dir[64], was[PATH_MAX];
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/dlg-sink-files-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    assert_non_null(getcwd(fx->was, sizeof fx->was));
    assert_int_equal(chdir(fx->dir), 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    assert_int_equal(chdir(fx->was), 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
    assert_int_equal(system(cmd), 0);
    free(fx);
    return 0;
}

/* What dlg_say_sink_files_but prints for sinks whose options hold
 * v[i][0..2], of files changed since `since`. */
static char *said_since(dlg_value (*v)[3], size_t nsinks, struct timespec since)
{
    dlg_instance_spec specs[4];
    for (size_t i = 0; i < nsinks; i++)
        specs[i] = (dlg_instance_spec){.name = "fake", .desc = &desc, .vals = v[i]};
    dlg_plan plan = {.sinks = specs, .nsinks = nsinks};
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    dlg_say_sink_files_but(&plan, NULL, NULL, since, out);
    assert_int_equal(fclose(out), 0);
    return buf;
}

static char *said(dlg_value (*v)[3], size_t nsinks) { return said_since(v, nsinks, (struct timespec){0, 0}); }

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
}

/* The written files, in order; the spool folder and a file never made
 * are left out. */
static void names_written_files_only(void **state)
{
    fixture *fx = *state;
    assert_int_equal(mkdir("out", 0755), 0);
    assert_int_equal(mkdir("spool", 0755), 0);
    touch("out/r.csv");
    touch("r.lp");
    dlg_value v[2][3] = {
        {{.text = "./out/r.csv", .set = true}, {.text = "spool", .set = true}, {.text = "http://x", .set = true}},
        {{.text = "r.lp", .set = true}, {.text = "never-made.lp", .set = true}, {0}},
    };
    char *got = said(v, 2), want[256];
    snprintf(want, sizeof want, "dlgauge: results in %s/out/r.csv, %s/r.lp\n", fx->dir, fx->dir);
    assert_string_equal(got, want);
    free(got);
}

/* Only a folder and a file that is not there: no line at all. */
static void nothing_written_says_nothing(void **state)
{
    (void)state;
    assert_int_equal(mkdir("spool", 0755), 0);
    dlg_value v[1][3] = {{{.text = "r.csv", .set = true}, {.text = "spool", .set = true}, {0}}};
    char *got = said(v, 1);
    assert_string_equal(got, "");
    free(got);
}

/* A file the run did not change (its rows went elsewhere) is not named;
 * one it wrote is. */
static void unchanged_file_not_named(void **state)
{
    fixture *fx = *state;
    touch("old.csv");
    touch("new.csv");
    struct timespec past[2] = {{.tv_sec = time(NULL) - 3600}, {.tv_sec = time(NULL) - 3600}};
    assert_int_equal(utimensat(AT_FDCWD, "old.csv", past, 0), 0);
    struct timespec since;
    clock_gettime(CLOCK_REALTIME_COARSE, &since);
    since.tv_sec -= 60; /* new.csv was written after, old.csv an hour before */
    dlg_value v[2][3] = {{{.text = "old.csv", .set = true}, {0}, {0}}, {{.text = "new.csv", .set = true}, {0}, {0}}};
    char *got = said_since(v, 2, since), want[256];
    snprintf(want, sizeof want, "dlgauge: results in %s/new.csv\n", fx->dir);
    assert_string_equal(got, want);
    free(got);
}

/* A file an open sink made, gone by the end (deleted after its last row):
 * named as gone, not left out as if its rows were elsewhere. */
static void gone_file_said(void **state)
{
    fixture *fx = *state;
    touch("kept.csv");
    dlg_value v[2][3] = {{{.text = "gone.csv", .set = true}, {0}, {0}}, {{.text = "kept.csv", .set = true}, {0}, {0}}};
    dlg_instance_spec specs[2];
    for (size_t i = 0; i < 2; i++)
        specs[i] = (dlg_instance_spec){.name = "fake", .desc = &desc, .vals = v[i]};
    dlg_plan plan = {.sinks = specs, .nsinks = 2};
    int open_state;
    dlg_sink_live live[2] = {{.spec = &specs[0], .state = &open_state}, {.spec = &specs[1], .state = &open_state}};
    dlg_sinkset ss = {.sinks = live, .n = 2};
    char *got = NULL, want[512];
    size_t len = 0;
    FILE *out = open_memstream(&got, &len);
    assert_non_null(out);
    dlg_say_sink_files_but(&plan, &ss, NULL, (struct timespec){0, 0}, out);
    assert_int_equal(fclose(out), 0);
    snprintf(want, sizeof want, "dlgauge: results in %s/gone.csv (gone: deleted or moved away during the run), "
             "%s/kept.csv\n", fx->dir, fx->dir);
    assert_string_equal(got, want);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(names_written_files_only, setup, teardown),
        cmocka_unit_test_setup_teardown(nothing_written_says_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(unchanged_file_not_named, setup, teardown),
        cmocka_unit_test_setup_teardown(gone_file_said, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
