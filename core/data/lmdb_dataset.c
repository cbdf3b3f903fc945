/* Reads Caffe LMDB datasets: read-only env, one read transaction and cursor
 * per dlg_lmdb_cursor, Datums decoded straight out of the map. */
#include "lmdb_dataset.h"
#include "lmdb_check.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define CKPT_EVERY 256
#define NONE UINT64_MAX
#define MAX_MAPS 16
#define NODE_MIN_BYTES 10 /* a leaf node's header (8) and its offset in the page (2) */

typedef struct ckpt_key {
    size_t len;
    char *key;
} ckpt_key;

struct dlg_lmdb {
    MDB_env *env;
    MDB_dbi dbi;
    uint64_t count;
    uint64_t txnid; /* the snapshot dlg_lmdb_check checked */
    ckpt_key *ckpt; /* keys at indexes 0, 256, 512, ... (made by the check) */
    size_t nckpt;
    const char *map;    /* liblmdb's mapping of the data file; NULL: not found */
    uint64_t file_size; /* the data file's size at open: what of the map is backed */
    char path[];
};

struct dlg_lmdb_cursor {
    dlg_lmdb *db;
    MDB_txn *txn;
    MDB_cursor *cur;
    uint64_t pos; /* index of the record under the cursor, NONE before the first */
    dlg_datum datum;
};

/* liblmdb's MDB_page header and MDB_meta (data format version 1; mdb.c
 * keeps them private): read by hand only for a file LMDB itself refuses. */
typedef struct lmdb_meta_page {
    size_t pgno;
    uint16_t pad, flags, lower, upper;
    uint32_t magic, version;
    void *address;
    size_t mapsize;
    struct {
        uint32_t pad; /* the page size, in the free-list db */
        uint16_t flags, depth;
        size_t branch, leaf, overflow, entries, root;
    } dbs[2];
    size_t last_pg, txnid;
} lmdb_meta_page;

#define LMDB_MAGIC 0xBEEFC0DEu

/* The file LMDB maps: path itself for a single-file LMDB. */
static void data_file(char *buf, size_t cap, const char *path, bool subdir)
{
    snprintf(buf, cap, subdir ? "%s/data.mdb" : "%s", path);
}

/* Pages 0..last (and at least the two meta pages) must be in the file: LMDB
 * maps the file and trusts its meta page, so a page past the end would be a
 * SIGBUS at the first read rather than an error. */
static int need_pages(const char *file, uint64_t size, uint64_t last, uint64_t psize,
                      dlg_data_err *err)
{
    uint64_t pages = last < 1 ? 2 : last + 1;
    uint64_t need = pages > UINT64_MAX / psize ? UINT64_MAX : pages * psize;
    if (size >= need)
        return 0;
    return dlg_data_fail(err, DLG_ECORRUPT,
                         "%s: truncated at byte %llu (its LMDB needs %llu: last page %llu of size "
                         "%llu)",
                         file, (unsigned long long)size, (unsigned long long)need,
                         (unsigned long long)(pages - 1), (unsigned long long)psize);
}

/* After a successful open: the newest meta page against the file size;
 * keeps the size for in_file. */
static int check_size(dlg_lmdb *db, const char *file, dlg_data_err *err)
{
    MDB_env *env = db->env;
    MDB_envinfo info;
    MDB_stat ms;
    mdb_filehandle_t fd;
    struct stat st;
    int rc = mdb_env_info(env, &info);
    if (rc == 0)
        rc = mdb_env_stat(env, &ms);
    if (rc == 0)
        rc = mdb_env_get_fd(env, &fd);
    if (rc == 0 && fstat(fd, &st) != 0)
        rc = errno;
    if (rc)
        return dlg_data_fail(err, DLG_EIO, "%s: cannot read the LMDB's size: %s", file,
                             mdb_strerror(rc));
    db->file_size = (uint64_t)st.st_size;
    return need_pages(file, (uint64_t)st.st_size, info.me_last_pgno, ms.ms_psize, err);
}

