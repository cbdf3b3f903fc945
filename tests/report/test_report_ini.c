/* The report's INI files (instance catalogs, disk profiles) line by line:
 * a line longer than inih's buffer is one line, not two (the tail of a long
 * comment was read as a key); errors name the file's own line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <dlgauge/plugin.h>

#include "report.h"
#include "temp_file.h"

#define HEAD "[catalog]\nprovider = Test\ncurrency = USD\nsource = invented\nretrieved = 2026-12-01\n"

/* "; xxx...x" of `len` characters, then `tail`: inih's 199-character
 * buffer ends inside the x's and its reader hands on the tail alone. */
static char *long_comment(size_t len, const char *tail)
{
    char *s = malloc(len + strlen(tail) + 2);
    assert_non_null(s);
    s[0] = ';';
    memset(s + 1, 'x', len - 1);
    strcpy(s + len, tail);
    return s;
}

static int load_catalog_text(rep_catalog *c, const char *text, char *err, size_t errlen, char *path)
{
    temp_file(path, text);
    int rc = rep_catalog_load(c, path, err, errlen);
    unlink(path);
    return rc;
}

static void expect_error(const char *text, const char *says)
{
    char path[32], err[512] = "", want[256];
    rep_catalog c = {0};
    assert_int_equal(load_catalog_text(&c, text, err, sizeof err, path), -DLG_EINVAL);
    snprintf(want, sizeof want, "%s%s", path, says);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("got '%s', want '%s'", err, want);
    rep_catalog_free(&c);
}

/* The tail of a 300-character comment set gpus = 7 (and a tail without
 * '=' was a syntax error on a line the file does not have). */
static void test_catalog_long_comment(void **state)
{
    (void)state;
    char *cmt = long_comment(199, " gpus = 7");
    char text[1024], path[32], err[512] = "";
    snprintf(text, sizeof text, HEAD "[instance a]\nvcpus = 8\n%s\nmemory = 16GiB\nprice_per_hour = 1\n", cmt);
    rep_catalog c = {0};
    if (load_catalog_text(&c, text, err, sizeof err, path) != 0)
        fail_msg("%s", err);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.v[0].gpus, 1);
    assert_int_equal(c.v[0].line, 6);
    rep_catalog_free(&c);
    /* a long value is an error on its own line, not a syntax error on the next */
    snprintf(text, sizeof text, HEAD "[instance a]\nvcpus = 8\ngpu = %s\nmemory = 16GiB\nprice_per_hour = 1\n", cmt + 1);
    expect_error(text, ":8: line is longer than ");
    free(cmt);
}

/* A missing key names the line of the section that lacks it. */
static void test_catalog_missing_key_line(void **state)
{
    (void)state;
    expect_error(HEAD "[instance a]\nvcpus = 4\nmemory = 8GiB\nprice_per_hour = 1\n\n[instance b]\nvcpus = 4\n"
                      "price_per_hour = 1\n",
                 ":11: [instance b] has no memory (an instance needs vcpus, memory and price_per_hour)");
    expect_error("; prices\n\n[catalog]\nprovider = Test\ncurrency = USD\nretrieved = 2026\n",
                 ":3: [catalog] has no source (it needs provider, currency, source and retrieved");
    expect_error("[instance a]\nvcpus = 4\nmemory = 8GiB\nprice_per_hour = 1\n", ": no [catalog] section");
    /* a section with no keys at all: inih never calls the handler for it,
     * so the instance was silently left out */
    expect_error(HEAD "[instance a]\n; to do\n\n[instance b]\nvcpus = 4\nmemory = 8GiB\nprice_per_hour = 1\n",
                 ":6: a section with no keys");    /* a results CSV given as the catalog: said to be another kind of file */
    expect_error("cpus,host,job,run_id,status\n1,vm,a,r,ok\n",
                 ":1: syntax error (expected key = value or [section]) (not an instance catalog? that is an INI "
                 "file of [instance NAME] sections)");
    char *row = long_comment(250, "");
    row[0] = 'x'; /* a line, not a comment */
    expect_error(row, ":1: line is longer than 199 characters (not an instance catalog?");
    free(row);
    /* a disk profile (conf/disks) given as the catalog: keys before any section */
    expect_error("; a disk\nname = aws-gp3\niops = 3000\n",
                 ":2: key 'name' outside any section (a catalog's keys sit in [catalog], [instance NAME] or "
                 "[disk NAME]) (not an instance catalog?");
    /* no instance at all: refused, not "no instance meets every knee" */
    expect_error(HEAD, ":1: the catalog lists no instance (an [instance NAME] section each");
    /* after a section: a catalog's own mistake, no such hint */
    char path[32], err[512] = "";
    rep_catalog c = {0};
    assert_int_equal(load_catalog_text(&c, HEAD "vcpus 4\n", err, sizeof err, path), -DLG_EINVAL);
    assert_string_equal(strchr(err, ':'), ":6: syntax error (expected key = value or [section])");
    rep_catalog_free(&c);
}

/* A disk profile's long comment: its tail set the bandwidth. */
static void test_disk_profile_long_comment(void **state)
{
    (void)state;
    char *cmt = long_comment(199, "bandwidth = 10GB");
    char text[1024], path[32], err[512] = "";
    snprintf(text, sizeof text, "name = d\nbandwidth = 100MB\n%s\niops = 3000\n", cmt);
    temp_file(path, text);
    rep_disks d = {0};
    int rc = rep_disks_load(&d, path, NULL, err, sizeof err);
    if (rc != 0)
        fail_msg("%s", err);
    const rep_disk *k = rep_disks_find(&d, "d");
    assert_non_null(k);
    assert_true(k->bandwidth == 100e6);
    rep_disks_free(&d);
    /* a NUL byte: an error on its line (it cut the line in two before) */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite("name = d\nband\0width = 1GB\niops = x\n", 1, 35, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rep_disks_load(&d, path, NULL, err, sizeof err), -DLG_EINVAL);
    snprintf(text, sizeof text, "%s:2: bad disk profile line: a NUL byte", path);
    if (strncmp(err, text, strlen(text)) != 0)
        fail_msg("got '%s', want '%s'", err, text);
    rep_disks_free(&d);
    unlink(path);
    free(cmt);
}

/* An indented key is a key: inih read it as the continuation of the
 * value before (bandwidth joined the name, the profile lost it). */
static void test_disk_profile_indented_key(void **state)
{
    (void)state;
    char path[32], err[512] = "";
    temp_file(path, "name = d\n  bandwidth = 100MB\n\tiops = 3000\n");
    rep_disks d = {0};
    if (rep_disks_load(&d, path, NULL, err, sizeof err) != 0)
        fail_msg("%s", err);
    const rep_disk *k = rep_disks_find(&d, "d");
    assert_non_null(k);
    assert_true(k->bandwidth == 100e6);
    rep_disks_free(&d);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog_long_comment),
        cmocka_unit_test(test_catalog_missing_key_line),
        cmocka_unit_test(test_disk_profile_long_comment),
        cmocka_unit_test(test_disk_profile_indented_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
