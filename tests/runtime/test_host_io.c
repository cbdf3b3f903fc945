/* The host's storage path between a workload and its backend: a backend's
 * failure that comes without a line of its own is named by the file (and
 * offset) at the storage instance's context ("[storage NAME] TYPE"), not
 * blamed on the workload; a failed close of a written file is
 * an error (dlg_host_file_close_written) or, through the ABI's void
 * file_close, one warning that leaves the error slot as it was; and
 * storage_ios/storage_read_bytes count only reads that returned bytes (a
 * zero-length fetch, a read at EOF or a failed one is no I/O).  The error
 * slot is shared by every host and thread of a cell: whether a backend
 * "said why" is what it said during the call, on the caller's thread, not
 * any text in the slot (an old error, another loader worker's). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "host_fixture.h"
#include "rt_util.h"

#define OUT "/results/out.rec"

/* A read failing without a word: the file and offset, not "the workload's
 * step failed without saying why". */
static void read_failure_names_file_and_offset(void **state)
{
    hfx_fixture *fx = *state;
    char buf[8];
    assert_int_equal(fx->h->file_read(fx->h, fx->f, buf, sizeof buf, 200), -DLG_EIO);
    assert_string_equal(dlg_services_error(&fx->svc), "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH
                                                      ": read of 8 bytes at offset 200 failed (DLG_EIO)");
    assert_int_equal(fx->svc.error.code, DLG_EIO);
    assert_int_equal(fx->svc.ios, 0);
}

/* The backend's own line naming the file stands (one line, not two). */
static void backend_line_stands(void **state)
{
    hfx_fixture *fx = *state;
    fx->inst.says_why = true;
    char buf[8];
    assert_int_equal(fx->h->file_read(fx->h, fx->f, buf, sizeof buf, 200), -DLG_EIO);
    assert_string_equal(dlg_services_error(&fx->svc),
                        "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH ": pread: Input/output error");
}

/* A backend's read that says why without naming the file (through the
 * storage's host, as a backend's read must) and one that names only the
 * file, not the offset. */
static int64_t reason_only_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    (void)buf, (void)n;
    const hfx_backend *b = f->inst;
    return b->h->error(b->h, DLG_EIO, "read at %llu failed on purpose", (unsigned long long)off);
}
static int size_reason_only(dlg_file *f, uint64_t *size)
{
    (void)size;
    const hfx_backend *b = f->inst;
    return b->h->error(b->h, DLG_EIO, "the server hung up");
}

/* The backend's reason stands, with the file and offset the host knows
 * put in front where it does not name the file: one line.  It was
 * dropped, the line as if the backend had said nothing. */
static void backend_reason_kept(void **state)
{
    hfx_fixture *fx = *state;
    dlg_storage_ops ops = *fx->f->ops;
    ops.read = reason_only_read;
    ops.size = size_reason_only;
    const dlg_storage_ops *real = fx->f->ops;
    fx->f->ops = &ops;
    char buf[8];
    int64_t r = fx->h->file_read(fx->h, fx->f, buf, sizeof buf, 200);
    char said[512];
    snprintf(said, sizeof said, "%s", dlg_services_error(&fx->svc));
    uint64_t size;
    int rs = fx->h->file_size(fx->h, fx->f, &size);
    fx->f->ops = real;
    assert_int_equal(r, -DLG_EIO);
    assert_string_equal(said, "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH
                              ": read of 8 bytes at offset 200 failed: read at 200 failed on purpose");
    assert_int_equal(fx->svc.error.code, DLG_EIO);
    assert_int_equal(rs, -DLG_EIO);
    assert_string_equal(dlg_services_error(&fx->svc),
                        "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH ": size failed: the server hung up");
}

/* A zero-copy fetch that fails without a word: said at the storage with
 * the file and offset, as a silent read is.  It got no line at all: the
 * workload's "failed without saying why" blamed the workload. */
static int silent_fetch(dlg_file *f, uint64_t off, size_t n, const void **ptr)
{
    (void)f, (void)off, (void)n, (void)ptr;
    return -DLG_EIO;
}

static void silent_fetch_names_file_and_offset(void **state)
{
    hfx_fixture *fx = *state;
    dlg_storage_ops ops = *fx->f->ops;
    ops.fetch = silent_fetch;
    const dlg_storage_ops *real = fx->f->ops;
    fx->f->ops = &ops;
    const void *p = NULL;
    int rc = fx->h->file_fetch(fx->h, fx->f, 40, 16, &p);
    fx->f->ops = real;
    assert_int_equal(rc, -DLG_EIO);
    assert_string_equal(dlg_services_error(&fx->svc), "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH
                                                      ": fetch of 16 bytes at offset 40 failed (DLG_EIO)");
    assert_int_equal(fx->svc.ios, 0);
}

/* A silent read that returns what is no DLG_E* code: said as such, the
 * error's code DLG_EIO. */
static int64_t odd_code_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    (void)f, (void)buf, (void)n, (void)off;
    return -42;
}
static void odd_code_named(void **state)
{
    hfx_fixture *fx = *state;
    dlg_storage_ops ops = *fx->f->ops;
    ops.read = odd_code_read;
    const dlg_storage_ops *real = fx->f->ops;
    fx->f->ops = &ops;
    char buf[8];
    int64_t r = fx->h->file_read(fx->h, fx->f, buf, sizeof buf, 0);
    fx->f->ops = real;
    assert_int_equal(r, -DLG_EIO);
    assert_string_equal(dlg_services_error(&fx->svc), "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH
                                                      ": read of 8 bytes at offset 0 failed (-42, no DLG_E* code)");
    assert_int_equal(fx->svc.error.code, DLG_EIO);
}

