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

static void test_threads_refused_by_nproc(void **unused)
{
    (void)unused;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(77);
        struct rlimit one = {1, 1};
        char why[512] = "";
        int rc = setrlimit(RLIMIT_NPROC, &one) == 0 ? dlg_threads_startable(3, why, sizeof why) : 2;
        if (write(p[1], why, strlen(why)) < 0)
            _exit(3);
        _exit(rc == -1 ? 0 : 1); /* no exit handlers (LeakSanitizer starts a thread) */
    }
    close(p[1]);
    char got[512] = "";
    ssize_t n = read(p[0], got, sizeof got - 1);
    got[n > 0 ? n : 0] = '\0';
    close(p[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        skip();
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    const char *want = "could not start 3 threads: Resource temporarily unavailable; ulimit -u is 1 / pids.max is ";
    if (strncmp(got, want, strlen(want)) != 0)
        fail_msg("got '%s'", got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_start),
        cmocka_unit_test(test_threads_refused_by_nproc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
