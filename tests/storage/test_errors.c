/* Bad input gives one clear error, never a crash: missing files name the
 * file, a directory is called one, out-of-range options name the key,
 * broken profiles name the profile file and line, and O_DIRECT on a
 * filesystem that refuses it says so. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage_util.h"

static void test_missing_file_every_backend(void **state)
{
    for (int i = 0; i < ST_NBACKENDS; i++) {
        mock_host m;
        st_backend b;
        const char *path = STORAGE_TEST_DIR "/no/such/file.rec";
        dlg_file *f = NULL;
        int rc = st_open_fresh(&m, &b, st_backends[i], NULL, path, DLG_OPEN_READ, &f);
        assert_int_equal(rc, -DLG_EIO);
        assert_null(f);
        if (!strstr(m.last_error, path))
            fail_msg("%s: error does not name the file: %s", st_backends[i], m.last_error);
        st_backend_destroy(&b);
        mock_host_fini(&m);
    }
}

/* A directory opens (or, with O_DIRECT, fails with EINVAL) on Linux: each
 * backend must say that it is a directory, not blame the filesystem's
 * O_DIRECT or mmap support, nor fail later at every read. */
static void test_directory_every_backend(void **state)
{
    const char *names[] = {"posix", "direct", "mmap", "uring", "uring"};
    const char *const uring_direct[] = {"direct=true", NULL};
    for (int i = 0; i < 5; i++) {
        mock_host m;
        mock_host_init(&m);
        st_backend b;
        assert_int_equal(st_backend_create(&b, &m, names[i], i == 4 ? uring_direct : NULL), 0);
        dlg_file *f = NULL;
        int rc = st_open(&b, &m, STORAGE_TEST_DIR, DLG_OPEN_READ, &f);
        if (rc != -DLG_EINVAL || !strstr(m.last_error, STORAGE_TEST_DIR) ||
            !strstr(m.last_error, "is a directory") || strstr(m.last_error, "O_DIRECT"))
            fail_msg("%s: open of a directory gave %d: '%s'", names[i], rc, m.last_error);
        assert_null(f);
        st_backend_destroy(&b);
        mock_host_fini(&m);
    }
}

/* Opens and closes path with backend `name` (overrides o); returns open's
 * result, its error line in err. */
static int open_once(const char *name, const char *const *o, const char *path, int flags, char *err,
                     size_t errlen)
{
    mock_host m;
    mock_host_init(&m);
    st_backend b;
    assert_int_equal(st_backend_create(&b, &m, name, o), 0);
    dlg_file *f = NULL;
    int rc = st_open(&b, &m, path, flags, &f);
    assert_true(rc == 0 ? f != NULL : f == NULL);
    if (f)
        st_close(f);
    snprintf(err, errlen, "%s", m.last_error);
    st_backend_destroy(&b);
    mock_host_fini(&m);
    return rc;
}

/* Expects one error line naming the file and `why`. */
static void expect_open_refused(const char *name, const char *const *o, const char *path, int flags,
                                const char *why)
{
    char err[1024];
    int rc = open_once(name, o, path, flags, err, sizeof err);
    if (rc != -DLG_EINVAL || !strstr(err, path) || !strstr(err, why))
        fail_msg("%s: open of %s gave %d: '%s'", name, path, rc, err);
}

/* A FIFO as data made open() wait forever for a writer (the run hung); a
 * character device opened with size 0 ("the file is empty", or, with
 * O_DIRECT, blamed on the filesystem).  Both are refused at once, by name;
 * writing to a character device (/dev/null) stays allowed. */
static void test_fifo_and_chardev_every_backend(void **state)
{
    char dir[512], fifo[600];
    st_tmpdir(dir, "fifo");
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(10); /* the old code blocked in open(): fail, do not hang */
    const char *names[] = {"posix", "direct", "mmap", "uring", "uring", "throttle"};
    const char *const uring_direct[] = {"direct=true", NULL};
    for (int i = 0; i < 6; i++) {
        const char *const *o = i == 4 ? uring_direct : NULL;
        expect_open_refused(names[i], o, fifo, DLG_OPEN_READ, "is a FIFO");
        expect_open_refused(names[i], o, "/dev/null", DLG_OPEN_READ, "is a character device");
    }
    expect_open_refused("posix", NULL, fifo, DLG_OPEN_WRITE, "is a FIFO");
    alarm(0);
    char err[1024];
    if (open_once("posix", NULL, "/dev/null", DLG_OPEN_WRITE, err, sizeof err) != 0)
        fail_msg("writing /dev/null: %s", err);
    unlink(fifo);
    rmdir(dir);
}