/* A backend's read that returns what is no DLG_E* code, silent, saying
 * why, or saying why and naming the file: the caller gets -DLG_EIO and
 * the line says what the backend said.  The raw value was cut to int
 * where the backend spoke: -2^32 came back as 0, a read "at the end of
 * the file", and -42 as a code no caller knows; a silent INT64_MIN was
 * negated to name it. */
enum { ODD_SILENT, ODD_REASON, ODD_NAMED, ODD_MODES };
static int64_t odd_code_read_said(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    (void)buf, (void)n;
    const hfx_backend *b = f->inst;
    if (b->odd_mode == ODD_NAMED)
        b->h->error(b->h, DLG_EIO, HFX_PATH ": read at %llu failed on purpose", (unsigned long long)off);
    else if (b->odd_mode == ODD_REASON)
        b->h->error(b->h, DLG_EIO, "read at %llu failed on purpose", (unsigned long long)off);
    return b->odd_rc;
}
static void odd_code_is_an_error(void **state)
{
    hfx_fixture *fx = *state;
    dlg_storage_ops ops = *fx->f->ops;
    ops.read = odd_code_read_said;
    const dlg_storage_ops *real = fx->f->ops;
    fx->f->ops = &ops;
    static const int64_t codes[] = {-(INT64_C(1) << 32), -42, INT64_MIN};
    enum { NCODES = sizeof codes / sizeof *codes };
    int64_t got[ODD_MODES][NCODES];
    bool said[ODD_MODES][NCODES];
    char buf[8];
    for (int m = 0; m < ODD_MODES; m++)
        for (size_t i = 0; i < NCODES; i++) {
            fx->inst.odd_mode = m;
            fx->inst.odd_rc = codes[i];
            got[m][i] = fx->h->file_read(fx->h, fx->f, buf, sizeof buf, 64);
            const char *line = dlg_services_error(&fx->svc);
            said[m][i] = strstr(line, m == ODD_SILENT ? ": read of 8 bytes at offset 64 failed (" :
                                                        "read at 64 failed on purpose") != NULL;
        }
    fx->f->ops = real;
    for (int m = 0; m < ODD_MODES; m++)
        for (size_t i = 0; i < NCODES; i++) {
            if (got[m][i] != -DLG_EIO)
                fail_msg("mode %d, backend returned %lld: file_read gave %lld", m, (long long)codes[i],
                         (long long)got[m][i]);
            assert_true(said[m][i]);
        }
}

/* A zero-copy fetch that says it succeeded without lending the bytes
 * (no pointer), or returns what is neither 0 nor -code: an error naming
 * the file and offset, not a NULL (or a count) handed to the workload. */
