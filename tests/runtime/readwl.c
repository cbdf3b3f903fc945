/* A workload that reads `path` through the host in every way the ABI has,
 * including reads that do no I/O: per step one block read at 0, one read
 * at EOF; with DLG_CAP_ZERO_COPY a fetch of 0 bytes and one of a block;
 * with DLG_CAP_ASYNC a block and a read at EOF submitted and reaped.  The
 * runner's storage_ios/storage_read_bytes must count only what returned
 * bytes: per step 1 I/O of a block (sync), 2 (zero-copy or async).
 * `silent_check` (workload ops version 3): its check fails without a
 * message, which the plan must still say with the code. */
#include <dlgauge/plugin.h>

#include <stdlib.h>

enum { O_PATH, O_BLOCK, O_COUNT };

static const dlg_option rw_options[] = {
    [O_PATH] = {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "file read (required)", DLG_OPT_REQUIRED},
    [O_BLOCK] = {"block", DLG_OPT_SIZE, "4096", "1", "1MiB", NULL, "bytes per read", 0},
    [O_COUNT] = {0},
};

typedef struct rw_state {
    const dlg_host *h;
    dlg_file *f;
    char *buf; /* 2 blocks */
    size_t block;
    uint64_t size;
    uint32_t caps;
} rw_state;

static void rw_teardown(void *st)
{
    rw_state *s = st;
    if (s->f)
        s->h->file_close(s->h, s->f);
    free(s->buf);
    free(s);
}

static int rw_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)j;
    rw_state *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->block = (size_t)o[O_BLOCK].i;
    int rc = (s->buf = aligned_alloc(4096, 2 * ((s->block + 4095) / 4096 * 4096))) ? 0 : -DLG_ENOMEM;
    if (rc == 0)
        rc = h->file_open(h, NULL, o[O_PATH].text, &s->f);
    if (rc == 0)
        rc = h->file_size(h, s->f, &s->size);
    if (rc < 0) {
        rw_teardown(s);
        return rc;
    }
    s->caps = h->file_caps(h, s->f, NULL);
    *st = s;
    return 0;
}

static int rw_zero_copy(rw_state *s)
{
    const void *p;
    int rc = s->h->file_fetch(s->h, s->f, 0, 0, &p);
    if (rc < 0)
        return rc;
    s->h->file_unfetch(s->h, s->f, p, 0);
    if ((rc = s->h->file_fetch(s->h, s->f, 0, s->block, &p)) < 0)
        return rc;
    s->h->file_unfetch(s->h, s->f, p, s->block);
    return 0;
}

static int rw_async(rw_state *s)
{
    dlg_io ios[2] = {{s->buf, s->block, 0, 0}, {s->buf + s->block, s->block, s->size, 1}};
    int rc = s->h->file_submit(s->h, s->f, ios, 2);
    dlg_io_done done[2];
    for (int got = 0; rc >= 0 && got < 2; got += rc)
        rc = s->h->file_reap(s->h, s->f, done + got, (size_t)(2 - got), 1);
    return rc < 0 ? rc : 0;
}

static int rw_step(void *st, dlg_step *out)
{
    rw_state *s = st;
    int64_t r = s->h->file_read(s->h, s->f, s->buf, s->block, 0);
    if (r >= 0)
        r = s->h->file_read(s->h, s->f, s->buf, s->block, s->size);
    if (r >= 0 && (s->caps & DLG_CAP_ZERO_COPY))
        r = rw_zero_copy(s);
    if (r >= 0 && (s->caps & DLG_CAP_ASYNC))
        r = rw_async(s);
    if (r < 0)
        return (int)r;
    out->items = 1;
    return 0;
}

static const dlg_workload_ops rw_ops = {1, "steps", rw_setup, rw_step, NULL, rw_teardown, NULL, NULL};

static const dlg_plugin_desc rw_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "read_ways", "1.0",
                                        "reads through the host every way, some at EOF", rw_options, NULL,
                                        &rw_ops};

static int sc_check(const dlg_host *h, const dlg_value *o, const dlg_job_info *j)
{
    (void)h, (void)o, (void)j;
    return -DLG_EIO;
}

static const dlg_workload_ops sc_ops = {3, "steps", rw_setup, rw_step, NULL, rw_teardown, NULL, sc_check};

static const dlg_plugin_desc sc_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "silent_check", "1.0",
                                        "a check that fails without a message", rw_options, NULL, &sc_ops};

DLG_PLUGIN("readwl", &rw_desc, &sc_desc)
