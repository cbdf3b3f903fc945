/* preprocess looks at what stands at mean_output (a BlobProto it may
 * replace) before any cell.  A file cut short while it is looked at --
 * another process truncating it -- is refused as corrupt, with the byte
 * where it ended, in one error line.  The check used to map the file: the
 * pages past the new end raised SIGBUS and killed the run.
 *
 * This test's open stands in for libc's (the executable exports it, so
 * tools.so calls it): opening a file named *cut.binaryproto read-only
 * with O_NOFOLLOW, as the check does, truncates it to CUT_AT bytes right
 * after the open, between the check's lstat and its read. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "binaryproto.h"
#include "prep_testutil.h"
#include "workload_run.h"

enum { CUT_AT = 100, C = 3, H = 64, W = 64 };

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
    if (fd >= 0 && (flags & O_NOFOLLOW) && (flags & O_ACCMODE) == O_RDONLY && ends_with(path, "cut.binaryproto"))
        (void)!truncate(path, CUT_AT);
    return fd;
}

static void test_mean_cut_while_checked(void **unused)
{
    (void)unused;
    char dir[512], list[600], mean[600];
    snprintf(dir, sizeof dir, "%s/prepmeancut-%d", TOOLS_TEST_DIR, (int)getpid());
    assert_int_equal(fx_fresh_dir(dir, 1), 0);
    snprintf(list, sizeof list, "%s/list.txt", dir);
    FILE *l = fopen(list, "w");
    assert_non_null(l);
    fputs("img0.jpg 0\n", l);
    fclose(l);
    /* a mean image of many pages: the mapping reached far past the cut */
    snprintf(mean, sizeof mean, "%s/m-cut.binaryproto", dir);
    float *px = calloc((size_t)C * H * W, sizeof *px);
    assert_non_null(px);
    assert_int_equal(dlg_blobproto_write(mean, C, H, W, px, NULL), 0);
    free(px);
    struct stat st;
    assert_int_equal(stat(mean, &st), 0);
    assert_true(st.st_size > 8 * 4096);

    kv k = {0};
    kv_add(&k, "input=%s", list);
    kv_add(&k, "output=lmdb:%s/db", dir);
    kv_add(&k, "resize_width=%d", W);
    kv_add(&k, "resize_height=%d", H);
    kv_add(&k, "mean_output=%s", mean);
    int rc = 0;
    char err[1024] = "";
    assert_true(wr_check("tools.so", "preprocess", k.ptr, &rc, err, sizeof err));
    assert_int_equal(rc, -DLG_ECORRUPT);
    char want[800];
    snprintf(want, sizeof want, "mean_output = %s: corrupt: it ends at byte %d of the %lld", mean, CUT_AT,
             (long long)st.st_size);
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
    assert_null(strchr(err, '\n'));
    assert_int_equal(stat(mean, &st), 0);
    assert_int_equal(st.st_size, CUT_AT); /* refused: left as it is */
    assert_int_equal(fx_fresh_dir(dir, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mean_cut_while_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
