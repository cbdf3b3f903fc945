/* Helpers for the storage tests: load a backend through the mock host,
 * make temp files in the build tree, deterministic random content. */
#ifndef DLG_TEST_STORAGE_UTIL_H
#define DLG_TEST_STORAGE_UTIL_H

#include <dlgauge/splitmix.h> /* the tests' reproducible data */
#include <stdint.h>

#include "mock_host.h"

typedef struct st_backend {
    const dlg_plugin_desc *desc;
    const dlg_storage_ops *ops;
    void *inst;
    dlg_value vals[32];
} st_backend;

/* Loads NAME.so and creates an instance with "key=value" overrides.
 * Returns create()'s result (0 or -code); -DLG_EINTERNAL if loading failed. */
int st_backend_create(st_backend *b, mock_host *m, const char *name, const char *const *overrides);
void st_backend_destroy(st_backend *b);

/* Opens path through the backend directly (flags DLG_OPEN_READ/WRITE). */
int st_open(st_backend *b, mock_host *m, const char *path, int flags, dlg_file **out);

/* Every backend type, for checks of one behaviour across them. */
#define ST_NBACKENDS 5
extern const char *const st_backends[ST_NBACKENDS];

/* A fresh mock host m, backend `name` created in it (overrides may be
 * NULL), and path opened: 0, or the failing step's -code. */
int st_open_fresh(mock_host *m, st_backend *b, const char *name, const char *const *overrides, const char *path,
                  int flags, dlg_file **out);
void st_close(dlg_file *f);

/* A fresh directory under the build tree; out must hold 512 bytes. */
void st_tmpdir(char *out, const char *tag);
/* st_tmpdir(dir, tag) holding a file `name` of `bytes` zero bytes, whose
 * path goes to path (600 bytes); 0, or -1 if it could not be made. */
int st_tmpfile(char *dir, char *path, const char *tag, const char *name, size_t bytes);

void st_fill(uint8_t *buf, size_t n, uint64_t seed);

/* Writes n random bytes to path through the backend's write(), in uneven
 * chunks; returns the content (caller frees) or NULL. */
uint8_t *st_write_file(st_backend *b, mock_host *m, const char *path, size_t n, uint64_t seed);

double st_now(void);

#endif