/* LMDB refuses a file cut inside its second meta page as "not an LMDB" (or,
 * read-only, an empty one as EBADF): if the first meta page is intact, say
 * it is truncated.  0 when there is nothing better to say. */
static int check_short(const char *file, dlg_data_err *err)
{
    lmdb_meta_page m;
    struct stat st;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = fstat(fd, &st) == 0 ? pread(fd, &m, sizeof m, 0) : -1;
    close(fd);
    if (got == 0)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: not an LMDB: the file is empty", file);
    if (got < (ssize_t)offsetof(lmdb_meta_page, address) || m.magic != LMDB_MAGIC ||
        m.version != 1)
        return 0;
    if (got < (ssize_t)sizeof m)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s: truncated at byte %lld, inside its first LMDB meta page", file,
                             (long long)got);
    uint32_t psize = m.dbs[0].pad;
    if (!dlg_lmdb_page_size_ok(psize))
        return 0;
    return need_pages(file, (uint64_t)st.st_size, m.last_pg, psize, err);
}

/* What mdb_env_open trusts, before it runs (dlg_lmdb_check_metas), and
 * the pages the newer meta page counts in the file.  0 also where liblmdb
 * will refuse the file itself (its error is then reported). */
static int check_metas(const char *file, dlg_data_err *err)
{
    struct stat st;
    uint32_t psize;
    uint64_t last;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int rc = fstat(fd, &st) == 0 ? dlg_lmdb_check_metas(fd, file, &psize, &last, err) : 0;
    close(fd);
    return rc == 1 ? need_pages(file, (uint64_t)st.st_size, last, psize, err) : rc;
}

typedef struct file_maps {
    size_t n;
    uintptr_t start[MAX_MAPS];
} file_maps;

/* Where this process maps file from its first byte, from /proc/self/maps. */
static void find_maps(const char *file, file_maps *out)
{
    out->n = 0;
    struct stat st;
    FILE *f = stat(file, &st) == 0 ? fopen("/proc/self/maps", "re") : NULL;
    if (!f)
        return;
    char line[4400];
    while (out->n < MAX_MAPS && fgets(line, sizeof line, f)) {
        unsigned long start, end, off, ino;
        unsigned maj, mnr;
        if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &start, &end, &off, &maj, &mnr, &ino) == 6 &&
            off == 0 && ino == st.st_ino && maj == major(st.st_dev) && mnr == minor(st.st_dev))
            out->start[out->n++] = start;
    }
    fclose(f);
}

/* The mapping of file that liblmdb made since before was taken (its API
 * gives the address, mdb_env_info's me_mapaddr, only for MDB_FIXEDMAP);
 * NULL, and no check, where none or several are new (another thread
 * opened the same file meanwhile: its map is not this env's). */
static const char *new_map(const char *file, const file_maps *before)
{
    file_maps now;
    find_maps(file, &now);
    const char *found = NULL;
    for (size_t i = 0; i < now.n; i++) {
        size_t j = 0;
        while (j < before->n && before->start[j] != now.start[i])
            j++;
        if (j == before->n && found)
            return NULL;
        if (j == before->n)
            found = (const char *)now.start[i];
    }
    return found;
}

/* liblmdb's assertions (a corrupt page it walks into) abort the process
 * after this returns: name the dataset first, as nothing else will.  Open's
 * check (dlg_lmdb_check) refuses the pages that trip them; this stays for
 * a file changed under a running reader. */
static void on_lmdb_assert(MDB_env *env, const char *msg)
{
    const char *path = mdb_env_get_userctx(env);
    fprintf(stderr, "dlgauge: %s: corrupt LMDB (liblmdb: %s)\n", path ? path : "?", msg);
    fflush(stderr);
}

/* A fresh env for db that names db->path when liblmdb asserts. */
static int create_env(dlg_lmdb *db)
{
    int rc = mdb_env_create(&db->env);
    if (rc == 0)
        rc = mdb_env_set_userctx(db->env, db->path);
    if (rc == 0)
        rc = mdb_env_set_assert(db->env, on_lmdb_assert);
    return rc;
}

