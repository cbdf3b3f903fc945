/* Fuzzes the CUDA backend's algorithm cache reader
 * (core/nn/cuda/cuda_algo_cache.c), the file `algo_cache = PATH` names:
 * a user's file, or one a crash or another version left.  Loaded under
 * the tag "T" (the seeds' first line), it gives 0 or one error naming
 * the file and one of its lines; what it loads holds only valid choices,
 * and saved and loaded again it reads back the same. */
#include <string.h>

#include <dlgauge/plugin.h>

#include "cuda_algo_cache.h"
#include "fuzz_file.h"
#include "fuzz_target.h"

static int direction_count(const char *key)
{
    return strncmp(key, "fwd:", 4) == 0    ? DLG_ALGO_FWD_COUNT
           : strncmp(key, "bwdd:", 5) == 0 ? DLG_ALGO_BWDD_COUNT
           : strncmp(key, "bwdf:", 5) == 0 ? DLG_ALGO_BWDF_COUNT
                                           : 0;
}

static void check_entries(const dlg_algo_cache *c)
{
    for (int i = 0; i < c->n; i++) {
        const dlg_algo_entry *e = &c->e[i];
        FUZZ_CHECK(strlen(e->key) < DLG_ALGO_KEY_MAX && !strpbrk(e->key, " \t\n"));
        FUZZ_CHECK(e->algo >= 0 && e->algo < direction_count(e->key));
        FUZZ_CHECK(e->math >= 0 && e->math <= DLG_ALGO_MATH_MAX);
        FUZZ_CHECK(dlg_algo_cache_get(c, e->key) == e); /* each key once */
    }
}

/* Saved and loaded again: the same entries. */
static void check_round_trip(const dlg_algo_cache *c, const char *path)
{
    char again[128], err[512] = "";
    snprintf(again, sizeof again, "%s.saved", path);
    FUZZ_CHECK(dlg_algo_cache_save(c, again, err, sizeof err) == 0);
    dlg_algo_cache back;
    dlg_algo_cache_init(&back, "T");
    FUZZ_CHECK(dlg_algo_cache_load(&back, again, err, sizeof err) == 0);
    FUZZ_CHECK(back.n == c->n);
    for (int i = 0; i < c->n; i++) {
        const dlg_algo_entry *e = dlg_algo_cache_get(&back, c->e[i].key);
        FUZZ_CHECK(e && e->algo == c->e[i].algo && e->math == c->e[i].math && e->ws == c->e[i].ws);
    }
    dlg_algo_cache_free(&back);
    unlink(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128], err[512] = "";
    if (size > 1 << 16 || fuzz_write_file(path, sizeof path, "algo.cache", data, size) != 0)
        return 0;
    dlg_algo_cache c;
    dlg_algo_cache_init(&c, "T");
    int rc = dlg_algo_cache_load(&c, path, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == -DLG_ECORRUPT);
    if (rc < 0) {
        long line = fuzz_err_line(err, path);
        FUZZ_CHECK(line >= 1 && line <= fuzz_count_lines(data, size));
    } else {
        check_entries(&c);
        check_round_trip(&c, path);
    }
    dlg_algo_cache_free(&c);
    fuzz_remove_file(path);
    return 0;
}
