/* A close that fails (a network filesystem reports a write it could not
 * finish there: EIO, ENOSPC, EDQUOT) is an error naming the file, in every
 * backend: uring dropped it, so a truncated output file passed as written.
 * This program's close() is the backends' too (they are loaded into it;
 * tests/storage/CMakeLists.txt exports its symbols): it fails for one file. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "storage_util.h"

static char failing[600]; /* close() of this file fails with EIO; "" = none */

int close(int fd)
{
    char link[64], target[600];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = failing[0] ? readlink(link, target, sizeof target - 1) : -1;
    bool fail = n > 0 && (target[n] = 0, strcmp(target, failing) == 0);
    long rc = syscall(SYS_close, fd);
    if (fail) {
        errno = EIO;
        return -1;
    }
    return (int)rc;
}

static void test_close_error_every_backend(void **state)
{
    (void)state;
    char dir[512], path[600];
    st_tmpdir(dir, "close");
    snprintf(path, sizeof path, "%s/out.bin", dir);
    assert_non_null(realpath(dir, failing)); /* as /proc/self/fd names it */
    snprintf(failing + strlen(failing), sizeof failing - strlen(failing), "/out.bin");
    static char buf[4096];
    for (int i = 0; i < ST_NBACKENDS; i++) {
        mock_host m;
        st_backend b;
        dlg_file *f = NULL;
        assert_int_equal(st_open_fresh(&m, &b, st_backends[i], NULL, path, DLG_OPEN_WRITE, &f), 0);
        assert_int_equal(b.ops->write(f, buf, sizeof buf, 0), 0);
        int rc = b.ops->close(f);
        free(f);
        if (rc != -DLG_EIO || !strstr(m.last_error, path) || !strstr(m.last_error, "close: Input/output error"))
            fail_msg("%s: a failing close gave %d: '%s'", st_backends[i], rc, m.last_error);
        st_backend_destroy(&b);
        mock_host_fini(&m);
    }
    failing[0] = 0;
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_error_every_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