static int open_env(dlg_lmdb *db, const char *path, dlg_data_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return dlg_data_fail(err, DLG_EINVAL, "%s: cannot open LMDB: %s", path, strerror(errno));
    bool subdir = S_ISDIR(st.st_mode);
    unsigned flags = MDB_RDONLY | MDB_NOTLS | (subdir ? 0 : MDB_NOSUBDIR);
    char file[4200];
    data_file(file, sizeof file, path, subdir);
    int rc = check_metas(file, err);
    if (rc < 0)
        return rc;
    file_maps before;
    find_maps(file, &before);
    rc = create_env(db);
    if (rc == 0)
        rc = mdb_env_set_maxreaders(db->env, 1024);
    if (rc == 0)
        rc = mdb_env_open(db->env, path, flags, 0664);
    if (rc == EACCES || rc == EROFS) { /* read-only media: no lock file possible */
        mdb_env_close(db->env);
        db->env = NULL;
        rc = create_env(db);
        if (rc == 0)
            rc = mdb_env_open(db->env, path, flags | MDB_NOLOCK, 0664);
    }
    if (rc == 0)
        db->map = new_map(file, &before);
    if (rc == 0)
        return check_size(db, file, err);
    if (rc == ENOENT)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: not an LMDB (no data.mdb in the directory)",
                             path);
    int r = rc == MDB_INVALID || rc == EBADF ? check_short(file, err) : 0;
    if (r < 0)
        return r;
    if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH || rc == ENOTDIR || rc == EINVAL)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: not an LMDB: %s", path, mdb_strerror(rc));
    return dlg_data_fail(err, DLG_EIO, "%s: cannot open LMDB: %s", path, mdb_strerror(rc));
}

/* dlg_lmdb_check's callback: keeps every CKPT_EVERY-th key for seeks. */
static int keep_ckpt(void *ctx, uint64_t index, const void *key, size_t len, dlg_data_err *err)
{
    dlg_lmdb *db = ctx;
    if (index % CKPT_EVERY)
        return 0;
    ckpt_key *k = &db->ckpt[index / CKPT_EVERY];
    k->key = malloc(len ? len : 1);
    if (!k->key)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", db->path);
    memcpy(k->key, key, len);
    k->len = len;
    db->nckpt++;
    return 0;
}

/* Why a check of the whole tree at open: liblmdb aborts (or faults) on a
 * corrupt page, which no assert hook or error path can turn back into an
 * error, and a crash would lose the cell and name no offset.  The check
 * reads the key pages once (the pass random access needs anyway for its
 * checkpoints, which it builds), so reads after it cost nothing extra. */
static int check_tree(dlg_lmdb *db, MDB_txn *txn, uint64_t entries, dlg_data_err *err)
{
    mdb_filehandle_t fd;
    char file[4200];
    struct stat st;
    int m = mdb_env_get_fd(db->env, &fd);
    if (m == 0 && stat(db->path, &st) == 0)
        data_file(file, sizeof file, db->path, S_ISDIR(st.st_mode));
    else
        return dlg_data_fail(err, DLG_EIO, "%s: cannot read LMDB: %s", db->path,
                             m ? mdb_strerror(m) : strerror(errno));
    /* a record takes at least a node header and its offset in a leaf
     * page: a count the file cannot hold is corrupt, not a checkpoint
     * table to allocate (2^40 records asked for 64 GiB; found by fuzz_lmdb) */
    if (entries > db->file_size / NODE_MIN_BYTES)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s: corrupt LMDB: its meta page counts %llu records, more than its %llu bytes "
                             "can hold",
                             file, (unsigned long long)entries, (unsigned long long)db->file_size);
    size_t n = (size_t)((entries + CKPT_EVERY - 1) / CKPT_EVERY);
    db->ckpt = calloc(n, sizeof *db->ckpt);
    if (!db->ckpt)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", db->path);
    db->txnid = mdb_txn_id(txn);
    int rc = dlg_lmdb_check(fd, file, db->file_size, db->txnid, keep_ckpt, db, err);
    if (rc == 0)
        db->count = entries;
    return rc;
}

