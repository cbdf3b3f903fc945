#define _GNU_SOURCE
#include "storage_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int st_backend_create(st_backend *b, mock_host *m, const char *name, const char *const *overrides)
{
    memset(b, 0, sizeof *b);
    char so[64];
    snprintf(so, sizeof so, "%s.so", name);
    b->desc = mock_load_plugin(so, DLG_KIND_STORAGE, name);
    if (!b->desc || mock_options(b->desc->options, b->vals, overrides) != 0)
        return -DLG_EINTERNAL;
    b->ops = b->desc->ops;
    return b->ops->create(&m->host, b->vals, &b->inst);
}

void st_backend_destroy(st_backend *b)
{
    if (b->inst)
        b->ops->destroy(b->inst);
    b->inst = NULL;
}

int st_open(st_backend *b, mock_host *m, const char *path, int flags, dlg_file **out)
{
    dlg_file *f = calloc(1, b->ops->file_size);
    if (!f)
        return -DLG_ENOMEM;
    f->ops = b->ops;
    f->inst = b->inst;
    f->align = 1;
    int rc = b->ops->open(b->inst, &m->host, path, flags, f);
    if (rc < 0) {
        free(f);
        return rc;
    }
    *out = f;
    return 0;
}

const char *const st_backends[ST_NBACKENDS] = {"posix", "direct", "mmap", "uring", "throttle"};

int st_open_fresh(mock_host *m, st_backend *b, const char *name, const char *const *overrides, const char *path,
                  int flags, dlg_file **out)
{
    mock_host_init(m);
    int rc = st_backend_create(b, m, name, overrides);
    return rc < 0 ? rc : st_open(b, m, path, flags, out);
}

void st_close(dlg_file *f)
{
    if (!f)
        return;
    f->ops->close(f);
    free(f);
}

void st_tmpdir(char *out, const char *tag)
{
    snprintf(out, 512, "%s/tmp-%s-XXXXXX", STORAGE_TEST_DIR, tag);
    if (!mkdtemp(out)) {
        perror(out);
        out[0] = 0;
    }
}

int st_tmpfile(char *dir, char *path, const char *tag, const char *name, size_t bytes)
{
    st_tmpdir(dir, tag);
    snprintf(path, 600, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = ftruncate(fileno(f), (off_t)bytes);
    return fclose(f) == 0 && rc == 0 ? 0 : -1;
}

void st_fill(uint8_t *buf, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t r = dlg_splitmix_next(&seed);
        memcpy(buf + i, &r, n - i < 8 ? n - i : 8);
    }
}

uint8_t *st_write_file(st_backend *b, mock_host *m, const char *path, size_t n, uint64_t seed)
{
    uint8_t *data = malloc(n ? n : 1);
    if (!data)
        return NULL;
    st_fill(data, n, seed);
    dlg_file *f = NULL;
    if (st_open(b, m, path, DLG_OPEN_WRITE, &f) != 0) {
        free(data);
        return NULL;
    }
    uint64_t rs = seed ^ 0x5555;
    size_t off = 0;
    while (off < n) {
        size_t chunk = 1 + (size_t)(dlg_splitmix_next(&rs) % 300000);
        if (chunk > n - off)
            chunk = n - off;
        if (b->ops->write(f, data + off, chunk, off) != 0) {
            st_close(f);
            free(data);
            return NULL;
        }
        off += chunk;
    }
    st_close(f);
    return data;
}

double st_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
