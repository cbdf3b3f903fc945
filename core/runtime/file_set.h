/* The distinct files a cell opened to read through its storage (by device
 * and inode, so that two paths to one file count once) and the outputs it
 * kept, and their bytes: what a disk must hold for the cell (the row's
 * storage_files_bytes).
 * Thread-safe: loader threads open files concurrently, during timed steps
 * of a first epoch, so the set is cut into shards of their own lock and
 * table: a growth rehashes one shard (at a million files ~0.5 MiB, where
 * one table took 34 ms to grow here, inside one step) while opens of other
 * shards go on. */
#ifndef DLG_FILE_SET_H
#define DLG_FILE_SET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dlg_file_key {
    uint64_t dev, ino; /* ino 0: an empty slot (Linux gives no file inode 0) */
} dlg_file_key;

#define DLG_FILE_SET_SHARDS 64

typedef struct dlg_file_shard {
    pthread_mutex_t lock;
    dlg_file_key *slots; /* open addressing, a power of two, at most half full */
    size_t cap, n;
    uint64_t bytes; /* the files' sizes when first added */
    bool lost;      /* a file could not be added (out of memory): bytes is short */
} dlg_file_shard;

typedef struct dlg_file_set {
    dlg_file_shard shards[DLG_FILE_SET_SHARDS]; /* by the key hash's top bits */
    /* Files (or folders of files) the cell wrote and keeps, by name: each
     * pass of an output is a new file renamed into place, so an inode
     * would count every pass; sized when the bytes are asked for. */
    pthread_mutex_t kept_lock;
    char **kept;
    size_t nkept, kept_cap;
    bool kept_lost; /* a name could not be kept (out of memory) */
} dlg_file_set;

void dlg_file_set_init(dlg_file_set *s);
void dlg_file_set_fini(dlg_file_set *s);
/* Adds the file at path (stat(2)) unless it is there already; a path
 * that cannot be stat'ed, or is no regular file, adds nothing. */
void dlg_file_set_add_path(dlg_file_set *s, const char *path);
/* Adds one file of `size` bytes by its key; false if it was there. */
bool dlg_file_set_add(dlg_file_set *s, dlg_file_key k, uint64_t size);
/* Keeps path, a file or a folder of files the cell wrote, unless kept
 * already (by name). */
void dlg_file_set_keep(dlg_file_set *s, const char *path);
/* The files' bytes so far: those read at their size when first added,
 * and the kept ones at their size now (a folder: its regular files; a
 * file also read counted once; a name no longer there, nothing); false
 * once one was lost (then *bytes is short). */
bool dlg_file_set_bytes(dlg_file_set *s, uint64_t *bytes);

#endif
