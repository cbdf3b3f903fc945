/* cache = cold on files just written: their pages are dirty, which
 * posix_fadvise(DONTNEED) skips, so the eviction syncs them first (else a
 * "cold" read came from memory, 5x too fast, with cache_method = fadvise);
 * and what stays cached whatever it does (tmpfs, here) is said in
 * cache_method and a warning, counted with mincore, as what cache = warm's
 * pre-read failed to keep cached is.  Run unprivileged
 * where it can (seteuid nobody): root's drop_caches would hide the bug. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "loader.h"
#include "page_cache.h"
#include "tmpdir.h"

#define TMPFS_MAGIC_ 0x01021994

/* Writes size bytes of a pattern to path (mode 0644), leaving them dirty. */
static void write_file(const char *path, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    char buf[65536];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (char)(i * 31 + 7);
    for (size_t at = 0; at < size;) {
        size_t n = size - at < sizeof buf ? size - at : sizeof buf;
        assert_int_equal(write(fd, buf, n), (ssize_t)n);
        at += n;
    }
    assert_int_equal(close(fd), 0);
}

/* A new temporary folder named for the test, on a file system whose page
 * cache can be evicted: skips the test on tmpfs, which cannot. */
static void evictable_dir(char dir[32], const char *name)
{
    tmpdir_make(dir, name);
    struct statfs fs;
    assert_int_equal(statfs(dir, &fs), 0);
    if (fs.f_type == TMPFS_MAGIC_) {
        tmpdir_rmrf(dir);
        skip();
    }
}

