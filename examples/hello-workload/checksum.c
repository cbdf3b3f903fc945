/* The smallest useful workload: reads a file through whatever storage
 * backend the job names and checksums it (Adler-32), one block per step.
 * It shows every part of the plugin ABI a workload needs: options as
 * data, metrics as data, host services (files, errors), and no
 * allocation in step(). */
#include <dlgauge/plugin.h>

#include <stdbool.h>
#include <stdlib.h>

enum { OPT_PATH, OPT_BLOCK };
static const dlg_option checksum_options[] = {
    /* PATH_IN: run and --dry-run check that the file exists before any cell */
    [OPT_PATH] = {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "file to read",
                  DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP | DLG_OPT_PATH_IN},
    [OPT_BLOCK] = {"block", DLG_OPT_SIZE, "1MiB", "4KiB", "1GiB", NULL, "bytes read per step", 0},
    {0},
};

static const dlg_metric checksum_metrics[] = {
    {"adler32", DLG_FIELD_INT, "", "Adler-32 of the whole file (the last full pass)"},
    {0},
};

typedef struct checksum {
    const dlg_host *host;
    dlg_file *file;
    unsigned char *buf;
    size_t block;
    uint64_t size, off;
    uint32_t a, b, last;
    bool passed; /* a pass ended: last is the whole file's sum */
} checksum;

static int checksum_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state)
{
    (void)job;
    checksum *c = calloc(1, sizeof *c);
    if (!c)
        return h->error(h, DLG_ENOMEM, "out of memory");
    c->host = h;
    c->block = (size_t)opts[OPT_BLOCK].i;
    c->a = 1;
    int rc = h->file_open(h, NULL, opts[OPT_PATH].text, &c->file);
    if (rc == 0)
        rc = h->file_size(h, c->file, &c->size);
    if (rc == 0 && c->size == 0)
        rc = h->error(h, DLG_EINVAL, "%s is empty", opts[OPT_PATH].text);
    if (rc == 0 && !(c->buf = malloc(c->block)))
        rc = h->error(h, DLG_ENOMEM, "cannot allocate a %zu-byte block", c->block);
    if (rc != 0) {
        if (c->file)
            h->file_close(h, c->file);
        free(c);
        return rc;
    }
    *state = c;
    return 0;
}

/* Reads the next block into the running sum: the bytes read, or a
 * negative DLG_E* code.  At the end of the file the pass's sum becomes
 * last and the next pass starts. */
static int64_t read_block(checksum *c)
{
    int64_t got = c->host->file_read(c->host, c->file, c->buf, c->block, c->off);
    if (got < 0)
        return got;
    for (int64_t i = 0; i < got; i++) {
        c->a = (c->a + c->buf[i]) % 65521u;
        c->b = (c->b + c->a) % 65521u;
    }
    c->off += (uint64_t)got;
    if (c->off >= c->size) { /* wrap: start the next pass */
        c->last = (c->b << 16) | c->a;
        c->passed = true;
        c->off = 0;
        c->a = 1;
        c->b = 0;
    }
    return got;
}

static int checksum_step(void *state, dlg_step *out)
{
    int64_t got = read_block(state);
    if (got < 0)
        return (int)got;
    out->items = (uint64_t)got; /* the host counts the bytes read through it */
    return 0;
}

static int checksum_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    checksum *c = state;
    /* steps that ended within the first pass: read the rest now (report
     * is not timed), so the sum is still the whole file's, never 0 */
    while (!c->passed) {
        int64_t got = read_block(c);
        if (got < 0)
            return (int)got;
        if (got == 0)
            return c->host->error(c->host, DLG_EIO, "the file ended at byte %llu of its %llu",
                                  (unsigned long long)c->off, (unsigned long long)c->size);
    }
    api->add_int(f, "adler32", c->last);
    return 0;
}

static void checksum_teardown(void *state)
{
    checksum *c = state;
    c->host->file_close(c->host, c->file);
    free(c->buf);
    free(c);
}

static const dlg_workload_ops checksum_ops = {
    .version = 1,
    .unit = "bytes",
    .setup = checksum_setup,
    .step = checksum_step,
    .report = checksum_report,
    .teardown = checksum_teardown,
};

static const dlg_plugin_desc checksum_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_WORKLOAD,
    .name = "checksum",
    .version = "1.0",
    .summary = "reads a file through the job's storage and computes its Adler-32",
    .options = checksum_options,
    .metrics = checksum_metrics,
    .ops = &checksum_ops,
};

DLG_PLUGIN("hello", &checksum_desc)
