/* Whether a cell can start its threads, tried for real: under a process
 * limit (ulimit -u, as user nobody when run as root, since root is exempt)
 * the check fails naming the count, the reason and the limit; without one
 * it passes and leaves no thread behind. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child_pipe.h"
#include "proc_limits.h"

static int threads_now(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f) && sscanf(line, "Threads: %d", &n) != 1) {
    }
    fclose(f);
    return n;
}

static void test_threads_start(void **unused)
{
    (void)unused;
    char why[512] = "";
    int before = threads_now();
    assert_int_equal(dlg_threads_startable(8, why, sizeof why), 0);
    assert_int_equal(dlg_threads_startable(1, why, sizeof why), 0);
    assert_string_equal(why, "");
    assert_int_equal(threads_now(), before);
}

/* In the child: as user nobody (root is exempt), under ulimit -u 1, the
 * check's reason into fd; 77 where the switch of user is refused. */
static int threads_under_nproc(int fd, void *unused)
{
    (void)unused;
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
        return 77;
    struct rlimit one = {1, 1};
    char why[512] = "";
    int rc = setrlimit(RLIMIT_NPROC, &one) == 0 ? dlg_threads_startable(3, why, sizeof why) : 2;
    if (write(fd, why, strlen(why)) < 0)
        return 3;
    return rc == -1 ? 0 : 1;
}

static void test_threads_refused_by_nproc(void **unused)
{
    (void)unused;
    char got[512];
    int st = child_pipe_run(threads_under_nproc, NULL, got, sizeof got);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        skip();
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    const char *want = "could not start 3 threads: Resource temporarily unavailable; ulimit -u is 1 / pids.max is ";
    if (strncmp(got, want, strlen(want)) != 0)
        fail_msg("got '%s'", got);
}

/* An address-space limit is said in the unit ulimit -v shows and takes
 * (KiB), not getrlimit's bytes: "ulimit -v is 61440000" was 60000. */
/* In the child (no allocation after the limit: a sanitizer's would
 * fail): ulimit -v as said under 60000 KiB and under 3 GiB, "A|B" into fd. */
static int address_space_texts(int fd, void *unused)
{
    (void)unused;
    struct rlimit as, big;
    if (getrlimit(RLIMIT_AS, &as) != 0)
        return 2;
    big = as; /* the hard limit as it is: only root may raise it */
    as.rlim_cur = 60000ull * 1024;
    big.rlim_cur = 3ull << 30;
    char a[32] = "", b[32] = "", out[80];
    if (setrlimit(RLIMIT_AS, &big) == 0)
        dlg_rlimit_text(RLIMIT_AS, b, sizeof b);
    if (setrlimit(RLIMIT_AS, &as) == 0)
        dlg_rlimit_text(RLIMIT_AS, a, sizeof a);
    int n = snprintf(out, sizeof out, "%s|%s", a, b);
    return write(fd, out, (size_t)n) == n ? 0 : 1;
}

static void test_address_space_in_kib(void **unused)
{
    (void)unused;
    char got[128];
    int st = child_pipe_run(address_space_texts, NULL, got, sizeof got);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_string_equal(got, "60000 (58.6 MiB)|3145728 (3.0 GiB)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_start),
        cmocka_unit_test(test_threads_refused_by_nproc),
        cmocka_unit_test(test_address_space_in_kib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