static void dirty_file_is_evicted(void **state)
{
    (void)state;
    char dir[32], path[64];
    evictable_dir(dir, "evict");
    assert_int_equal(chmod(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/data", dir);
    const size_t size = 8u << 20;
    write_file(path, size);
    assert_true(tc_resident_pages(path, NULL) > 0); /* the dirty pages the bug left */
    if (geteuid() == 0) /* nobody's own file, which mincore tells nobody of */
        assert_int_equal(chown(path, 65534, 65534), 0);
    bool root = geteuid() == 0, dropped = root && seteuid(65534) == 0;
    dlg_cache_result r;
    dlg_data_err err = {0};
    int rc = dlg_cache_file(path, DLG_CACHE_COLD, NULL, &r, &err);
    if (dropped)
        assert_int_equal(seteuid(0), 0);
    assert_int_equal(rc, 0);
    print_message("cold on a file just written: %s, %zu pages stayed\n", r.method, tc_resident_pages(path, NULL));
    assert_int_equal(tc_resident_pages(path, NULL), 0);
    assert_int_equal(r.bytes, size);
    assert_int_equal(r.resident, 0);
    assert_string_equal(r.method, "fadvise"); /* it sufficed: no drop_caches, even as root */
    (void)root;
    char warn[512];
    assert_false(dlg_cache_warning(&r, path, warn, sizeof warn));
    tmpdir_rmrf(dir);
}

/* As root, a file that fadvise evicts whole is not followed by
 * drop_caches, which would empty the whole machine's clean page cache
 * (every other process's files) for nothing. */
static void root_drops_caches_only_when_needed(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* drop_caches is root's alone */
    char dir[32], path[64];
    evictable_dir(dir, "nodrop");
    snprintf(path, sizeof path, "%s/data", dir);
    write_file(path, 4u << 20);
    dlg_cache_result r;
    dlg_data_err err = {0};
    assert_int_equal(dlg_cache_file(path, DLG_CACHE_COLD, NULL, &r, &err), 0);
    assert_int_equal(r.resident, 0);
    assert_string_equal(r.method, "fadvise");
    tmpdir_rmrf(dir);
}

/* mincore tells a user who neither owns nor may write a file that all of
 * it is cached: that is no failed eviction, only an unverified one. */
static void unreadable_residency_is_unverified(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* needs a file of another user */
    char dir[32], path[64];
    tmpdir_make(dir, "unver");
    assert_int_equal(chmod(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/data", dir);
    write_file(path, 1u << 20); /* root's, 0644 */
    if (seteuid(65534) != 0) {
        tmpdir_rmrf(dir);
        skip();
    }
    dlg_cache_result r;
    dlg_data_err err = {0};
    int rc = dlg_cache_file(path, DLG_CACHE_COLD, NULL, &r, &err);
    int fd = open(path, O_RDONLY);
    int64_t said = fd >= 0 ? dlg_cache_resident(fd, 1u << 20) : 0;
    if (fd >= 0)
        close(fd);
    assert_int_equal(seteuid(0), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(said, -1);
    assert_string_equal(r.method, "fadvise (unverified)");
    assert_int_equal(r.resident, 0);
    assert_int_equal(r.unknown, 1u << 20);
    char warn[512];
    assert_false(dlg_cache_warning(&r, path, warn, sizeof warn));
    tmpdir_rmrf(dir);
}

/* A tmpfs file cannot leave memory: cache_method and the warning say how
 * much stayed (all of it), rather than "fadvise" alone. */
static void resident_file_is_said(void **state)
{
    (void)state;
    const char *path = "/dev/shm/dlg_cache_evict_test";
    struct statfs fs;
    if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC_)
        skip();
    write_file(path, 1000000);
    dlg_cache_result r;
    dlg_data_err err = {0};
    assert_int_equal(dlg_cache_file(path, DLG_CACHE_COLD, NULL, &r, &err), 0);
    assert_int_equal(r.bytes, 1000000);
    assert_int_equal(r.resident, 1000000);
    const char *how = strstr(r.method, " (100% stayed cached)");
    assert_non_null(how);
    assert_int_equal(how[strlen(how) - 1], ')');
    assert_true(!strncmp(r.method, "fadvise (", 9) || !strncmp(r.method, "fadvise+drop_caches (", 21));
    char warn[512];
    assert_true(dlg_cache_warning(&r, path, warn, sizeof warn));
    char want[200];
    snprintf(want, sizeof want, "cache = cold: 1.0 MB of %s's 1.0 MB stayed in the page cache", path);
    assert_non_null(strstr(warn, want));
    assert_non_null(strstr(warn, r.method));
    unlink(path);
}

/* The residency count maps a window at a time: a file past one window,
 * with a part page at its end, counts to its exact size. */
static void residency_counts_past_a_window(void **state)
{
    (void)state;
    const char *path = "/dev/shm/dlg_cache_evict_big";
    struct statfs fs;
    if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC_)
        skip();
    const size_t size = (64u << 20) * 2 + 5000;
    write_file(path, size);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(dlg_cache_resident(fd, size), (int64_t)size);
    assert_int_equal(dlg_cache_resident(fd, 0), 0);
    close(fd);
    unlink(path);
}

/* A stop request counted in pieces: stop once asked `after` times. */
typedef struct counted_stop {
    int asked, after;
} counted_stop;

static bool stop_after(void *ctx)
{
    counted_stop *c = ctx;
    return ++c->asked > c->after;
}

/* cache = warm reads a whole dataset before the first step (minutes for
 * many GB): it asks the stop request every 64 MiB and between files, and
 * ends with -DLG_ESTOP when told (it read on to the end, past a Ctrl-C). */
static void warm_asks_to_stop(void **state)
{
    (void)state;
    char dir[32], path[64];
    tmpdir_make(dir, "warm");
    snprintf(path, sizeof path, "%s/data", dir);
    write_file(path, (64u << 20) * 3 + 100);
    dlg_cache_result r;
    dlg_data_err err = {0};
    counted_stop never = {0, 1000};
    dlg_stop_ask ask = {stop_after, &never};
    assert_int_equal(dlg_cache_file(path, DLG_CACHE_WARM, &ask, &r, &err), 0);
    assert_string_equal(r.method, "read");
    assert_int_equal(never.asked, 1 + 3); /* before the file, then each 64 MiB */
    counted_stop second = {0, 1};
    ask.ctx = &second;
    assert_int_equal(dlg_cache_file(path, DLG_CACHE_WARM, &ask, &r, &err), -DLG_ESTOP);
    assert_int_equal(second.asked, 2);
    assert_non_null(strstr(err.msg, "cache = warm: stopped while pre-reading"));
    tmpdir_rmrf(dir);
}

/* A stop request that is never a stop: the second time it is asked (64
 * MiB into the pre-read) it evicts the whole file, as a memory limit
 * smaller than the file would push out its first pages. */
typedef struct evicting_ask {
    const char *path;
    int asked;
} evicting_ask;

static bool evict_on_second(void *ctx)
{
    evicting_ask *e = ctx;
    if (++e->asked == 2) {
        int fd = open(e->path, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(fdatasync(fd), 0); /* DONTNEED skips dirty pages */
        assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        close(fd);
    }
    return false;
}

/* cache = warm counts with mincore what its pre-read left cached: all of
 * a file it kept ("read", no warning); of one whose first 64 MiB were
 * evicted while the last 4 were read, 5%, which cache_method and a
 * warning say (the timed reads go to the disk; the row said "read"). */
static void warm_says_what_stayed_cached(void **state)
{
    (void)state;
    char dir[32], path[64];
    evictable_dir(dir, "warmres");
    snprintf(path, sizeof path, "%s/data", dir);
    const size_t size = (64u << 20) + (4u << 20);
    write_file(path, size);
    dlg_cache_result r;
    dlg_data_err err = {0};
    char warn[512];
    assert_int_equal(dlg_cache_file(path, DLG_CACHE_WARM, NULL, &r, &err), 0);
    assert_string_equal(r.method, "read");
    assert_int_equal(r.bytes, size);
    assert_int_equal(r.resident, size);
    assert_false(dlg_cache_warning(&r, path, warn, sizeof warn));

    evicting_ask e = {path, 0};
    dlg_stop_ask ask = {evict_on_second, &e};
    assert_int_equal(dlg_cache_file(path, DLG_CACHE_WARM, &ask, &r, &err), 0);
    assert_int_equal(e.asked, 2);
    print_message("warm, 64 MiB evicted: %s, %llu of %zu bytes cached\n", r.method,
                  (unsigned long long)r.resident, size);
    assert_int_equal(r.bytes, size);
    assert_in_range(r.resident, 1, 8u << 20); /* the last 4 MiB, less what reclaim took */
    assert_true(!strncmp(r.method, "read (", 6) && strstr(r.method, "% stayed cached)"));
    assert_true(dlg_cache_warning(&r, path, warn, sizeof warn));
    print_message("%s\n", warn);
    char want[160];
    snprintf(want, sizeof want, "cache = warm: only %d%% of %s (", (int)(r.resident * 100 / size), path);
    assert_non_null(strstr(warn, want));
    assert_non_null(strstr(warn, "MiB of 68.0 MiB) stayed in the page cache"));
    assert_non_null(strstr(warn, "the timed reads will go to the disk"));
    assert_non_null(strstr(warn, r.method));
    tmpdir_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dirty_file_is_evicted),
        cmocka_unit_test(root_drops_caches_only_when_needed),
        cmocka_unit_test(unreadable_residency_is_unverified),
        cmocka_unit_test(resident_file_is_said),
        cmocka_unit_test(residency_counts_past_a_window),
        cmocka_unit_test(warm_asks_to_stop),
        cmocka_unit_test(warm_says_what_stayed_cached),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