static int lease_fd = -1;
static void release_lease(int sig) { (void)sig; (void)fcntl(lease_fd, F_SETLEASE, F_UNLCK); }

/* The O_NONBLOCK that keeps a FIFO from blocking open() also makes open()
 * of a file under a lease (Samba, NFS servers) fail with EWOULDBLOCK
 * instead of waiting for the holder to let go: such files must still open. */
static void test_leased_file_opens(void **state)
{
    char dir[512], path[600];
    st_tmpdir(dir, "lease");
    snprintf(path, sizeof path, "%s/leased.bin", dir);
    int w = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    assert_true(w >= 0);
    close(w);
    lease_fd = open(path, O_RDONLY);
    struct sigaction sa = {.sa_handler = release_lease, .sa_flags = SA_RESTART}, old;
    sigaction(SIGIO, &sa, &old);
    if (fcntl(lease_fd, F_SETLEASE, F_WRLCK) != 0) { /* leases off here */
        sigaction(SIGIO, &old, NULL);
        close(lease_fd);
        skip();
        return;
    }
    char err[1024];
    if (open_once("posix", NULL, path, DLG_OPEN_READ, err, sizeof err) != 0)
        fail_msg("open of a leased file: %s", err);
    sigaction(SIGIO, &old, NULL);
    close(lease_fd);
    unlink(path);
    rmdir(dir);
}

/* sysfs attributes are files that cannot be mapped (ENODEV). */
static void test_mmap_unmappable_file(void **state)
{
    const char *path = "/sys/kernel/mm/transparent_hugepage/enabled";
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size == 0) {
        skip();
        return;
    }
    mock_host m;
    mock_host_init(&m);
    st_backend b;
    assert_int_equal(st_backend_create(&b, &m, "mmap", NULL), 0);
    dlg_file *f = NULL;
    int rc = st_open(&b, &m, path, DLG_OPEN_READ, &f);
    if (rc == 0) { /* a kernel that maps it: nothing to check */
        st_close(f);
    } else {
        assert_int_equal(rc, -DLG_ENOTSUP);
        assert_non_null(strstr(m.last_error, path));
        assert_non_null(strstr(m.last_error, "type = posix"));
    }
    st_backend_destroy(&b);
    mock_host_fini(&m);
}

static void expect_create_error(const char *backend, const char *const *o, const char *want1,
                                const char *want2)
{
    mock_host m;
    mock_host_init(&m);
    st_backend b;
    int rc = st_backend_create(&b, &m, backend, o);
    if (rc >= 0)
        fail_msg("%s with %s: created, expected an error", backend, o[0]);
    assert_int_equal(rc, -DLG_EINVAL);
    if (!strstr(m.last_error, want1) || (want2 && !strstr(m.last_error, want2)))
        fail_msg("%s: error '%s' lacks '%s'/'%s'", backend, m.last_error, want1, want2 ? want2 : "");
    mock_host_fini(&m);
}

static void test_out_of_range_options(void **state)
{
    const char *const d0[] = {"depth=0", NULL};
    expect_create_error("uring", d0, "depth", "[1, 4096]");
    const char *const d1[] = {"depth=5000", NULL};
    expect_create_error("uring", d1, "depth", NULL);
    const char *const sb[] = {"submit_batch=0", NULL};
    expect_create_error("uring", sb, "submit_batch", "[1, 4096]");
    const char *const bm[] = {"bounce_max=4K", NULL};
    expect_create_error("direct", bm, "bounce_max", NULL);
    const char *const io[] = {"iops=-5", NULL};
    expect_create_error("throttle", io, "iops", "out of range");
    const char *const fo[] = {"iops_per_gib=50", NULL};
    expect_create_error("throttle", fo, "iops_per_gib", "capacity");
    const char *const ex[] = {"latency=1ms", "latency_dist=exponential", "latency_jitter=3ms", NULL};
    expect_create_error("throttle", ex, "latency_jitter", NULL);
    /* merging fills units: without one it would silently do nothing */
    const char *const mg[] = {"iops=3000", "iops_merge=32KiB", NULL};
    expect_create_error("throttle", mg, "iops_merge", "iops_unit");
}