static int pointerless_fetch(dlg_file *f, uint64_t off, size_t n, const void **ptr)
{
    (void)off, (void)n, (void)ptr;
    return ((const hfx_backend *)f->inst)->odd_mode;
}
static void broken_fetch_refused(void **state)
{
    hfx_fixture *fx = *state;
    dlg_storage_ops ops = *fx->f->ops;
    ops.fetch = pointerless_fetch;
    const dlg_storage_ops *real = fx->f->ops;
    fx->f->ops = &ops;
    const void *p = NULL;
    int rc[2];
    char said[2][512];
    for (int i = 0; i < 2; i++) {
        fx->inst.odd_mode = i ? 16 : 0;
        rc[i] = fx->h->file_fetch(fx->h, fx->f, 40, 16, &p);
        snprintf(said[i], sizeof said[i], "%s", dlg_services_error(&fx->svc));
    }
    fx->f->ops = real;
    assert_int_equal(rc[0], -DLG_EIO);
    assert_string_equal(said[0], "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH ": fetch of 16 bytes at "
                                 "offset 40 lent no bytes (a broken backend)");
    assert_int_equal(rc[1], -DLG_EIO);
    assert_string_equal(said[1], "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH ": fetch of 16 bytes at "
                                 "offset 40 returned 16, neither 0 nor -code (a broken backend)");
    assert_int_equal(fx->svc.ios, 0);
}

/* A backend's reap held to the contract as a read is: more completions
 * than room for them is an error (the backend wrote past done[]; they
 * were counted, read past it), and a failed completion's odd code
 * reaches the workload as -DLG_EIO (one cut to int was 0). */
static int overfull_reap(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    (void)min_done;
    const hfx_backend *fi = f->inst;
    memcpy(done, fi->done, (size_t)fi->ndone * sizeof *done); /* done[] has room for all 4 */
    return max < (size_t)fi->ndone ? fi->ndone : (int)max;
}
static void broken_reap_refused(void **state)
{
    hfx_fixture *fx = *state;
    const dlg_host *h = fx->h;
    dlg_storage_ops ops = *fx->f->ops;
    ops.reap = overfull_reap;
    const dlg_storage_ops *real = fx->f->ops;
    fx->f->ops = &ops;
    fx->inst.done[0] = (dlg_io_done){1, 32};
    fx->inst.done[1] = (dlg_io_done){2, -(INT64_C(1) << 32)};
    fx->inst.done[2] = (dlg_io_done){3, -DLG_ESTOP};
    fx->inst.ndone = 3;
    dlg_io_done done[4];
    int over = h->file_reap(h, fx->f, done, 2, 1);
    char said[512];
    snprintf(said, sizeof said, "%s", dlg_services_error(&fx->svc));
    uint64_t ios = fx->svc.ios;
    int fine = h->file_reap(h, fx->f, done, 3, 1);
    fx->f->ops = real;
    assert_int_equal(over, -DLG_EIO);
    assert_string_equal(said, "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH
                              ": the storage backend reaped 3 completions into room for 2 (a broken backend)");
    assert_int_equal(ios, 0);
    assert_int_equal(fine, 3);
    assert_int_equal(done[0].result, 32);
    assert_int_equal(done[1].result, -DLG_EIO);
    assert_int_equal(done[2].result, -DLG_ESTOP);
    assert_int_equal(fx->svc.ios, 1);
}

/* The copying fetch's failed read: one line, from the read. */
static void fetch_fallback_one_line(void **state)
{
    hfx_fixture *fx = *state;
    dlg_storage_ops ops = hfx_ops;
    ops.caps = 0;
    const dlg_storage_ops *real = fx->f->ops;
    fx->f->ops = &ops;
    const void *p = NULL;
    assert_int_equal(fx->h->file_fetch(fx->h, fx->f, 200, 8, &p), -DLG_EIO);
    fx->f->ops = real;
    const char *err = dlg_services_error(&fx->svc);
    assert_non_null(strstr(err, HFX_PATH ": read of 8 bytes at offset 200 failed"));
    assert_null(strstr(strstr(err, HFX_PATH) + 1, HFX_PATH));
}

