/* proc_file.h's readers of /proc and /sys: the first line of a file
 * (none, cut, no newline, missing file, a read that fails), every line
 * (one longer than the reader's buffer cut and its rest skipped, the last
 * without a newline, a stop on the way), a "key: value" found past the
 * reader's 16 KiB buffer and after a line longer than it, tabs before the
 * colon, a key that is only a prefix; and none allocates (every
 * allocation failing, they still read), nor do the runner's counters
 * read with them (proc_counters.h), so sysinfo and a run's inventory
 * never say "unknown", nor a repetition's read_bytes count the process's
 * lifetime, for want of memory. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proc_counters.h"
#include "proc_file.h"
#include "rt_oom.h"
#include "rt_util.h"

static void first_line(void **state)
{
    const rt_dir *d = *state;
    char path[512], out[16];
    rt_write(d, "rot", "1\n", path, sizeof path);
    assert_int_equal(dlg_file_line(path, out, sizeof out), 0);
    assert_string_equal(out, "1");
    rt_write(d, "model", "ST4000NM0035", path, sizeof path); /* no newline */
    assert_int_equal(dlg_file_line(path, out, sizeof out), 0);
    assert_string_equal(out, "ST4000NM0035");
    rt_write(d, "two", "first\nsecond\n", path, sizeof path);
    assert_int_equal(dlg_file_line(path, out, sizeof out), 0);
    assert_string_equal(out, "first");
    rt_write(d, "long", "0123456789abcdefghij\n", path, sizeof path); /* cut to the buffer */
    assert_int_equal(dlg_file_line(path, out, sizeof out), 0);
    assert_string_equal(out, "0123456789abcde");
    rt_write(d, "empty", "", path, sizeof path);
    strcpy(out, "stale");
    assert_int_equal(dlg_file_line(path, out, sizeof out), 0);
    assert_string_equal(out, "");
    snprintf(path, sizeof path, "%s/none", d->path);
    strcpy(out, "stale");
    errno = 0;
    assert_int_equal(dlg_file_line(path, out, sizeof out), -1);
    assert_int_equal(errno, ENOENT);
    assert_string_equal(out, "");
    strcpy(out, "stale"); /* opens, but read() fails */
    assert_int_equal(dlg_file_line(d->path, out, sizeof out), -1);
    assert_int_equal(errno, EISDIR);
    assert_string_equal(out, "");
}

typedef struct seen {
    char text[256];
    int lines, stop_after;
} seen;

/* each line's first 8 bytes and its length, "|"-separated */
static bool note_line(const char *line, void *ctx)
{
    seen *s = ctx;
    size_t at = strlen(s->text);
    snprintf(s->text + at, sizeof s->text - at, "%.8s/%zu|", line, strlen(line));
    return ++s->lines != s->stop_after;
}