/* The create's whole error line, exactly; NULL: created. */
static void expect_create_line(const char *backend, const char *const *o, const char *want)
{
    mock_host m;
    mock_host_init(&m);
    st_backend b;
    int rc = st_backend_create(&b, &m, backend, o);
    print_message("%s %s...: %s\n", backend, o[0], rc < 0 ? m.last_error : "created");
    if (!want) {
        if (rc < 0)
            fail_msg("%s with %s: '%s', expected to be created", backend, o[0], m.last_error);
        st_backend_destroy(&b);
    } else {
        assert_int_equal(rc, -DLG_EINVAL);
        assert_string_equal(m.last_error, want);
    }
    mock_host_fini(&m);
}

/* Uniform and normal latencies are clamped to [0, 2 x latency] to keep the
 * mean: a jitter that the clamp would cut materially is refused (10 ms of
 * normal stddev over 1 ms ran as ~1 ms), one that it leaves alone runs. */
static void test_jitter_past_clamp_refused(void **state)
{
    (void)state;
    const char *const n10[] = {"latency=1ms", "latency_dist=normal", "latency_jitter=10ms", NULL};
    expect_create_line("throttle", n10,
                       "latency_jitter = 10ms is over what latency_dist = normal honours with latency = 1ms: "
                       "samples are clamped to [0, 2 x latency] to keep the mean, which would cut the stddev; "
                       "the largest latency_jitter honoured is 500us (= latency / 2)");
    const char *const u5[] = {"latency=1ms", "latency_dist=uniform", "latency_jitter=5ms", NULL};
    expect_create_line("throttle", u5,
                       "latency_jitter = 5ms is over what latency_dist = uniform honours with latency = 1ms: "
                       "samples are clamped to [0, 2 x latency] to keep the mean, which would cut the "
                       "half-width; the largest latency_jitter honoured is 1ms (= latency)");
    /* the old default for normal (jitter = latency) is past the bound too */
    const char *const n1[] = {"latency=1ms", "latency_dist=normal", "latency_jitter=1ms", NULL};
    expect_create_line("throttle", n1,
                       "latency_jitter = 1ms is over what latency_dist = normal honours with latency = 1ms: "
                       "samples are clamped to [0, 2 x latency] to keep the mean, which would cut the stddev; "
                       "the largest latency_jitter honoured is 500us (= latency / 2)");
    const char *const nok[] = {"latency=1ms", "latency_dist=normal", "latency_jitter=500us", NULL};
    expect_create_line("throttle", nok, NULL);
    const char *const ndef[] = {"latency=1ms", "latency_dist=normal", NULL};
    expect_create_line("throttle", ndef, NULL);
    const char *const uok[] = {"latency=1ms", "latency_dist=uniform", "latency_jitter=1ms", NULL};
    expect_create_line("throttle", uok, NULL);
}

