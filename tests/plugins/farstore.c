/* A storage backend that reads no local files (as an object store's names
 * a bucket): the plan's input-path check must leave its paths to it, and
 * still check the cells that read through a local backend. */
#include <dlgauge/plugin.h>

static int f_create(const dlg_host *h, const dlg_value *o, void **inst)
{
    (void)h, (void)o;
    *inst = NULL;
    return 0;
}
static void f_destroy(void *inst) { (void)inst; }
static int f_open(void *inst, const dlg_host *h, const char *p, int fl, dlg_file *f)
{
    (void)inst, (void)p, (void)fl, (void)f;
    return h->error(h, DLG_ENOTSUP, "farstore opens nothing");
}
static int f_close(dlg_file *f) { (void)f; return 0; }
static int f_size(dlg_file *f, uint64_t *out) { (void)f; *out = 0; return 0; }
static int64_t f_read(dlg_file *f, void *buf, size_t n, uint64_t off) { (void)f, (void)buf, (void)n, (void)off; return 0; }

static const dlg_storage_ops ops = {.version = 1, .file_size = sizeof(dlg_file), .create = f_create,
                                    .destroy = f_destroy, .open = f_open, .close = f_close, .size = f_size,
                                    .read = f_read};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_STORAGE, "far", "1.0",
                                     "paths name remote objects", NULL, NULL, &ops};
DLG_PLUGIN("farstore", &desc)
