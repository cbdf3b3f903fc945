/* A workload that writes its output through the host's storage write path
 * (dlg_host's file_create/file_write).  Every step writes
 * `blocks` blocks of `block` bytes, appended to `path`; the runner must
 * count exactly those of the timed steps in storage_write_bytes/_ios. */
#include <dlgauge/plugin.h>

#include <stdlib.h>
#include <string.h>

enum { O_PATH, O_BLOCK, O_BLOCKS, O_COUNT };

static const dlg_option ww_options[] = {
    [O_PATH] = {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "file written (required)", DLG_OPT_REQUIRED},
    [O_BLOCK] = {"block", DLG_OPT_SIZE, "1000", "1", "1MiB", NULL, "bytes per write", 0},
    [O_BLOCKS] = {"blocks", DLG_OPT_INT, "3", "1", "100", NULL, "writes per step", 0},
    [O_COUNT] = {0},
};

typedef struct ww_state {
    const dlg_host *h;
    dlg_file *f;
    char *buf;
    size_t block;
    int blocks;
    uint64_t off;
} ww_state;

static void ww_teardown(void *st)
{
    ww_state *s = st;
    if (s->f)
        s->h->file_close(s->h, s->f);
    free(s->buf);
    free(s);
}

static int ww_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)j;
    ww_state *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->block = (size_t)o[O_BLOCK].i;
    s->blocks = (int)o[O_BLOCKS].i;
    int rc = (s->buf = malloc(s->block)) ? h->file_create(h, NULL, o[O_PATH].text, &s->f) : -DLG_ENOMEM;
    if (rc < 0) {
        ww_teardown(s);
        return rc;
    }
    memset(s->buf, 'w', s->block);
    *st = s;
    return 0;
}

static int ww_step(void *st, dlg_step *out)
{
    ww_state *s = st;
    for (int i = 0; i < s->blocks; i++, s->off += s->block) {
        int rc = s->h->file_write(s->h, s->f, s->buf, s->block, s->off);
        if (rc < 0)
            return rc;
    }
    out->items = 1;
    return 0;
}

static const dlg_workload_ops ww_ops = {1, "steps", ww_setup, ww_step, NULL, ww_teardown, NULL, NULL};

static const dlg_plugin_desc ww_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "write_blocks", "1.0",
                                        "writes blocks through the host", ww_options, NULL, &ww_ops};

DLG_PLUGIN("writewl", &ww_desc)