/* The same refusal from a profile names it. */
static void test_jitter_past_clamp_in_profile(void **state)
{
    (void)state;
    char dir[512], path[600], opt[700], want[1200];
    st_tmpdir(dir, "jitter");
    snprintf(path, sizeof path, "%s/jitter.ini", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("latency = 2ms\nlatency_dist = uniform\nlatency_jitter = 2.5ms\n", f);
    fclose(f);
    snprintf(opt, sizeof opt, "profile=%s", path);
    const char *const o[] = {opt, NULL};
    snprintf(want, sizeof want,
             "profile %s: latency_jitter = 2500us is over what latency_dist = uniform honours with "
             "latency = 2ms: samples are clamped to [0, 2 x latency] to keep the mean, which would cut "
             "the half-width; the largest latency_jitter honoured is 2ms (= latency)",
             path);
    expect_create_line("throttle", o, want);
    unlink(path);
    rmdir(dir);
}

/* submit_batch over depth never fills: said once at create, not refused
 * (a sweep over depth keeps its cells). */
static void test_uring_batch_over_depth_said(void **state)
{
    (void)state;
    mock_host m;
    mock_host_init(&m);
    st_backend b;
    const char *const o[] = {"depth=4", "submit_batch=16", NULL};
    assert_int_equal(st_backend_create(&b, &m, "uring", o), 0);
    assert_int_equal(m.warnings, 1);
    assert_string_equal(m.last_log, "uring: submit_batch = 16 is over depth = 4: at most depth reads wait at "
                                     "once, so they go to the kernel 4 at a time (set submit_batch <= depth)");
    st_backend_destroy(&b);
    mock_host_fini(&m);
    mock_host_init(&m);
    const char *const d[] = {"depth=2", NULL}; /* the default batch, 4: acts as depth, as its help says */
    assert_int_equal(st_backend_create(&b, &m, "uring", d), 0);
    assert_int_equal(m.warnings, 0);
    st_backend_destroy(&b);
    mock_host_fini(&m);
}

/* A host's lookup of `inner`: "fast" is a storage whose creation fails
 * (the host's line says why, and *ops names its backend); any other name
 * is unknown, and this host, as the mock's, says nothing of it. */
static const dlg_storage_ops failing_ops = {.version = 1};
static int lookup_failing(const dlg_host *h, const char *name, const dlg_storage_ops **ops, void **inst)
{
    (void)inst;
    if (strcmp(name, "fast") != 0)
        return -DLG_EINVAL;
    *ops = &failing_ops;
    return h->error(h, DLG_EINVAL, "[storage fast] throttle: inner = gone: the real cause");
}

/* A throttle whose inner storage exists but fails to create keeps the
 * host's line about why: it was replaced by "no [storage fast] section and
 * no storage backend type 'fast'", which is false.  An unknown name still
 * gets that line, at the key. */
static void test_inner_create_failure_kept(void **state)
{
    (void)state;
    static const char *const names[] = {"fast", "nosuch"};
    static const char *const said[] = {"inner = gone: the real cause",
                                       "inner = nosuch: no [storage nosuch] section and no storage backend type"};
    for (int i = 0; i < 2; i++) {
        mock_host m;
        mock_host_init(&m);
        m.host.storage_lookup = lookup_failing;
        char opt[64];
        snprintf(opt, sizeof opt, "inner=%s", names[i]);
        const char *const o[] = {opt, NULL};
        st_backend b;
        int rc = st_backend_create(&b, &m, "throttle", o);
        if (rc != -DLG_EINVAL || !strstr(m.last_error, said[i]) || (i == 0 && strstr(m.last_error, "no [storage")))
            fail_msg("inner = %s: create gave %d: '%s'", names[i], rc, m.last_error);
        mock_host_fini(&m);
    }
}

/* Writes a profile and expects the error to name the file and the line. */
static void expect_profile_error(const char *text, const char *line_tag, const char *want)
{
    char dir[512], path[600], opt[700], tag[700];
    st_tmpdir(dir, "profile");
    snprintf(path, sizeof path, "%s/bad.ini", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(opt, sizeof opt, "profile=%s", path);
    const char *const o[] = {opt, NULL};
    snprintf(tag, sizeof tag, "%s%s", path, line_tag);
    expect_create_error("throttle", o, tag, want);
    unlink(path);
    rmdir(dir);
}

static void test_bad_profiles(void **state)
{
    expect_profile_error("; ok\nbandwidth = 50MB\nlatency = fast\n", ":3:", "latency");
    expect_profile_error("iops = 100\n\n\nspeed = 3\n", ":4:", "unknown key 'speed'");
    expect_profile_error("[disk]\niops = 100\nthis line is broken\n", ":3:", "syntax");
    expect_profile_error("[other]\niops = 100\n", ":2:", "[other]");
    expect_profile_error("inner = posix\n", ":1:", "[storage]");
    expect_profile_error("latency_dist = gaussian\n", ":1:", "fixed|uniform|exponential|normal");
    /* unreadable: the error names the profile */
    const char *const o[] = {"profile=" STORAGE_TEST_DIR "/missing-profile.ini", NULL};
    expect_create_error("throttle", o, STORAGE_TEST_DIR "/missing-profile.ini", "cannot open");
}

/* /dev/shm is tmpfs; kernels before 6.6 refuse O_DIRECT there. Either way
 * the outcome must be clean: correct bytes and one warning (per backend
 * instance) that the reads come from memory, or an error that names the
 * file and points to posix. */
static void test_direct_on_tmpfs(void **state)
{
    struct stat st;
    if (stat("/dev/shm", &st) != 0) {
        skip();
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/dlg-direct-%d.bin", (int)getpid());
    mock_host m;
    mock_host_init(&m);
    st_backend posix, direct;
    assert_int_equal(st_backend_create(&posix, &m, "posix", NULL), 0);
    uint8_t *data = st_write_file(&posix, &m, path, 10000, 3);
    assert_non_null(data);
    assert_int_equal(st_backend_create(&direct, &m, "direct", NULL), 0);
    dlg_file *f = NULL;
    int rc = st_open(&direct, &m, path, DLG_OPEN_READ, &f);
    if (rc == 0) {
        uint8_t buf[3000];
        assert_int_equal(direct.ops->read(f, buf, sizeof buf, 4), (int64_t)sizeof buf);
        assert_memory_equal(buf, data + 4, sizeof buf);
        st_close(f);
        print_message("%s\n", m.last_log);
        assert_int_equal(m.warnings, 1);
        assert_non_null(strstr(m.last_log, "tmpfs"));
        assert_non_null(strstr(m.last_log, path));
        assert_int_equal(st_open(&direct, &m, path, DLG_OPEN_READ, &f), 0);
        st_close(f);
        assert_int_equal(m.warnings, 1); /* once, not per file */
    } else {
        assert_int_equal(rc, -DLG_ENOTSUP);
        assert_non_null(strstr(m.last_error, path));
        assert_non_null(strstr(m.last_error, "O_DIRECT"));
        assert_non_null(strstr(m.last_error, "posix"));
    }
    unlink(path);
    free(data);
    st_backend_destroy(&posix);
    st_backend_destroy(&direct);
    mock_host_fini(&m);
}

/* sysfs refuses O_DIRECT on every kernel.  Under a throttle the way out is
 * inner = posix (type = posix would drop the emulated disk): the one error
 * line says so. */
static void test_direct_refused_under_throttle(void **state)
{
    (void)state;
    const char *path = "/sys/kernel/mm/transparent_hugepage/enabled";
    if (access(path, R_OK) != 0) {
        skip();
        return;
    }
    mock_host m;
    mock_host_init(&m);
    st_backend thr;
    const char *const o[] = {"inner=direct", NULL};
    assert_int_equal(st_backend_create(&thr, &m, "throttle", o), 0);
    dlg_file *f = NULL;
    assert_int_equal(st_open(&thr, &m, path, DLG_OPEN_READ, &f), -DLG_ENOTSUP);
    print_message("%s\n", m.last_error);
    assert_non_null(strstr(m.last_error, path));
    assert_non_null(strstr(m.last_error, "O_DIRECT"));
    assert_non_null(strstr(m.last_error, "inner = posix"));
    assert_null(strchr(m.last_error, '\n'));
    st_backend_destroy(&thr);
    mock_host_fini(&m);
}

/* In a child whose seccomp policy refuses io_uring_setup with errno
 * (as Docker's default profile does): opens path with backend `name` and
 * checks the one error line. Exit status 0, or 1 after saying why. */
static int refused_child(const char *name, const char *const *o, const char *path, int err,
                         const char *const *want)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("seccomp");
        return 2; /* no seccomp here: the parent skips */
    }
    mock_host m;
    mock_host_init(&m);
    st_backend b;
    dlg_file *f = NULL;
    int rc = st_backend_create(&b, &m, name, o);
    if (rc == 0)
        rc = st_open(&b, &m, path, DLG_OPEN_READ, &f);
    bool ok = rc == -DLG_ENOTSUP && !f && strstr(m.last_error, path) && !strchr(m.last_error, '\n');
    for (const char *const *w = want; ok && *w; w++)
        ok = strstr(m.last_error, *w) != NULL;
    if (!ok)
        fprintf(stderr, "%s (%s): open gave %d: '%s'\n", name, o ? o[0] : "", rc, m.last_error);
    st_close(f);
    st_backend_destroy(&b);
    mock_host_fini(&m);
    return ok ? 0 : 1;
}

/* io_uring refused by the kernel or a seccomp policy: uring says so by
 * name, and under a throttle the way out it names is inner = posix (type =
 * posix, the only one the line gave, would drop the emulated disk). */
static void test_uring_refused_by_seccomp(void **state)
{
    (void)state;
    char dir[512], path[600];
    assert_int_equal(st_tmpfile(dir, path, "seccomp", "d.bin", 4), 0);
    const char *const plain[] = {"io_uring", "type = posix", NULL};
    const char *const shim[] = {"io_uring", "inner = posix", NULL};
    const char *const inner_uring[] = {"inner=uring", NULL};
    const struct {
        const char *name;
        const char *const *o;
        int err;
        const char *const *want;
    } cases[] = {{"uring", NULL, ENOSYS, plain}, {"uring", NULL, EPERM, plain}, {"throttle", inner_uring, ENOSYS, shim}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(refused_child(cases[i].name, cases[i].o, path, cases[i].err, cases[i].want));
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 2) {
            skip();
            break;
        }
        if (WEXITSTATUS(status) != 0)
            fail_msg("case %zu: see the line above", i);
    }
    unlink(path);
    rmdir(dir);
}

