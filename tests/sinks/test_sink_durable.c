/* Results survive a crash only if the directory entries of the files the
 * sinks create or rename are on disk too: fsync of a file does not write
 * its name into its directory.  This test's fsync stands in for libc's
 * (the executable exports it, so the sink plugins it loads call it) and
 * logs every directory it is asked to sync to $DLG_TEST_FSYNC_LOG.  Its
 * fdatasync logs "fdatasync FILE" there too (a result row is synced
 * before the sink's write returns, plugin.h), and fails with errno
 * $DLG_TEST_DATASYNC_FAIL where that is set, as a dying disk would. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sink_test_util.h"

int fsync(int fd)
{
    const char *log = getenv("DLG_TEST_FSYNC_LOG");
    struct stat st;
    if (log && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        char link[64], dir[PATH_MAX + 1];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, dir, sizeof dir - 1);
        int out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (n > 0 && out >= 0) {
            dir[n] = '\n';
            (void)!write(out, dir, (size_t)n + 1);
        }
        if (out >= 0)
            close(out);
    }
    return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
    const char *log = getenv("DLG_TEST_FSYNC_LOG"), *fail = getenv("DLG_TEST_DATASYNC_FAIL");
    char link[64], file[PATH_MAX + 1];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, file, sizeof file - 1);
    int out = log ? open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    if (n > 0 && out >= 0)
        dprintf(out, "fdatasync %.*s\n", (int)n, file);
    if (out >= 0)
        close(out);
    if (fail) {
        errno = atoi(fail);
        return -1;
    }
    return (int)syscall(SYS_fdatasync, fd);
}

typedef struct fixture {
    char *dir; /* realpath: what /proc/self/fd shows */
    char *log;
    mock_host m;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char *tmp = st_tempdir();
    f->dir = tmp ? realpath(tmp, NULL) : NULL;
    free(tmp);
    assert_non_null(f->dir);
    assert_true(asprintf(&f->log, "%s.fsync.log", f->dir) > 0); /* outside dir: logging syncs nothing there */
    unlink(f->log);
    setenv("DLG_TEST_FSYNC_LOG", f->log, 1);
    mock_host_init(&f->m);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unsetenv("DLG_TEST_FSYNC_LOG");
    unlink(f->log);
    st_rmtree(f->dir);
    free(f->log);
    free(f->dir);
    free(f);
    return 0;
}

/* How often directory dir/sub ("" for dir itself) was synced since the
 * log was last cleared. */
static int synced(const fixture *f, const char *sub)
{
    char want[PATH_MAX + 2];
    snprintf(want, sizeof want, "%s%s%s\n", f->dir, *sub ? "/" : "", sub);
    char *text = st_slurp(f->log, NULL);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, want)); p++)
        n += p == text || p[-1] == '\n';
    free(text);
    return n;
}

static void clear_log(const fixture *f) { unlink(f->log); }

/* How often file dir/name was fdatasync'ed since the log was cleared. */
static int datasynced(const fixture *f, const char *name)
{
    char want[PATH_MAX + 32];
    snprintf(want, sizeof want, "fdatasync %s/%s\n", f->dir, name);
    char *text = st_slurp(f->log, NULL);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, want)); p++)
        n += p == text || p[-1] == '\n';
    free(text);
    return n;
}

static void write_result(const dlg_sink_ops *ops, void *st)
{
    dlg_tag tags[] = {{"job", "resnet50"}};
    dlg_field fields[] = {{"throughput", DLG_FIELD_DOUBLE, {.d = 12.5}}};
    dlg_point p = {"dlgauge_result", tags, 1, fields, 1, 1000};
    assert_int_equal(ops->write(st, &p, 1), 0);
}

/* A new results file in new directories: each new entry's directory. */
static void check_new_file(fixture *f, const char *so, const char *type)
{
    char opt[PATH_MAX + 16];
    snprintf(opt, sizeof opt, "path=%s/a/b/run.out", f->dir);
    const char *ov[] = {opt, NULL};
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&f->m, so, type, ov, &ops, &st), 0);
    assert_int_equal(synced(f, ""), 1);    /* a/ */
    assert_int_equal(synced(f, "a"), 1);   /* a/b/ */
    assert_int_equal(synced(f, "a/b"), 1); /* a/b/run.out */
    write_result(ops, st);
    assert_int_equal(ops->flush(st, 0), 0);
    ops->close(st);
    /* the file exists now: opening it again creates nothing */
    clear_log(f);
    assert_int_equal(st_open_sink(&f->m, so, type, ov, &ops, &st), 0);
    ops->close(st);
    assert_int_equal(synced(f, "a/b"), 0);
    assert_int_equal(f->m.errors, 0);
}

static void test_csv_file_entry_synced(void **state) { check_new_file(*state, "csv.so", "csv"); }