static void size_failure_names_file(void **state)
{
    hfx_fixture *fx = *state;
    fx->inst.size_fails = true;
    uint64_t size = 0;
    assert_int_equal(fx->h->file_size(fx->h, fx->f, &size), -DLG_EIO);
    assert_string_equal(dlg_services_error(&fx->svc),
                        "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH ": size failed (DLG_EIO)");
}

/* Written output whose close fails (NFS's deferred EIO): an error naming it. */
static void failed_close_of_written_file_is_an_error(void **state)
{
    hfx_fixture *fx = *state;
    for (int says_why = 0; says_why < 2; says_why++) {
        dlg_services_clear_error(&fx->svc);
        fx->inst.says_why = says_why;
        dlg_file *out = NULL;
        assert_int_equal(dlg_host_file_create(fx->h, NULL, OUT, &out), 0);
        assert_int_equal(dlg_host_file_write(fx->h, out, "abc", 3, 0), 0);
        fx->inst.close_fails = true;
        assert_int_equal(dlg_host_file_close_written(fx->h, out), -DLG_EIO);
        fx->inst.close_fails = false;
        /* either way at the storage's context: the backend failed, not the workload */
        assert_string_equal(dlg_services_error(&fx->svc),
                            says_why ? "st.ini:8: [job checksum] [storage fake] fake: " OUT ": close: Input/output error"
                                     : "st.ini:8: [job checksum] [storage fake] fake: " OUT ": close failed (DLG_EIO)");
    }
    assert_int_equal(dlg_host_file_close_written(fx->h, NULL), 0);
}

static void close_failing_output(void *arg)
{
    hfx_fixture *fx = arg;
    dlg_file *out = NULL;
    assert_int_equal(fx->h->file_create(fx->h, NULL, OUT, &out), 0);
    fx->inst.close_fails = true;
    fx->h->file_close(fx->h, out);
    fx->inst.close_fails = false;
}

/* The ABI's void close: one warning line naming the file and the error,
 * and an earlier error is still the one a failed step reports. */
static void failed_close_through_abi_warns(void **state)
{
    hfx_fixture *fx = *state;
    fx->inst.says_why = true;
    dlg_services_fail(&fx->svc, DLG_EINVAL, "the step's own failure");
    char text[4096];
    rt_capture_stderr(close_failing_output, fx, text, sizeof text);
    assert_string_equal(text, "dlgauge: st.ini:8: [job checksum] [storage fake] fake warning: " OUT
                              ": close: Input/output error (what was written there may be lost)\n");
    assert_string_equal(dlg_services_error(&fx->svc), "the step's own failure");
    assert_int_equal(fx->svc.error.code, DLG_EINVAL);
    /* without the backend's line: ours, at the storage's context too */
    fx->inst.says_why = false;
    dlg_services_clear_error(&fx->svc);
    rt_capture_stderr(close_failing_output, fx, text, sizeof text);
    assert_string_equal(text, "dlgauge: st.ini:8: [job checksum] [storage fake] fake warning: " OUT
                              ": close failed (DLG_EIO) (what was written there may be lost)\n");
    assert_string_equal(dlg_services_error(&fx->svc), "");
}

/* A loader worker's error raised while this thread's close fails: it
 * stands in the slot (the close's is only a warning), whether the
 * backend said why or not.  It was erased: the worker's failure then
 * read "without saying why". */
static void close_keeps_other_threads_error(void **state)
{
    hfx_fixture *fx = *state;
    static const char *const warned[] = {
        "dlgauge: st.ini:8: [job checksum] [storage fake] fake warning: " OUT
        ": close failed (DLG_EIO) (what was written there may be lost)\n",
        "dlgauge: st.ini:8: [job checksum] [storage fake] fake warning: " OUT
        ": close: Input/output error (what was written there may be lost)\n",
    };
    for (int says_why = 0; says_why < 2; says_why++) {
        dlg_services_clear_error(&fx->svc);
        fx->inst.says_why = says_why;
        fx->inst.other = fx->h;
        fx->inst.meanwhile = "loader: shard-0003.bin: checksum mismatch";
        char text[4096];
        rt_capture_stderr(close_failing_output, fx, text, sizeof text);
        fx->inst.meanwhile = NULL;
        assert_string_equal(text, warned[says_why]);
        assert_string_equal(dlg_services_error(&fx->svc),
                            "st.ini:8: [job checksum] checksum: loader: shard-0003.bin: checksum mismatch");
    }
}

/* An old line of the backend naming the file (a failed fstat) is not what
 * a later silent read failure says: that one gets its offset.  It was
 * taken as "the backend named the file": the old line stood. */
static void old_line_naming_file_not_taken(void **state)
{
    hfx_fixture *fx = *state;
    fx->inst.size_fails = fx->inst.says_why = true;
    uint64_t size;
    assert_int_equal(fx->h->file_size(fx->h, fx->f, &size), -DLG_EIO);
    assert_non_null(strstr(dlg_services_error(&fx->svc), HFX_PATH ": fstat: Input/output error"));
    fx->inst.says_why = false;
    char buf[8];
    assert_int_equal(fx->h->file_read(fx->h, fx->f, buf, sizeof buf, 200), -DLG_EIO);
    assert_string_equal(dlg_services_error(&fx->svc), "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH
                                                      ": read of 8 bytes at offset 200 failed (DLG_EIO)");
}

/* Another worker's line naming the same file, raised during this thread's
 * silent read failure, is not this read's: ours, with its offset. */
static void other_threads_line_naming_file_not_taken(void **state)
{
    hfx_fixture *fx = *state;
    fx->inst.other = fx->inst.h;
    fx->inst.meanwhile = HFX_PATH ": pread of 4096 bytes at offset 8192: Input/output error";
    char buf[8];
    assert_int_equal(fx->h->file_read(fx->h, fx->f, buf, sizeof buf, 200), -DLG_EIO);
    fx->inst.meanwhile = NULL;
    assert_string_equal(dlg_services_error(&fx->svc), "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH
                                                      ": read of 8 bytes at offset 200 failed (DLG_EIO)");
}

/* A silent open failure after an unrelated error: its own line.  It had
 * none (the slot was not empty), and the setup failed with the old text. */
static void silent_open_after_old_error(void **state)
{
    hfx_fixture *fx = *state;
    dlg_services_fail(&fx->svc, DLG_EINVAL, "an earlier, recovered failure");
    fx->inst.open_fails = true;
    dlg_file *f = NULL;
    assert_int_equal(fx->h->file_open(fx->h, NULL, HFX_PATH, &f), -DLG_EIO);
    fx->inst.open_fails = false;
    assert_string_equal(dlg_services_error(&fx->svc),
                        "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH ": open failed (DLG_EIO)");
    /* error_said: that line, without the host's context (a loader puts it
     * in its own) */
    char said[256] = "", tiny[8] = "";
    assert_true(DLG_HOST_HAS(fx->h, error_said));
    assert_true(fx->h->error_said(fx->h, said, sizeof said));
    assert_string_equal(said, HFX_PATH ": open failed (DLG_EIO)");
    assert_true(fx->h->error_said(fx->h, tiny, sizeof tiny));
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

/* Only reads that returned bytes are I/Os: fetches of 0 bytes, reads at
 * EOF and failed completions are not. */
static void counts_match_io_done(void **state)
{
    hfx_fixture *fx = *state;
    const dlg_host *h = fx->h;
    char buf[64];
    const void *p = NULL;
    assert_int_equal(h->file_read(h, fx->f, buf, 64, 60), 40);   /* 1 I/O, 40 bytes */
    assert_int_equal(h->file_read(h, fx->f, buf, 64, 100), 0);   /* EOF */
    assert_int_equal(h->file_fetch(h, fx->f, 0, 16, &p), 0);     /* 1 I/O, 16 bytes */
    h->file_unfetch(h, fx->f, p, 16);
    assert_int_equal(h->file_fetch(h, fx->f, 100, 0, &p), 0);    /* nothing */
    h->file_unfetch(h, fx->f, p, 0);
    fx->inst.done[0] = (dlg_io_done){1, 32};
    fx->inst.done[1] = (dlg_io_done){2, 0};
    fx->inst.done[2] = (dlg_io_done){3, -DLG_EIO};
    fx->inst.done[3] = (dlg_io_done){4, 8};
    fx->inst.ndone = 4;
    dlg_io_done done[4];
    assert_int_equal(h->file_reap(h, fx->f, done, 4, 1), 4);       /* 2 I/Os, 40 bytes */
    assert_int_equal(fx->svc.ios, 4);
    assert_int_equal(fx->svc.bytes_read, 96);
}

static int mute_create(const dlg_host *h, const dlg_value *opts, void **inst)
{
    (void)h, (void)opts, (void)inst;
    return -DLG_EIO;
}

/* A storage whose create() fails without a message: its code, in the form
 * a silent workload's setup gets, at the storage's own context. */
static void silent_create_says_code(void **state)
{
    hfx_fixture *fx = *state;
    dlg_storage_ops ops = hfx_ops;
    ops.create = mute_create;
    const dlg_plugin_desc desc = {.struct_size = sizeof desc, .kind = DLG_KIND_STORAGE, .name = "mute", .ops = &ops};
    dlg_instance_spec spec = {.name = "quiet", .desc = &desc};
    dlg_plan plan = {.storages = &spec, .nstorages = 1};
    fx->svc.plan = &plan;
    dlg_file *f = NULL;
    static const char why[] =
        "st.ini:8: [job checksum] [storage quiet] mute: create failed (DLG_EIO) without saying why";
    assert_true(fx->h->file_open(fx->h, "quiet", HFX_PATH, &f) < 0);
    assert_string_equal(dlg_services_error(&fx->svc), why);
    /* each later open hears why again, not what was said since */
    dlg_services_fail(&fx->svc, DLG_EINVAL, "an unrelated failure");
    assert_true(fx->h->file_open(fx->h, "quiet", HFX_PATH, &f) < 0);
    assert_string_equal(dlg_services_error(&fx->svc), why);
    fx->svc.plan = NULL;
}

/* A short read before the end of the file is continued until n bytes (each
 * piece an I/O); at the end it stands; a size() that fails counts as the
 * end. */
static void short_read_continued(void **state)
{
    hfx_fixture *fx = *state;
    const dlg_host *h = fx->h;
    char buf[64], want[64];
    memset(want, 'x', sizeof want);
    fx->inst.short_reads = true;
    memset(buf, 0, sizeof buf);
    assert_int_equal(h->file_read(h, fx->f, buf, 64, 0), 64); /* 32 16 8 4 2 1 1 */
    assert_memory_equal(buf, want, 64);
    assert_int_equal(fx->inst.reads, 7);
    assert_int_equal(fx->svc.ios, 7);
    assert_int_equal(fx->svc.bytes_read, 64);
    assert_int_equal(h->file_read(h, fx->f, buf, 64, 60), 40); /* to the end: 20 10 5 2 1 1 1 */
    assert_int_equal(fx->svc.bytes_read, 104);
    fx->inst.size_fails = true;
    assert_int_equal(h->file_read(h, fx->f, buf, 64, 0), 32);
}

/* A read claiming more than asked wrote past the buffer: an error naming
 * the file, the sizes and the offset, not bytes to count. */
static void overlong_read_is_an_error(void **state)
{
    hfx_fixture *fx = *state;
    char buf[64];
    fx->inst.overrun = true;
    assert_int_equal(fx->h->file_read(fx->h, fx->f, buf, sizeof buf, 8), -DLG_EIO);
    assert_string_equal(dlg_services_error(&fx->svc),
                        "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH ": the storage backend returned "
                        "164 bytes for a read of 64 at offset 8 (more than asked: a broken backend)");
    assert_int_equal(fx->svc.bytes_read, 0);
}

/* A direct read short of the end at an offset its alignment forbids cannot
 * be continued: an error, not a silently short buffer. */
static void short_direct_read_is_an_error(void **state)
{
    hfx_fixture *fx = *state;
    dlg_storage_ops ops = hfx_ops;
    ops.caps |= DLG_CAP_DIRECT;
    const dlg_storage_ops *real = fx->f->ops;
    fx->f->ops = &ops;
    fx->f->align = 64;
    fx->inst.short_reads = true;
    char buf[64];
    int64_t r = fx->h->file_read(fx->h, fx->f, buf, sizeof buf, 0);
    fx->f->ops = real;
    assert_int_equal(r, -DLG_EIO);
    assert_string_equal(dlg_services_error(&fx->svc),
                        "st.ini:8: [job checksum] [storage fake] fake: " HFX_PATH ": the storage backend returned 32 of "
                        "64 bytes at offset 0, short of the end of the file (a direct read cannot go on from "
                        "there)");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, hfx_setup, hfx_teardown)
    const struct CMUnitTest tests[] = {
        T(read_failure_names_file_and_offset),
        T(backend_line_stands),
        T(backend_reason_kept),
        T(odd_code_named),
        T(odd_code_is_an_error),
        T(fetch_fallback_one_line),
        T(silent_fetch_names_file_and_offset),
        T(size_failure_names_file),
        T(failed_close_of_written_file_is_an_error),
        T(failed_close_through_abi_warns),
        T(close_keeps_other_threads_error),
        T(old_line_naming_file_not_taken),
        T(other_threads_line_naming_file_not_taken),
        T(silent_open_after_old_error),
        T(counts_match_io_done),
        T(broken_reap_refused),
        T(broken_fetch_refused),
        T(silent_create_says_code),
        T(short_read_continued),
        T(overlong_read_is_an_error),
        T(short_direct_read_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