/* A write that a filling disk stops partway (here the file size limit:
 * 5904 of 8192 bytes go through) names the file, the write, and where it
 * stopped: the line said only where the write began. */
static void test_write_stopped_midway_names_offset(void **state)
{
    (void)state;
    char dir[512], path[600];
    st_tmpdir(dir, "fsize");
    snprintf(path, sizeof path, "%s/out.bin", dir);
    struct rlimit was;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
    void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of a signal */
    static char buf[8192];
    for (int i = 0; i < ST_NBACKENDS; i++) {
        mock_host m;
        st_backend b;
        dlg_file *f = NULL;
        assert_int_equal(st_open_fresh(&m, &b, st_backends[i], NULL, path, DLG_OPEN_WRITE, &f), 0);
        struct rlimit lim = {10000, was.rlim_max};
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        int rc = b.ops->write(f, buf, sizeof buf, 4096);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
        if (rc != -DLG_EIO || !strstr(m.last_error, path) ||
            !strstr(m.last_error, "write of 8192 bytes at offset 4096 stopped at offset 10000: File too large"))
            fail_msg("%s: write gave %d: '%s'", st_backends[i], rc, m.last_error);
        st_close(f);
        st_backend_destroy(&b);
        mock_host_fini(&m);
    }
    signal(SIGXFSZ, old_xfsz);
    unlink(path);
    rmdir(dir);
}