int dlg_lmdb_open(dlg_lmdb **out, const char *path, dlg_data_err *err)
{
    dlg_lmdb *db = calloc(1, sizeof *db + strlen(path) + 1);
    if (!db)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", path);
    strcpy(db->path, path);
    int rc = open_env(db, path, err);
    MDB_txn *txn = NULL;
    MDB_stat ms;
    if (rc == 0) {
        int m = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn);
        if (m == 0)
            m = mdb_dbi_open(txn, NULL, 0, &db->dbi);
        if (m == 0)
            m = mdb_stat(txn, db->dbi, &ms);
        if (m)
            rc = dlg_data_fail(err, DLG_ECORRUPT, "%s: cannot read LMDB: %s", path,
                               mdb_strerror(m));
        else if (ms.ms_entries == 0)
            rc = dlg_data_fail(err, DLG_EINVAL, "%s: LMDB dataset is empty (0 records)", path);
        else
            rc = check_tree(db, txn, ms.ms_entries, err);
        if (txn)
            mdb_txn_abort(txn);
    }
    if (rc < 0) {
        dlg_lmdb_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

uint64_t dlg_lmdb_count(const dlg_lmdb *db) { return db->count; }

void dlg_lmdb_close(dlg_lmdb *db)
{
    if (!db)
        return;
    for (size_t i = 0; i < db->nckpt; i++)
        free(db->ckpt[i].key);
    free(db->ckpt);
    if (db->env)
        mdb_env_close(db->env);
    free(db);
}

int dlg_lmdb_cursor_open(dlg_lmdb *db, dlg_lmdb_cursor **out, dlg_data_err *err)
{
    dlg_lmdb_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", db->path);
    c->db = db;
    c->pos = NONE;
    int rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &c->txn);
    if (rc == 0)
        rc = mdb_cursor_open(c->txn, db->dbi, &c->cur);
    size_t now = rc == 0 ? mdb_txn_id(c->txn) : db->txnid;
    if (now != db->txnid) {
        mdb_cursor_close(c->cur);
        mdb_txn_abort(c->txn);
        free(c);
        return dlg_data_fail(err, DLG_EINVAL,
                             "%s: the LMDB changed since it was opened and checked (transaction "
                             "%llu, now %llu): a writer is at work on it; read it when done",
                             db->path, (unsigned long long)db->txnid,
                             (unsigned long long)now);
    }
    if (rc) {
        if (c->txn)
            mdb_txn_abort(c->txn);
        free(c);
        return dlg_data_fail(err, DLG_EIO, "%s: cannot open a read cursor: %s", db->path,
                             mdb_strerror(rc));
    }
    *out = c;
    return 0;
}

void dlg_lmdb_cursor_close(dlg_lmdb_cursor *c)
{
    if (!c)
        return;
    mdb_cursor_close(c->cur);
    mdb_txn_abort(c->txn);
    dlg_datum_free(&c->datum);
    free(c);
}

void dlg_lmdb_rewind(dlg_lmdb_cursor *c) { c->pos = NONE; }

/* Whether v lies in the mapped data file.  liblmdb takes a node's offset
 * and sizes from the page as they are: in a corrupt page they can point
 * past the end of the file (in the map, not backed: SIGBUS on read).  A
 * miss re-reads the size, as a writer may have grown the file since open.
 * Without /proc (map not found) there is nothing to check against. */
static bool in_file(const dlg_lmdb *db, const MDB_val *v)
{
    const char *p = v->mv_data;
    if (!db->map)
        return true;
    uint64_t size = db->file_size;
    if (p < db->map || (uint64_t)(p - db->map) > size || v->mv_size > size - (uint64_t)(p - db->map)) {
        mdb_filehandle_t fd;
        struct stat st;
        if (mdb_env_get_fd(db->env, &fd) != 0 || fstat(fd, &st) != 0)
            return false;
        size = (uint64_t)st.st_size;
    }
    return p >= db->map && (uint64_t)(p - db->map) <= size &&
           v->mv_size <= size - (uint64_t)(p - db->map);
}

