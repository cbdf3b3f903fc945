/* The report's and compare's output files (rep_output_write): written
 * whole or not at all.  A stop signal or a failed write mid-file leaves the
 * earlier file as it was and no .part beside it; a link keeps pointing at
 * the new file; a device is written in place. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dlgauge/plugin.h>

#include "cmd_files.h"

typedef struct fake_out {
    const char *text;
    int raise_after; /* raise(SIGINT) after this many writes of text; -1: never */
    int writes;
} fake_out;

/* text writes times, flushed each time so that some of it reaches the file */
static void writer(FILE *f, const void *ctx)
{
    const fake_out *c = ctx;
    for (int i = 0; i < c->writes; i++) {
        if (i == c->raise_after)
            raise(SIGINT);
        fputs(c->text, f);
        fflush(f);
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int in_tmp(void **state)
{
    static char dir[64];
    strcpy(dir, "/tmp/dlg-outputsXXXXXX");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chdir(dir), 0);
    *state = dir;
    return 0;
}

static int out_tmp(void **state)
{
    unlink("out.md");
    unlink("out.md.part");
    unlink("link.md");
    assert_int_equal(chdir("/"), 0);
    rmdir(*state);
    return 0;
}

static void test_whole_file_replaces(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    fake_out c = {"new line\n", -1, 3};
    assert_int_equal(rep_output_write("out.md", writer, &c, err, sizeof err), 0);
    assert_string_equal(slurp("out.md"), "new line\nnew line\nnew line\n");
    assert_int_equal(access("out.md.part", F_OK), -1);
}

/* Ctrl-C halfway: the old file stays, the part goes, the signal is
 * returned (for exit 130) and no longer pending. */
static void test_sigint_keeps_old(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    fake_out c = {"new line\n", 2, 5};
    assert_int_equal(rep_output_write("out.md", writer, &c, err, sizeof err), SIGINT);
    assert_string_equal(slurp("out.md"), "old\n");
    assert_int_equal(access("out.md.part", F_OK), -1);
    assert_non_null(strstr(err, "out.md: stopped by signal 2"));
    sigset_t p;
    sigpending(&p);
    assert_false(sigismember(&p, SIGINT));
}

/* A write that fails (here past a file size limit: EFBIG) names the file
 * the user gave, not the .part. */
static void test_failed_write_keeps_old(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    static char big[8192];
    memset(big, 'x', sizeof big - 1);
    fake_out c = {big, -1, 2};
    int rc = rep_output_write("out.md", writer, &c, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(rc, -DLG_EIO);
    assert_string_equal(slurp("out.md"), "old\n");
    assert_int_equal(access("out.md.part", F_OK), -1);
    assert_non_null(strstr(err, "out.md: write failed: File too large"));
    assert_null(strstr(err, ".part"));
}

/* A stale .part that is a link (a killed run's, or someone's trap) is
 * replaced, never written through. */
static void test_stale_part_link(void **state)
{
    (void)state;
    char err[512] = "";
    put("victim", "keep\n");
    assert_int_equal(symlink("victim", "out.md.part"), 0);
    fake_out c = {"new\n", -1, 1};
    assert_int_equal(rep_output_write("out.md", writer, &c, err, sizeof err), 0);
    assert_string_equal(slurp("victim"), "keep\n");
    assert_string_equal(slurp("out.md"), "new\n");
    unlink("victim");
}

/* A link to the report: the file it names is replaced, the link stays. */
static void test_link_kept(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    assert_int_equal(symlink("out.md", "link.md"), 0);
    fake_out c = {"new\n", -1, 1};
    assert_int_equal(rep_output_write("link.md", writer, &c, err, sizeof err), 0);
    struct stat st;
    assert_int_equal(lstat("link.md", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(slurp("out.md"), "new\n");
}

/* The replaced file keeps its permissions: a report kept private (0600)
 * became world-readable (0666 less the umask) once renamed over. */
static void test_mode_kept(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    assert_int_equal(chmod("out.md", 0600), 0);
    mode_t mask = umask(022);
    fake_out c = {"new\n", -1, 1};
    int rc = rep_output_write("out.md", writer, &c, err, sizeof err);
    umask(mask);
    assert_int_equal(rc, 0);
    struct stat st;
    assert_int_equal(stat("out.md", &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_string_equal(slurp("out.md"), "new\n");
}

static void test_device_and_folder(void **state)
{
    (void)state;
    char err[512] = "";
    fake_out c = {"x\n", -1, 1};
    assert_int_equal(rep_output_write("/dev/null", writer, &c, err, sizeof err), 0);
    assert_int_equal(rep_output_write("/dev/full", writer, &c, err, sizeof err), -DLG_EIO);
    assert_string_equal(err, "/dev/full: write failed: No space left on device");
    assert_int_equal(rep_output_write(".", writer, &c, err, sizeof err), -DLG_EIO);
    assert_non_null(strstr(err, ".: is a directory"));
    assert_int_equal(rep_output_write("nodir/out.md", writer, &c, err, sizeof err), -DLG_EIO);
    assert_string_equal(err, "nodir/out.md: cannot write: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_whole_file_replaces, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_sigint_keeps_old, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_failed_write_keeps_old, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_stale_part_link, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_link_kept, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_mode_kept, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_device_and_folder, in_tmp, out_tmp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