/* A write to a file opened for reading says so, naming the file, on every
 * backend (and an empty file through mmap, which maps nothing): posix,
 * uring and throttle over them said "Bad file descriptor". */
static void test_write_to_read_file_every_backend(void **state)
{
    (void)state;
    char dir[512], path[600], empty[640];
    assert_int_equal(st_tmpfile(dir, path, "wread", "r.bin", 4096), 0);
    snprintf(empty, sizeof empty, "%s/empty.bin", dir);
    fclose(fopen(empty, "w"));
    const char *const over_uring[] = {"inner=uring", NULL};
    static char buf[4096] __attribute__((aligned(4096)));
    for (int i = 0; i < ST_NBACKENDS + 2; i++) {
        const char *name = i < ST_NBACKENDS ? st_backends[i] : i == ST_NBACKENDS ? "throttle" : "mmap";
        const char *file = i == ST_NBACKENDS + 1 ? empty : path;
        mock_host m;
        st_backend b;
        dlg_file *f = NULL;
        assert_int_equal(
            st_open_fresh(&m, &b, name, i == ST_NBACKENDS ? over_uring : NULL, file, DLG_OPEN_READ, &f), 0);
        int rc = b.ops->write(f, buf, sizeof buf, 0);
        if (rc != -DLG_EINVAL || !strstr(m.last_error, file) ||
            !strstr(m.last_error, "opened for reading, cannot write"))
            fail_msg("%s %d: write gave %d: '%s'", name, i, rc, m.last_error);
        st_close(f);
        st_backend_destroy(&b);
        mock_host_fini(&m);
    }
    unlink(empty);
    unlink(path);
    rmdir(dir);
}

