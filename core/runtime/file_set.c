/* The distinct files a cell read (file_set.h). */
#include "file_set.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <dlgauge/fnv1a.h>

/* Enough for a data set of a few thousand files without growing; grown
 * by doubling, so a list of a million images costs ~20 reallocations. */
#define FIRST_CAP 4096

void dlg_file_set_init(dlg_file_set *s)
{
    *s = (dlg_file_set){.slots = NULL};
    pthread_mutex_init(&s->lock, NULL);
}

void dlg_file_set_fini(dlg_file_set *s)
{
    free(s->slots);
    pthread_mutex_destroy(&s->lock);
    s->slots = NULL;
    s->cap = s->n = 0;
}

static size_t slot_of(dlg_file_key k, size_t cap)
{
    uint64_t h = dlg_fnv1a(DLG_FNV1A_INIT, &k.dev, sizeof k.dev);
    return (size_t)dlg_fnv1a(h, &k.ino, sizeof k.ino) & (cap - 1);
}

/* The slot that holds k, or the empty one where it would go. */
static dlg_file_key *find(dlg_file_key *slots, size_t cap, dlg_file_key k)
{
    size_t i = slot_of(k, cap);
    while (slots[i].ino && (slots[i].ino != k.ino || slots[i].dev != k.dev))
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

static bool grow(dlg_file_set *s)
{
    size_t cap = s->cap ? 2 * s->cap : FIRST_CAP;
    dlg_file_key *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i].ino)
            *find(slots, cap, s->slots[i]) = s->slots[i];
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return true;
}

bool dlg_file_set_add(dlg_file_set *s, dlg_file_key k, uint64_t size)
{
    if (!k.ino)
        return false;
    pthread_mutex_lock(&s->lock);
    bool added = false;
    if (2 * (s->n + 1) > s->cap && !grow(s)) {
        dlg_file_key *there = s->cap ? find(s->slots, s->cap, k) : NULL;
        s->lost |= !there || !there->ino; /* a new file not counted */
    } else {
        dlg_file_key *slot = find(s->slots, s->cap, k);
        if ((added = !slot->ino)) {
            *slot = k;
            s->n++;
            s->bytes += size;
        }
    }
    pthread_mutex_unlock(&s->lock);
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
    pthread_mutex_lock(&s->lock);
    *bytes = s->bytes;
    bool whole = !s->lost;
    pthread_mutex_unlock(&s->lock);
    return whole;
}
