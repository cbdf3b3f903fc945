/* A stack overflow in one of the core's data loader workers, in a cell
 * run inside dlgauge's process (isolation = none), gets the crash guard's
 * one line before the process dies of SIGSEGV: each worker has its own
 * alternate signal stack.  Without one the handler cannot run on the
 * overflowed stack, and the process died with nothing said. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "loader.h"
#include "mock_host.h"
#include "rt_crash.h"

static const char who[] = "t.ini:3: [job train] workload mxnet";

/* A storage whose image reads recurse without end (a decoder gone wrong):
 * only images, which the workers read; the list opens plainly. */
typedef struct deep_file {
    dlg_file f;
    int fd;
    int image;
} deep_file;

static int deep_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst;
    (void)flags;
    deep_file *df = (deep_file *)f;
    size_t n = strlen(path);
    df->image = n > 4 && strcmp(path + n - 4, ".jpg") == 0;
    df->fd = open(path, O_RDONLY | O_CLOEXEC);
    return df->fd < 0 ? h->error(h, DLG_EIO, "%s: cannot open", path) : 0;
}

static int deep_close(dlg_file *f) { return close(((deep_file *)f)->fd); }

static int deep_size(dlg_file *f, uint64_t *out)
{
    struct stat st;
    if (fstat(((deep_file *)f)->fd, &st) != 0)
        return -DLG_EIO;
    *out = (uint64_t)st.st_size;
    return 0;
}

static int64_t deep_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    if (((deep_file *)f)->image)
        return rt_recurse(NULL, 0);
    ssize_t k = pread(((deep_file *)f)->fd, buf, n, (off_t)off);
    return k < 0 ? -DLG_EIO : (int64_t)k;
}

static const dlg_storage_ops deep_ops = {.version = 1, .file_size = sizeof(deep_file), .open = deep_open,
                                         .close = deep_close, .size = deep_size, .read = deep_read};

/* In the child: a loader whose worker overflows. */
static void overflow_in_worker(void *arg)
{
    const char *dir = ((const rt_dir *)arg)->path;
    char list[600], img[600], spec[700];
    snprintf(list, sizeof list, "%s/list.txt", dir);
    snprintf(img, sizeof img, "%s/a.jpg", dir);
    FILE *f = fopen(list, "w");
    FILE *g = fopen(img, "w");
    if (!f || !g || fputs("a.jpg 0\n", f) < 0 || fputs("not read", g) < 0 || fclose(f) || fclose(g))
        _exit(2);
    mock_host m;
    mock_host_init(&m);
    if (mock_add_storage(&m, "deep", &deep_ops, NULL) != 0)
        _exit(2);
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    snprintf(spec, sizeof spec, "files:%s", list);
    cfg.data = spec;
    cfg.batch = 1;
    cfg.threads = 1;
    cfg.crop = 8;
    dlg_loader *l;
    dlg_batch *b;
    if (dlg_loader_open(&l, &cfg, &m.host) != 0)
        _exit(3);
    dlg_loader_next(l, &b);
    _exit(4); /* not reached: the worker's read overflows */
}

static void worker_overflow_says_which_cell(void **state)
{
    rt_dies_with_line(*state, who, overflow_in_worker, *state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(worker_overflow_says_which_cell, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
