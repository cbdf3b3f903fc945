/* Writes a Caffe LMDB the way convert_imageset does: keys "%08d_path",
 * one transaction per 1000 puts.  A batch is kept in memory until its
 * commit so that a full map can be doubled and the batch replayed (LMDB
 * cannot grow the map while a write transaction is open), as Caffe's
 * db_lmdb does. */
#include "lmdb_dataset.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#define INITIAL_MAP (64ull << 20)

typedef struct pending {
    size_t key_off, key_len, val_off, val_len;
} pending;

struct dlg_lmdb_writer {
    MDB_env *env;
    MDB_dbi dbi;
    size_t map_size;
    uint64_t puts, commits;
    pending batch[DLG_LMDB_COMMIT_EVERY];
    size_t nbatch;
    uint8_t *arena; /* keys and values of the batch; reused across batches */
    size_t arena_len, arena_cap;
    char path[];
};

int dlg_lmdb_key(char *buf, size_t cap, int64_t line_id, const char *relpath)
{
    int n = snprintf(buf, cap, "%08" PRId64 "_%s", line_id, relpath);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

static int lmdb_fail(dlg_data_err *err, const char *path, const char *what, int rc)
{
    /* LMDB reports a short write to a full disk as EIO: say how full it is */
    char space[96] = "";
    struct statvfs vfs;
    if ((rc == EIO || rc == ENOSPC) && statvfs(path, &vfs) == 0)
        snprintf(space, sizeof space, " (%llu bytes free on its file system)",
                 (unsigned long long)vfs.f_bavail * vfs.f_frsize);
    return dlg_data_fail(err, rc == MDB_MAP_FULL || rc == ENOMEM ? DLG_ENOMEM : DLG_EIO,
                         "%s: %s: %s%s", path, what, mdb_strerror(rc), space);
}

/* Caffe refuses an existing database; an empty directory is harmless. */
static int make_dir(const char *path, dlg_data_err *err)
{
    if (mkdir(path, 0755) == 0)
        return 0;
    if (errno != EEXIST)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot create directory: %s", path,
                             strerror(errno));
    DIR *d = opendir(path);
    if (!d)
        return dlg_data_fail(err, DLG_EINVAL, "%s: exists and is not a directory", path);
    struct dirent *e;
    bool empty = true;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            empty = false;
    closedir(d);
    return empty ? 0
                 : dlg_data_fail(err, DLG_EINVAL,
                                 "%s: already exists and is not empty; refusing to overwrite",
                                 path);
}

int dlg_lmdb_writer_open(dlg_lmdb_writer **out, const char *path, dlg_data_err *err)
{
    int rc = make_dir(path, err);
    if (rc < 0)
        return rc;
    dlg_lmdb_writer *w = calloc(1, sizeof *w + strlen(path) + 1);
    if (!w)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    strcpy(w->path, path);
    w->map_size = INITIAL_MAP;
    MDB_txn *txn = NULL;
    if ((rc = mdb_env_create(&w->env)) || (rc = mdb_env_set_mapsize(w->env, w->map_size)) ||
        (rc = mdb_env_open(w->env, path, MDB_NOSYNC, 0664)) ||
        (rc = mdb_txn_begin(w->env, NULL, 0, &txn)) || (rc = mdb_dbi_open(txn, NULL, 0, &w->dbi)) ||
        (rc = mdb_txn_commit(txn))) {
        int r = lmdb_fail(err, path, "cannot create LMDB", rc);
        if (txn && rc != 0)
            mdb_txn_abort(txn);
        if (w->env)
            mdb_env_close(w->env);
        free(w);
        return r;
    }
    *out = w;
    return 0;
}

static int try_commit(dlg_lmdb_writer *w)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(w->env, NULL, 0, &txn);
    if (rc)
        return rc;
    for (size_t i = 0; i < w->nbatch && rc == 0; i++) {
        pending *p = &w->batch[i];
        MDB_val k = {p->key_len, w->arena + p->key_off}, v = {p->val_len, w->arena + p->val_off};
        rc = mdb_put(txn, w->dbi, &k, &v, 0);
    }
    if (rc) {
        mdb_txn_abort(txn);
        return rc;
    }
    return mdb_txn_commit(txn);
}