static void test_json_file_entry_synced(void **state) { check_new_file(*state, "json.so", "json"); }

static void test_influx_file_entry_synced(void **state) { check_new_file(*state, "influx.so", "influx"); }

/* A record cut short by a crash goes to PATH.cut, a new file. */
static void test_cut_file_entry_synced(void **state)
{
    fixture *f = *state;
    char *path = st_join(f->dir, "r.csv");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("time,job,throughput\n1970-01-01T00:00:00.000001000Z,res", fp);
    fclose(fp);
    char opt[PATH_MAX + 16];
    snprintf(opt, sizeof opt, "path=%s", path);
    const char *ov[] = {opt, NULL};
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&f->m, "csv.so", "csv", ov, &ops, &st), 0);
    clear_log(f);
    write_result(ops, st); /* the header check moves the cut record away */
    ops->close(st);
    char *cut = st_join(f->dir, "r.csv.cut");
    assert_true(access(cut, F_OK) == 0);
    assert_int_equal(synced(f, ""), 1);
    free(cut);
    free(path);
}

static int write_progress(const dlg_sink_ops *ops, void *st)
{
    dlg_field fields[] = {{"step_rate", DLG_FIELD_DOUBLE, {.d = 2.0}}};
    dlg_point p = {"dlgauge_progress", NULL, 0, fields, 1, 5};
    return ops->write(st, &p, 1);
}

static void *open_file_sink(fixture *f, const char *so, const char *type, const char *name, const char *extra,
                            const dlg_sink_ops **ops)
{
    char opt[PATH_MAX + 16];
    snprintf(opt, sizeof opt, "path=%s/%s", f->dir, name);
    const char *ov[] = {opt, extra, NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(&f->m, so, type, ov, ops, &st), 0);
    return st;
}

static size_t lines_of(const fixture *f, const char *name)
{
    char *path = st_join(f->dir, name), *text = st_slurp(path, NULL);
    size_t n = text ? st_count_lines(text) : 0;
    free(text);
    free(path);
    return n;
}

/* Each result row reaches stable storage before write returns (the host
 * journals it then, and a power loss must not take it back): one
 * fdatasync of the file per write holding one; progress points, frequent
 * and not journaled, none.  The sinks used to sync only at flush. */
static void test_csv_rows_synced(void **state)
{
    fixture *f = *state;
    const dlg_sink_ops *ops;
    void *st = open_file_sink(f, "csv.so", "csv", "r.csv", NULL, &ops);
    clear_log(f);
    write_result(ops, st);
    assert_int_equal(datasynced(f, "r.csv"), 1);
    assert_int_equal(write_progress(ops, st), 0);
    assert_int_equal(datasynced(f, "r.csv"), 1);
    write_result(ops, st);
    assert_int_equal(datasynced(f, "r.csv"), 2);
    ops->close(st);
    assert_int_equal(lines_of(f, "r.csv"), 3); /* header, 2 rows */
    assert_int_equal(f->m.errors, 0);
}

/* A line-per-point file with progress points on (json, influx's path):
 * results and host points synced, progress points not. */
static void check_points_synced(fixture *f, const char *so, const char *type, const char *name)
{
    const dlg_sink_ops *ops;
    void *st = open_file_sink(f, so, type, name, "progress=true", &ops);
    clear_log(f);
    assert_int_equal(write_progress(ops, st), 0);
    assert_int_equal(datasynced(f, name), 0);
    write_result(ops, st);
    assert_int_equal(datasynced(f, name), 1);
    dlg_tag tags[] = {{"host", "h"}, {"run_id", "r1"}};
    dlg_field fields[] = {{"cpus_online", DLG_FIELD_INT, {.i = 2}}};
    dlg_point batch[] = {{"dlgauge_progress", NULL, 0, fields, 1, 6}, {"dlgauge_host", tags, 2, fields, 1, 7}};
    assert_int_equal(ops->write(st, batch, 2), 0); /* the host point, with a progress point: one sync */
    assert_int_equal(datasynced(f, name), 2);
    ops->close(st);
    assert_int_equal(lines_of(f, name), 4);
    assert_int_equal(f->m.errors, 0);
}

static void test_json_results_synced(void **state) { check_points_synced(*state, "json.so", "json", "r.jsonl"); }

/* The influx sink's file used to sync at flush only. */
static void test_influx_results_synced(void **state)
{
    check_points_synced(*state, "influx.so", "influx", "r.lp");
}

/* A sync that fails (EIO): one error naming the file and the sync, and
 * the row taken back out of the file, as write's failure means "not
 * journaled": --resume writes it again, and must not find a copy. */
