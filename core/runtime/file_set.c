/* The distinct files a cell read (file_set.h). */
#include "file_set.h"

#include <stdlib.h>
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

bool dlg_file_set_bytes(dlg_file_set *s, uint64_t *bytes)
{
    bool whole = true;
    *bytes = 0;
    for (int i = 0; i < DLG_FILE_SET_SHARDS; i++) {
        dlg_file_shard *sh = &s->shards[i];
        pthread_mutex_lock(&sh->lock);
        *bytes += sh->bytes;
        whole &= !sh->lost;
        pthread_mutex_unlock(&sh->lock);
    }
    return whole;
}