/* A fetch that runs past the end of the file names the file and its size,
 * whichever backend lends the bytes: throttle's own copy (inner posix)
 * said only "fetch of [a, b) is past the end of the file", not which. */
static void test_fetch_past_eof_names_file(void **state)
{
    (void)state;
    char dir[512], path[600];
    assert_int_equal(st_tmpfile(dir, path, "fetcheof", "f.bin", 5000), 0);
    const char *names[] = {"mmap", "throttle", "throttle"};
    const char *const over_mmap[] = {"inner=mmap", NULL};
    for (int i = 0; i < 3; i++) {
        mock_host m;
        st_backend b;
        dlg_file *f = NULL;
        const char *const *o = i == 2 ? over_mmap : NULL;
        assert_int_equal(st_open_fresh(&m, &b, names[i], o, path, DLG_OPEN_READ, &f), 0);
        const void *p = NULL;
        int rc = b.ops->fetch(f, 4990, 20, &p);
        if (rc != -DLG_EINVAL || !strstr(m.last_error, path) ||
            !strstr(m.last_error, "fetch of [4990, 5010) is past the end of the file (5000 bytes)"))
            fail_msg("%s %d: fetch past EOF gave %d: '%s'", names[i], i, rc, m.last_error);
        st_close(f);
        st_backend_destroy(&b);
        mock_host_fini(&m);
    }
    unlink(path);
    rmdir(dir);
}

static void test_uring_depth_overflow(void **state)
{
    mock_host m;
    mock_host_init(&m);
    st_backend b;
    const char *const o[] = {"depth=4", NULL};
    assert_int_equal(st_backend_create(&b, &m, "uring", o), 0);
    char dir[512], path[600];
    st_tmpdir(dir, "depth");
    snprintf(path, sizeof path, "%s/d.bin", dir);
    free(st_write_file(&b, &m, path, 65536, 1));
    dlg_file *f = NULL;
    assert_int_equal(st_open(&b, &m, path, DLG_OPEN_READ, &f), 0);
    static char bufs[5][512];
    dlg_io io[5];
    for (int i = 0; i < 5; i++)
        io[i] = (dlg_io){bufs[i], 512, (uint64_t)i * 512, (uint64_t)i};
    assert_int_equal(b.ops->submit(f, io, 5), -DLG_EINVAL);
    assert_non_null(strstr(m.last_error, "depth 4"));
    assert_int_equal(b.ops->submit(f, io, 4), 4);
    dlg_io_done d[4];
    assert_int_equal(b.ops->reap(f, d, 4, 4), 4);
    /* min_done larger than what is in flight returns instead of hanging */
    assert_int_equal(b.ops->reap(f, d, 4, 4), 0);
    st_close(f);
    unlink(path);
    rmdir(dir);
    st_backend_destroy(&b);
    mock_host_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_file_every_backend),
        cmocka_unit_test(test_directory_every_backend),
        cmocka_unit_test(test_fifo_and_chardev_every_backend),
        cmocka_unit_test(test_leased_file_opens),
        cmocka_unit_test(test_mmap_unmappable_file),
        cmocka_unit_test(test_out_of_range_options),
        cmocka_unit_test(test_bad_profiles),
        cmocka_unit_test(test_jitter_past_clamp_refused),
        cmocka_unit_test(test_jitter_past_clamp_in_profile),
        cmocka_unit_test(test_uring_batch_over_depth_said),
        cmocka_unit_test(test_direct_on_tmpfs),
        cmocka_unit_test(test_direct_refused_under_throttle),
        cmocka_unit_test(test_uring_depth_overflow),
        cmocka_unit_test(test_fetch_past_eof_names_file),
        cmocka_unit_test(test_uring_refused_by_seccomp),
        cmocka_unit_test(test_write_stopped_midway_names_offset),
        cmocka_unit_test(test_write_to_read_file_every_backend),
        cmocka_unit_test(test_inner_create_failure_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