static void every_line(void **state)
{
    const rt_dir *d = *state;
    size_t cap = 40000, o = 0;
    char *text = malloc(cap), path[512];
    assert_non_null(text);
    o += (size_t)snprintf(text + o, cap - o, "cpu  1 2 3\n\n");
    for (int i = 0; i < 20000; i++) /* past the buffer: cut, its rest no line */
        text[o++] = i < 16383 ? 'L' : 'R';
    o += (size_t)snprintf(text + o, cap - o, "\ncpu0 4 5 6\nlast");
    rt_write(d, "stat", text, path, sizeof path);
    free(text);
    seen s = {.stop_after = -1};
    assert_int_equal(dlg_file_lines(path, note_line, &s), 0);
    assert_string_equal(s.text, "cpu  1 2/10|/0|LLLLLLLL/16383|cpu0 4 5/10|last/4|");
    s = (seen){.stop_after = 2};
    assert_int_equal(dlg_file_lines(path, note_line, &s), 0);
    assert_string_equal(s.text, "cpu  1 2/10|/0|");
    rt_write(d, "empty", "", path, sizeof path);
    s = (seen){.stop_after = -1};
    assert_int_equal(dlg_file_lines(path, note_line, &s), 0);
    assert_int_equal(s.lines, 0);
    snprintf(path, sizeof path, "%s/none", d->path);
    errno = 0;
    assert_int_equal(dlg_file_lines(path, note_line, &s), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(dlg_file_lines(d->path, note_line, &s), -1); /* opens, but read() fails */
    assert_int_equal(errno, EISDIR);
    assert_int_equal(s.lines, 0);
}

static void values(void **state)
{
    const rt_dir *d = *state;
    /* a line of 20,000 bytes (cut, never matched), 2,000 filler lines
     * (past 16 KiB), then the keys, one after a tab as in /proc/cpuinfo */
    size_t cap = 200000, o = 0;
    char *text = malloc(cap), path[512], out[64];
    assert_non_null(text);
    o += (size_t)snprintf(text + o, cap - o, "flagsx : not this one\n");
    for (int i = 0; i < 20000; i++)
        text[o++] = 'x';
    o += (size_t)snprintf(text + o, cap - o, "\n");
    for (int i = 0; i < 2000; i++)
        o += (size_t)snprintf(text + o, cap - o, "filler%d : %d\n", i, i);
    o += (size_t)snprintf(text + o, cap - o, "cpu MHz\t\t: 2596.148\nflags\t\t: fpu avx2\nMemTotal:       24684096 kB\n");
    rt_write(d, "cpuinfo", text, path, sizeof path);
    free(text);
    assert_int_equal(dlg_proc_value(path, "cpu MHz", out, sizeof out), 0);
    assert_string_equal(out, "2596.148");
    assert_int_equal(dlg_proc_value(path, "flags", out, sizeof out), 0);
    assert_string_equal(out, "fpu avx2");
    assert_int_equal(dlg_proc_value(path, "MemTotal", out, sizeof out), 0);
    assert_string_equal(out, "24684096 kB");
    assert_int_equal(dlg_proc_value(path, "filler1999", out, sizeof out), 0);
    assert_string_equal(out, "1999");
    assert_int_equal(dlg_proc_value(path, "MemFree", out, sizeof out), -1);
    assert_int_equal(dlg_proc_value(path, "cpu", out, sizeof out), -1); /* only a prefix of "cpu MHz" */
    char none[600];
    snprintf(none, sizeof none, "%s/none", d->path);
    assert_int_equal(dlg_proc_value(none, "flags", out, sizeof out), -1);
}

static void allocate_nothing(void **state)
{
    const rt_dir *d = *state;
    if (!rt_oom_possible())
        skip();
    char path[512], out[64];
    rt_write(d, "meminfo", "MemTotal:       24684096 kB\nMemAvailable:   23000000 kB\n", path, sizeof path);
    rt_oom_arm(1);
    int value = dlg_proc_value(path, "MemAvailable", out, sizeof out);
    int line = dlg_proc_value(path, "MemTotal", out + 32, 32) == 0 && dlg_file_line(path, out + 32, 32) == 0;
    long made = rt_oom_disarm();
    assert_int_equal(made, 0);
    assert_int_equal(value, 0);
    assert_true(line);
    assert_string_equal(out, "23000000 kB");
    assert_string_equal(out + 32, "MemTotal:       24684096 kB");
}

/* the runner's counters read the same with every allocation failing */
static void counters_allocate_nothing(void **state)
{
    (void)state;
    if (!rt_oom_possible())
        skip();
    uint64_t total = 0, iowait = 0, io0 = dlg_proc_read_bytes(), disk0 = dlg_disk_read_bytes();
    rt_oom_arm(1);
    uint64_t hwm = dlg_proc_hwm_bytes(), io = dlg_proc_read_bytes(), disk = dlg_disk_read_bytes();
    dlg_host_cpu_times(&total, &iowait);
    long made = rt_oom_disarm();
    assert_int_equal(made, 0);
    assert_true(hwm > 0);              /* VmHWM: this process's peak */
    assert_true(total > 0 && iowait <= total);
    assert_true(io >= io0 && disk >= disk0); /* never the 0 of a reading that failed */
    char v[64];
    assert_int_equal(dlg_proc_value("/proc/self/status", "VmHWM", v, sizeof v), 0);
    assert_true(hwm >= strtoull(v, NULL, 10) * 1024 / 2); /* the same figure, give or take growth */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(first_line, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(every_line, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(values, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(allocate_nothing, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(counters_allocate_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
