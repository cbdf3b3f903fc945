/* The distinct files a cell read (file_set.h). */
#include "file_set.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <dlgauge/fnv1a.h>

/* A shard's first table (1 KiB): 64 shards hold a data set of a couple of
 * thousand files without growing; each grows by doubling. */
#define FIRST_CAP 64
/* The hash's top 6 bits pick the shard, its low bits the slot. */
#define SHARD_SHIFT 58
_Static_assert(DLG_FILE_SET_SHARDS == 1 << (64 - SHARD_SHIFT), "shards = 2^(64 - SHARD_SHIFT)");

void dlg_file_set_init(dlg_file_set *s)
{
    for (int i = 0; i < DLG_FILE_SET_SHARDS; i++) {
        s->shards[i] = (dlg_file_shard){.slots = NULL};
        pthread_mutex_init(&s->shards[i].lock, NULL);
    }
    s->kept = NULL;
    s->nkept = s->kept_cap = 0;
    s->kept_lost = false;
    pthread_mutex_init(&s->kept_lock, NULL);
}

void dlg_file_set_fini(dlg_file_set *s)
{
    for (int i = 0; i < DLG_FILE_SET_SHARDS; i++) {
        dlg_file_shard *sh = &s->shards[i];
        free(sh->slots);
        pthread_mutex_destroy(&sh->lock);
        sh->slots = NULL;
        sh->cap = sh->n = 0;
    }
    for (size_t i = 0; i < s->nkept; i++)
        free(s->kept[i]);
    free(s->kept);
    s->kept = NULL;
    s->nkept = s->kept_cap = 0;
    pthread_mutex_destroy(&s->kept_lock);
}

static uint64_t hash_of(dlg_file_key k)
{
    uint64_t h = dlg_fnv1a(DLG_FNV1A_INIT, &k.dev, sizeof k.dev);
    return dlg_fnv1a(h, &k.ino, sizeof k.ino);
}

/* The slot that holds k, or the empty one where it would go. */
static dlg_file_key *find(dlg_file_key *slots, size_t cap, dlg_file_key k)
{
    size_t i = (size_t)hash_of(k) & (cap - 1);
    while (slots[i].ino && (slots[i].ino != k.ino || slots[i].dev != k.dev))
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

static bool grow(dlg_file_shard *sh)
{
    size_t cap = sh->cap ? 2 * sh->cap : FIRST_CAP;
    dlg_file_key *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < sh->cap; i++)
        if (sh->slots[i].ino)
            *find(slots, cap, sh->slots[i]) = sh->slots[i];
    free(sh->slots);
    sh->slots = slots;
    sh->cap = cap;
    return true;
}

bool dlg_file_set_add(dlg_file_set *s, dlg_file_key k, uint64_t size)
{
    if (!k.ino)
        return false;
    dlg_file_shard *sh = &s->shards[hash_of(k) >> SHARD_SHIFT];
    pthread_mutex_lock(&sh->lock);
    bool added = false;
    if (2 * (sh->n + 1) > sh->cap && !grow(sh)) {
        dlg_file_key *there = sh->cap ? find(sh->slots, sh->cap, k) : NULL;
        sh->lost |= !there || !there->ino; /* a new file not counted */
    } else {
        dlg_file_key *slot = find(sh->slots, sh->cap, k);
        if ((added = !slot->ino)) {
            *slot = k;
            sh->n++;
            sh->bytes += size;
        }
    }
    pthread_mutex_unlock(&sh->lock);
    return added;
}

void dlg_file_set_add_path(dlg_file_set *s, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        dlg_file_set_add(s, (dlg_file_key){(uint64_t)st.st_dev, (uint64_t)st.st_ino}, (uint64_t)st.st_size);
}

/* Appends a copy of path to the kept names: false out of memory. */
static bool append_kept(dlg_file_set *s, const char *path)
{
    if (s->nkept == s->kept_cap) {
        size_t cap = s->kept_cap ? 2 * s->kept_cap : 8;
        char **k = realloc(s->kept, cap * sizeof *k);
        if (!k)
            return false;
        s->kept = k;
        s->kept_cap = cap;
    }
    char *copy = strdup(path);
    if (copy)
        s->kept[s->nkept++] = copy;
    return copy != NULL;
}

void dlg_file_set_keep(dlg_file_set *s, const char *path)
{
    pthread_mutex_lock(&s->kept_lock);
    bool there = false;
    for (size_t i = 0; i < s->nkept && !there; i++)
        there = strcmp(s->kept[i], path) == 0;
    if (!there && !append_kept(s, path))
        s->kept_lost = true;
    pthread_mutex_unlock(&s->kept_lock);
}

/* The bytes of the regular file at path, 0 when the set read it (its size
 * is counted there) or it is no regular file. */
static uint64_t unread_bytes(dlg_file_set *s, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    dlg_file_key k = {(uint64_t)st.st_dev, (uint64_t)st.st_ino};
    dlg_file_shard *sh = &s->shards[hash_of(k) >> SHARD_SHIFT];
    pthread_mutex_lock(&sh->lock);
    bool read = sh->cap && find(sh->slots, sh->cap, k)->ino;
    pthread_mutex_unlock(&sh->lock);
    return read ? 0 : (uint64_t)st.st_size;
}

/* A kept name's bytes now: a file's, or a folder's regular files'. */
static uint64_t kept_bytes(dlg_file_set *s, const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return unread_bytes(s, path);
    uint64_t sum = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char p[4096];
        if (e->d_name[0] != '.' && (size_t)snprintf(p, sizeof p, "%s/%s", path, e->d_name) < sizeof p)
            sum += unread_bytes(s, p);
    }
    closedir(d);
    return sum;
}

bool dlg_file_set_bytes(dlg_file_set *s, uint64_t *bytes)
{
    bool whole = true;
    *bytes = 0;
    pthread_mutex_lock(&s->kept_lock);
    for (size_t i = 0; i < s->nkept; i++)
        *bytes += kept_bytes(s, s->kept[i]);
    whole &= !s->kept_lost;
    pthread_mutex_unlock(&s->kept_lock);
    for (int i = 0; i < DLG_FILE_SET_SHARDS; i++) {
        dlg_file_shard *sh = &s->shards[i];
        pthread_mutex_lock(&sh->lock);
        *bytes += sh->bytes;
        whole &= !sh->lost;
        pthread_mutex_unlock(&sh->lock);
    }
    return whole;
}
