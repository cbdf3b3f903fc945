/* A storage backend whose file_size (4) is set but smaller than a
 * dlg_file: refused saying so, not that file_size is missing. */
#include <dlgauge/plugin.h>

static int b_create(const dlg_host *h, const dlg_value *o, void **inst)
{
    (void)h, (void)o;
    *inst = NULL;
    return 0;
}
static void b_destroy(void *inst) { (void)inst; }
static int b_open(void *inst, const dlg_host *h, const char *p, int fl, dlg_file *f)
{
    (void)inst, (void)h, (void)p, (void)fl, (void)f;
    return -DLG_ENOTSUP;
}
static int b_close(dlg_file *f) { (void)f; return 0; }
static int b_size(dlg_file *f, uint64_t *out) { (void)f; *out = 0; return 0; }
static int64_t b_read(dlg_file *f, void *buf, size_t n, uint64_t off) { (void)f, (void)buf, (void)n, (void)off; return 0; }

static const dlg_storage_ops ops = {.version = 1, .file_size = 4, .create = b_create, .destroy = b_destroy,
                                    .open = b_open, .close = b_close, .size = b_size, .read = b_read};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_STORAGE, "tiny", "1.0", "file_size 4",
                                     NULL, NULL, &ops};
DLG_PLUGIN("small_file_size", &desc)
