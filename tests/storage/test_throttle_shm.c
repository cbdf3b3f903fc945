/* The emulated disk a node's ranks share (throttle_shm.c), with two
 * "ranks" in this one process (each attach maps the segment anew, as
 * another process would): both ranks' k-th instances get one disk and
 * the ranks' I/O queue on it; other limits or a rank's second instance
 * get another; the last one out removes the name; a rank killed while
 * holding the disk's lock stops no one; a killed run's segment is swept. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "throttle_shm.h"

/* A key no other run on this machine has (the pid's and time's). */
static uint64_t test_key(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec;
}

static thr_limits disk_limits(double bandwidth)
{
    thr_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.bandwidth = bandwidth;
    return lim;
}

static bool name_exists(const char *name)
{
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

static void ranks_share_one_disk(void **state)
{
    (void)state;
    uint64_t key = test_key();
    thr_limits lim = disk_limits(1e9); /* 1 GB/s: 1 MB takes 1 ms */
    thr_shm r0, r1, r0b, r1b, other;
    thr_shaper *s0, *s1, *s0b, *s1b, *so;
    char why[512];
    assert_int_equal(thr_shm_attach(key, 0, &lim, &r0, &s0, why, sizeof why), 0);
    assert_int_equal(thr_shm_attach(key, 1, &lim, &r1, &s1, why, sizeof why), 0);
    assert_int_equal(r0.disk, r1.disk);
    assert_ptr_not_equal(s0, s1); /* two mappings of one disk */
    /* each rank's second instance: a second disk, again one for both */
    assert_int_equal(thr_shm_attach(key, 0, &lim, &r0b, &s0b, why, sizeof why), 0);
    assert_int_equal(thr_shm_attach(key, 1, &lim, &r1b, &s1b, why, sizeof why), 0);
    assert_int_not_equal(r0b.disk, r0.disk);
    assert_int_equal(r0b.disk, r1b.disk);
    thr_limits slow = disk_limits(1e8);
    assert_int_equal(thr_shm_attach(key, 0, &slow, &other, &so, why, sizeof why), 0);
    assert_true(other.disk != r0.disk && other.disk != r0b.disk);

    /* 1 MB from rank 0, then 1 MB from rank 1: rank 1's waits behind
     * rank 0's on the one pipe (its deadline ~1 ms later) */
    uint64_t t0 = thr_now_ns();
    uint64_t d0 = thr_shaper_reserve(s0, 1000000, 1, false);
    uint64_t d1 = thr_shaper_reserve(s1, 1000000, 1, false);
    assert_true(d0 >= t0 + 900000);
    assert_true(d1 >= d0 + 900000);
    /* the second disk is idle: its first 1 MB ends ~1 ms from now */
    uint64_t d2 = thr_shaper_reserve(s1b, 1000000, 1, false);
    assert_true(d2 < d1);

    thr_shm_detach(&other);
    thr_shm_detach(&r0b);
    thr_shm_detach(&r1b);
    thr_shm_detach(&r0);
    assert_true(name_exists(r1.name)); /* rank 1 still on it */
    char name[sizeof r1.name];
    memcpy(name, r1.name, sizeof name);
    thr_shm_detach(&r1);
    assert_false(name_exists(name));
    /* a later cell makes it anew, with a fresh (full) disk */
    assert_int_equal(thr_shm_attach(key, 1, &lim, &r1, &s1, why, sizeof why), 0);
    assert_int_equal(r1.disk, 0);
    thr_shm_detach(&r1);
    assert_false(name_exists(name));
}

/* A rank killed inside the disk's lock: the others go on. */
static void dead_holder_stops_no_one(void **state)
{
    (void)state;
    uint64_t key = test_key();
    thr_limits lim = disk_limits(1e9);
    thr_shm r0, r1;
    thr_shaper *s0, *s1;
    char why[512];
    assert_int_equal(thr_shm_attach(key, 0, &lim, &r0, &s0, why, sizeof why), 0);
    pid_t pid = fork();
    if (pid == 0) {
        thr_shm c;
        thr_shaper *sc;
        if (thr_shm_attach(key, 1, &lim, &c, &sc, why, sizeof why) != 0)
            _exit(2);
        pthread_mutex_lock(&sc->mu);
        _exit(0); /* holding it */
    }
    int st = -1;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    uint64_t t0 = thr_now_ns();
    assert_true(thr_shaper_reserve(s0, 1000, 1, false) >= t0);
    assert_true(thr_shaper_reserve(s0, 1000, 1, false) >= t0); /* and again: consistent */
    /* the dead rank's place stays taken; a live rank 2 joins the disk */
    assert_int_equal(thr_shm_attach(key, 2, &lim, &r1, &s1, why, sizeof why), 0);
    assert_int_equal(r1.disk, r0.disk);
    thr_shm_detach(&r1);
    thr_shm_detach(&r0);
    /* the dead rank never detached: the name stays until the run's end */
    shm_unlink(r0.name);
}

/* Attaches in a child process that then exits without detaching (a killed
 * run), or, with `hold`, says so on hold[1] and waits for a byte on
 * hold[0] (hold[2..3]: the parent's ends, closed here) to detach first. */
static pid_t attach_in_child(uint64_t key, const int *hold)
{
    pid_t pid = fork();
    if (pid == 0) {
        thr_limits lim = disk_limits(1e9);
        thr_shm c;
        thr_shaper *sc;
        char why[512];
        if (thr_shm_attach(key, 0, &lim, &c, &sc, why, sizeof why) != 0)
            _exit(2);
        char b;
        if (hold)
            close(hold[2]), close(hold[3]);
        if (hold && write(hold[1], "a", 1) == 1 && read(hold[0], &b, 1) == 1)
            thr_shm_detach(&c);
        _exit(0);
    }
    return pid;
}

static void wait_ok(pid_t pid)
{
    int st = -1;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A run killed whole leaves its segment: the next segment made sweeps it,
 * and leaves one whose user is alive. */
static void stale_segments_swept(void **state)
{
    (void)state;
    uint64_t dead = test_key(), live = dead ^ 1, mine = dead ^ 2;
    thr_shm probe;
    thr_shaper *s;
    char why[512];
    thr_limits lim = disk_limits(1e9);
    int up[2], down[2];
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    int child_end[4] = {down[0], up[1], down[1], up[0]};
    pid_t holder = attach_in_child(live, child_end);
    close(down[0]), close(up[1]);
    char b;
    assert_int_equal(read(up[0], &b, 1), 1); /* attached */
    wait_ok(attach_in_child(dead, NULL)); /* after: the holder's attach sweeps too */
    char dead_name[64], live_name[64];
    snprintf(dead_name, sizeof dead_name, "/dlgauge-disk-%u-%016llx", (unsigned)getuid(), (unsigned long long)dead);
    snprintf(live_name, sizeof live_name, "/dlgauge-disk-%u-%016llx", (unsigned)getuid(), (unsigned long long)live);
    assert_true(name_exists(dead_name));
    assert_true(name_exists(live_name));
    assert_int_equal(thr_shm_attach(mine, 0, &lim, &probe, &s, why, sizeof why), 0);
    assert_false(name_exists(dead_name));
    assert_true(name_exists(live_name));
    assert_int_equal(write(down[1], "x", 1), 1);
    wait_ok(holder);
    assert_false(name_exists(live_name)); /* its last user out removed it */
    thr_shm_detach(&probe);
    assert_false(name_exists(probe.name));
    close(up[0]), close(down[1]);
}

/* A local rank past what a segment tells apart is refused with a reason. */
static void too_many_ranks(void **state)
{
    (void)state;
    thr_limits lim = disk_limits(1e9);
    thr_shm m;
    thr_shaper *s;
    char why[512] = "";
    assert_int_equal(thr_shm_attach(test_key(), THR_SHM_RANKS, &lim, &m, &s, why, sizeof why), -1);
    assert_non_null(strstr(why, "local rank 1024"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranks_share_one_disk),
        cmocka_unit_test(dead_holder_stops_no_one),
        cmocka_unit_test(stale_segments_swept),
        cmocka_unit_test(too_many_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
