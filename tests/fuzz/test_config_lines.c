/* Regressions the configuration fuzzer found (core/runtime/config.c): a
 * NUL byte cut a line short, its tail was read as a line of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "fuzz_file.h"

/* Loads size bytes as a configuration: 0, or -1 with the message in err. */
static int load(const void *text, size_t size, dlg_config *c, char *err, size_t errlen)
{
    char path[512];
    assert_int_equal(fuzz_write_file(path, sizeof path, "main.ini", text, size), 0);
    int rc = dlg_config_load(c, path, err, errlen);
    fuzz_remove_file(path);
    return rc;
}

/* The tail of a comment after a NUL byte used to become the key
 * `iops = 3`, and `duration` was said to be on line 5 of a 4-line file. */
static void nul_in_comment_is_an_error(void **state)
{
    (void)state;
    static const char text[] = "[job a]\nworkload = noop\n; note\0   iops = 3\nduration = 5s\n";
    dlg_config c;
    char err[1024] = "";
    int rc = load(text, sizeof text - 1, &c, err, sizeof err);
    dlg_config_free(&c);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err, "main.ini:3: a NUL byte in the line"));
}

/* A file saved as UTF-16 (Windows "Unicode") is named as such, at line 1,
 * rather than a syntax error. */
static void utf16_file_is_named(void **state)
{
    (void)state;
    static const char text[] = "\xff\xfe[\0j\0o\0b\0 \0a\0]\0\r\0\n\0";
    dlg_config c;
    char err[1024] = "";
    int rc = load(text, sizeof text - 1, &c, err, sizeof err);
    dlg_config_free(&c);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err, "main.ini:1: a NUL byte in the line: configuration files are UTF-8 text (is it UTF-16?)"));
}

/* Lines still count right after a long one. */
static void long_line_keeps_line_numbers(void **state)
{
    (void)state;
    char text[10000];
    int n = snprintf(text, sizeof text, "[job a]\nworkload = noop\nx = %05000d\n", 1);
    dlg_config c;
    char err[1024] = "";
    int rc = load(text, (size_t)n, &c, err, sizeof err);
    dlg_config_free(&c);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err, "main.ini:3: line is longer than"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nul_in_comment_is_an_error),
        cmocka_unit_test(utf16_file_is_named),
        cmocka_unit_test(long_line_keeps_line_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