static void check_sync_fails(fixture *f, const char *so, const char *type, const char *name, size_t lines_before)
{
    const dlg_sink_ops *ops;
    void *st = open_file_sink(f, so, type, name, NULL, &ops);
    char eio[16];
    snprintf(eio, sizeof eio, "%d", EIO);
    setenv("DLG_TEST_DATASYNC_FAIL", eio, 1);
    dlg_tag tags[] = {{"job", "resnet50"}};
    dlg_field fields[] = {{"throughput", DLG_FIELD_DOUBLE, {.d = 12.5}}};
    dlg_point p = {"dlgauge_result", tags, 1, fields, 1, 1000};
    int rc = ops->write(st, &p, 1);
    unsetenv("DLG_TEST_DATASYNC_FAIL");
    assert_int_equal(rc, -DLG_EIO);
    assert_int_equal(f->m.errors, 1);
    char *path = st_join(f->dir, name);
    assert_non_null(strstr(f->m.last_error, path));
    assert_non_null(strstr(f->m.last_error, "fdatasync"));
    assert_non_null(strstr(f->m.last_error, strerror(EIO)));
    assert_int_equal(lines_of(f, name), lines_before);
    write_result(ops, st); /* the disk is back: the row goes in once */
    ops->close(st);
    assert_int_equal(lines_of(f, name), lines_before + 1);
    free(path);
}

static void test_csv_sync_fails(void **state) { check_sync_fails(*state, "csv.so", "csv", "r.csv", 1); }

static void test_json_sync_fails(void **state) { check_sync_fails(*state, "json.so", "json", "r.jsonl", 0); }

static void test_influx_sync_fails(void **state) { check_sync_fails(*state, "influx.so", "influx", "r.lp", 0); }

/* A TCP port on 127.0.0.1 that refuses connections: bound, not listening. */
static int refusing_port(int *sock)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    *sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(*sock >= 0);
    assert_int_equal(bind(*sock, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(*sock, (struct sockaddr *)&a, &len), 0);
    return ntohs(a.sin_port);
}

static void *open_influx(fixture *f, int port, const dlg_sink_ops **ops)
{
    char url[128], sd[PATH_MAX + 32];
    snprintf(url, sizeof url, "url=http://127.0.0.1:%d/write?db=x", port);
    snprintf(sd, sizeof sd, "spool_dir=%s/spool/d", f->dir);
    const char *ov[] = {url, sd, "retries=0", "batch=1", "timeout=2s", NULL};
    void *st = NULL;
    assert_int_equal(st_open_sink(&f->m, "influx.so", "influx", ov, ops, &st), 0);
    return st;
}

/* InfluxDB unreachable: the spool (and its directories) are new files. */
static void test_spool_entry_synced(void **state)
{
    fixture *f = *state;
    int sock;
    int port = refusing_port(&sock);
    const dlg_sink_ops *ops;
    void *st = open_influx(f, port, &ops);
    write_result(ops, st);
    assert_int_equal(ops->flush(st, 2000000000u), -DLG_EAGAIN); /* spooled */
    ops->close(st);
    close(sock);
    char *spool = st_join(f->dir, "spool/d/influx.lp");
    assert_true(access(spool, F_OK) == 0);
    assert_int_equal(synced(f, ""), 1);
    assert_int_equal(synced(f, "spool"), 1);
    assert_true(synced(f, "spool/d") >= 1);
    free(spool);
}

/* A replay cut short (InfluxDB takes one batch, then answers 503): the
 * offset file is created, then removed, and the unsent tail renamed over
 * the spool -- each change synced in the spool's directory. */
static void test_partial_replay_entries_synced(void **state)
{
    fixture *f = *state;
    char *sd = st_join(f->dir, "spool"), *d = st_join(sd, "d"), *spool = st_join(d, "influx.lp");
    mkdir(sd, 0777);
    mkdir(d, 0777);
    FILE *fp = fopen(spool, "w");
    assert_non_null(fp);
    fputs("m v=1i 1\nm v=2i 2\nm v=3i 3\n", fp);
    fclose(fp);
    static const char *const steps[] = {"204", "503", "503", "503", NULL};
    st_fake fk;
    assert_int_equal(st_fake_start(&fk, f->dir, "fake", steps), 0);
    clear_log(f);
    const dlg_sink_ops *ops;
    void *st = open_influx(f, fk.port, &ops); /* replays at open */
    ops->close(st);
    st_fake_stop(&fk);
    char *left = st_slurp(spool, NULL);
    assert_string_equal(left, "m v=2i 2\nm v=3i 3\n");
    assert_true(synced(f, "spool/d") >= 3); /* .sent created, .sent removed, tail renamed */
    free(left);
    free(spool);
    free(d);
    free(sd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_csv_file_entry_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_file_entry_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_influx_file_entry_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_file_entry_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv_rows_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_results_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv_sync_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_sync_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_influx_results_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_influx_sync_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spool_entry_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_replay_entries_synced, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