static int commit_batch(dlg_lmdb_writer *w, dlg_data_err *err)
{
    if (w->nbatch == 0)
        return 0;
    int rc;
    while ((rc = try_commit(w)) == MDB_MAP_FULL) {
        if (w->map_size > SIZE_MAX / 2)
            break;
        w->map_size *= 2;
        if ((rc = mdb_env_set_mapsize(w->env, w->map_size)))
            break;
    }
    if (rc)
        return lmdb_fail(err, w->path, "commit", rc);
    w->nbatch = 0;
    w->arena_len = 0;
    w->commits++;
    return 0;
}

static uint8_t *arena_take(dlg_lmdb_writer *w, size_t n, size_t *off)
{
    if (w->arena_len + n > w->arena_cap) {
        size_t cap = w->arena_cap ? w->arena_cap : (1u << 20);
        while (cap < w->arena_len + n)
            cap *= 2;
        uint8_t *p = realloc(w->arena, cap);
        if (!p)
            return NULL;
        w->arena = p;
        w->arena_cap = cap;
    }
    *off = w->arena_len;
    w->arena_len += n;
    return w->arena + *off;
}

/* Queues a key and reserves val_len bytes for the value at *val. */
static int queue(dlg_lmdb_writer *w, const void *key, size_t key_len, size_t val_len,
                 uint8_t **val, dlg_data_err *err)
{
    int maxkey = mdb_env_get_maxkeysize(w->env);
    if (key_len == 0 || key_len > (size_t)maxkey)
        return dlg_data_fail(err, DLG_EINVAL, "%s: key '%.*s' is %zu bytes; LMDB keys must be 1..%d",
                             w->path, (int)(key_len > 80 ? 80 : key_len), (const char *)key,
                             key_len, maxkey);
    pending *p = &w->batch[w->nbatch];
    uint8_t *k = arena_take(w, key_len, &p->key_off);
    uint8_t *v = k ? arena_take(w, val_len, &p->val_off) : NULL;
    if (!v)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory for the write batch", w->path);
    memcpy(w->arena + p->key_off, key, key_len);
    p->key_len = key_len;
    p->val_len = val_len;
    *val = v;
    return 0;
}

static int queued(dlg_lmdb_writer *w, dlg_data_err *err)
{
    w->nbatch++;
    w->puts++;
    return w->nbatch == DLG_LMDB_COMMIT_EVERY ? commit_batch(w, err) : 0;
}

int dlg_lmdb_writer_put_raw(dlg_lmdb_writer *w, const void *key, size_t key_len,
                            const void *val, size_t val_len, dlg_data_err *err)
{
    uint8_t *v = NULL; /* set on success; -O3 cannot tell */
    int rc = queue(w, key, key_len, val_len, &v, err);
    if (rc < 0)
        return rc;
    if (val_len)
        memcpy(v, val, val_len);
    return queued(w, err);
}

int dlg_lmdb_writer_put(dlg_lmdb_writer *w, int64_t line_id, const char *relpath,
                        const dlg_datum *datum, dlg_data_err *err)
{
    char key[1024];
    int klen = dlg_lmdb_key(key, sizeof key, line_id, relpath);
    if (klen < 0)
        return dlg_data_fail(err, DLG_EINVAL, "%s: key for '%.80s' is too long", w->path, relpath);
    size_t n = dlg_datum_encoded_size(datum);
    uint8_t *v = NULL;
    int rc = queue(w, key, (size_t)klen, n, &v, err);
    if (rc < 0)
        return rc;
    int64_t got = dlg_datum_encode(datum, v, n, err);
    if (got < 0)
        return (int)got;
    return queued(w, err);
}

uint64_t dlg_lmdb_writer_count(const dlg_lmdb_writer *w) { return w->puts; }

uint64_t dlg_lmdb_writer_commits(const dlg_lmdb_writer *w) { return w->commits; }

int dlg_lmdb_writer_close(dlg_lmdb_writer *w, dlg_data_err *err)
{
    if (!w)
        return 0;
    int rc = commit_batch(w, err);
    if (rc == 0) {
        int r = mdb_env_sync(w->env, 1); /* opened MDB_NOSYNC: make it durable once */
        if (r)
            rc = lmdb_fail(err, w->path, "sync", r);
    }
    mdb_env_close(w->env);
    free(w->arena);
    free(w);
    return rc;
}
