/* Regressions the disk profile fuzzer found: lines longer than inih's
 * buffer, and line numbers in errors (plugins/storage/throttle). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fuzz_file.h"
#include "fuzz_host.h"
#include "throttle_profile.h"

/* Loads size bytes as a profile; returns the rc, the message in f->msg. */
static int load_bytes(const void *text, size_t size, fuzz_host *f, thr_profile *p)
{
    char path[512];
    assert_int_equal(fuzz_write_file(path, sizeof path, "disk.ini", text, size), 0);
    fuzz_host_init(f);
    int rc = thr_profile_load(&f->host, path, p);
    fuzz_remove_file(path);
    return rc;
}

static int load(const char *text, fuzz_host *f, thr_profile *p)
{
    return load_bytes(text, strlen(text), f, p);
}

/* Loads "; " + n x's + tail + "\n" + after as a profile. */
static int load_long_comment(size_t n, const char *tail, const char *after, fuzz_host *f, thr_profile *p)
{
    char *s = malloc(n + strlen(tail) + strlen(after) + 8);
    assert_non_null(s);
    strcpy(s, "; ");
    memset(s + 2, 'x', n);
    strcpy(s + 2 + n, tail);
    strcat(s, "\n");
    strcat(s, after);
    int rc = load(s, f, p);
    free(s);
    return rc;
}

/* A comment holding a long URL (as conf/disks/ sources do) is a comment:
 * it used to be split at 199 characters, its tail a syntax error blamed on
 * the next line. */
static void long_comment_is_ignored(void **state)
{
    (void)state;
    fuzz_host f;
    thr_profile p;
    assert_int_equal(load_long_comment(300, " (read 2025)", "name = x\niops = 300\n", &f, &p), 0);
    assert_true(p.v[THR_IOPS].set);
    assert_int_equal(p.v[THR_IOPS].i, 300);
}

/* The tail of a long comment used to be read as a line of its own: here
 * it silently set iops = 5. */
static void comment_tail_is_not_a_key(void **state)
{
    (void)state;
    fuzz_host f;
    thr_profile p;
    assert_int_equal(load_long_comment(197, "iops = 5", "name = x\n", &f, &p), 0);
    assert_false(p.v[THR_IOPS].set);
}

/* Any other over-long line is refused by its own line number. */
static void long_key_line_names_its_line(void **state)
{
    (void)state;
    fuzz_host f;
    thr_profile p;
    char text[512];
    snprintf(text, sizeof text, "name = x\niops = %0300d\nlatency = 1ms\n", 7);
    assert_int_not_equal(load(text, &f, &p), 0);
    assert_non_null(strstr(f.msg, "disk.ini:2: line is longer than 199 characters"));
}

/* A last line without '\n' used to be counted as the line before it. */
static void last_line_without_newline(void **state)
{
    (void)state;
    fuzz_host f;
    thr_profile p;
    assert_int_not_equal(load("name = x\niops = abc", &f, &p), 0);
    assert_non_null(strstr(f.msg, "disk.ini:2: iops"));
}

/* A NUL byte used to end the value silently (iops = 3, not 300). */
static void nul_byte_names_its_line(void **state)
{
    (void)state;
    fuzz_host f;
    thr_profile p;
    static const char bin[] = "name = x\niops = 3\0" "00\n";
    int rc = load_bytes(bin, sizeof bin - 1, &f, &p);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(f.msg, "disk.ini:2: a NUL byte"));
}

/* An indented key is a key: inih took "  iops = 300" as the continuation
 * of the name, and the profile had no IOPS limit. */
static void indented_key_is_a_key(void **state)
{
    (void)state;
    fuzz_host f;
    thr_profile p;
    assert_int_equal(load("name = x\n  iops = 300\n", &f, &p), 0);
    assert_true(p.v[THR_IOPS].set);
    assert_int_equal(p.v[THR_IOPS].i, 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_comment_is_ignored),
        cmocka_unit_test(comment_tail_is_not_a_key),
        cmocka_unit_test(long_key_line_names_its_line),
        cmocka_unit_test(last_line_without_newline),
        cmocka_unit_test(nul_byte_names_its_line),
        cmocka_unit_test(indented_key_is_a_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