/* The error for a key (value: NULL) or value of record index that is not in
 * the file (see in_file). */
static int outside_file(const dlg_lmdb *db, uint64_t index, const MDB_val *k, const MDB_val *v,
                        dlg_data_err *err)
{
    char key[204];
    if (!v)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s: record %llu: key points outside the file: corrupt LMDB",
                             db->path, (unsigned long long)index);
    return dlg_data_fail(err, DLG_ECORRUPT,
                         "%s: record %llu (key '%s'): value points outside the file: corrupt LMDB",
                         db->path, (unsigned long long)index,
                         dlg_data_printable(key, sizeof key, k->mv_data, k->mv_size));
}

/* Moves the cursor with op and, if a record is there, decodes it. */
static int fetch(dlg_lmdb_cursor *c, MDB_cursor_op op, MDB_val *k, uint64_t index,
                 dlg_lmdb_record *rec, dlg_data_err *err)
{
    MDB_val v;
    int rc = mdb_cursor_get(c->cur, k, &v, op);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return dlg_data_fail(err, DLG_EIO, "%s: cursor read at record %llu: %s", c->db->path,
                             (unsigned long long)index, mdb_strerror(rc));
    c->pos = index;
    if (!in_file(c->db, k))
        return outside_file(c->db, index, k, NULL, err);
    if (!rec)
        return 1;
    if (!in_file(c->db, &v))
        return outside_file(c->db, index, k, &v, err);
    dlg_data_err local;
    rc = dlg_datum_decode(&c->datum, v.mv_data, v.mv_size, "value", &local);
    char key[204];
    if (rc < 0)
        return dlg_data_fail(err, local.code, "%s: key '%s' (record %llu): %s", c->db->path,
                             dlg_data_printable(key, sizeof key, k->mv_data, k->mv_size),
                             (unsigned long long)index, local.msg);
    rec->index = index;
    rec->key = k->mv_data;
    rec->key_len = k->mv_size;
    rec->value = v.mv_data;
    rec->value_len = v.mv_size;
    rec->datum = &c->datum;
    return 1;
}

int dlg_lmdb_next(dlg_lmdb_cursor *c, dlg_lmdb_record *rec, dlg_data_err *err)
{
    MDB_val k;
    if (c->pos == NONE)
        return fetch(c, MDB_FIRST, &k, 0, rec, err);
    return fetch(c, MDB_NEXT, &k, c->pos + 1, rec, err);
}

int dlg_lmdb_seek(dlg_lmdb_cursor *c, uint64_t index, dlg_lmdb_record *rec, dlg_data_err *err)
{
    dlg_lmdb *db = c->db;
    if (index >= db->count)
        return dlg_data_fail(err, DLG_EINVAL, "%s: record %llu out of range (%llu records)",
                             db->path, (unsigned long long)index, (unsigned long long)db->count);
    MDB_val k;
    if (c->pos != NONE && index == c->pos)
    {
        int rc = fetch(c, MDB_GET_CURRENT, &k, index, rec, err);
        return rc < 0 ? rc : 0;
    }
    if (c->pos == NONE || index < c->pos || index - c->pos >= CKPT_EVERY) {
        ckpt_key *ck = &db->ckpt[index / CKPT_EVERY];
        k.mv_size = ck->len;
        k.mv_data = ck->key;
        uint64_t base = index / CKPT_EVERY * CKPT_EVERY;
        int rc = fetch(c, MDB_SET_KEY, &k, base, base == index ? rec : NULL, err);
        if (rc <= 0)
            return rc < 0 ? rc : dlg_data_fail(err, DLG_ECORRUPT, "%s: key of record %llu vanished",
                                               db->path, (unsigned long long)base);
    }
    while (c->pos < index) {
        int rc = fetch(c, MDB_NEXT, &k, c->pos + 1, c->pos + 1 == index ? rec : NULL, err);
        if (rc <= 0)
            return rc < 0 ? rc : dlg_data_fail(err, DLG_ECORRUPT, "%s: record %llu missing",
                                               db->path, (unsigned long long)c->pos + 1);
    }
    return 0;
}
