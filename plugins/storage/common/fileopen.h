/* Opening a data file for a storage backend, with the error lines a user
 * can act on: a directory is named as one (it opens, but every read fails,
 * and O_DIRECT refuses it with the same EINVAL as a filesystem without
 * O_DIRECT), so is a FIFO (opening it waited forever for a writer), a
 * socket, or, for reading, a character device (size 0), and a filesystem
 * refusing O_DIRECT gets the backend's hint. */
#ifndef DLG_STORAGE_FILEOPEN_H
#define DLG_STORAGE_FILEOPEN_H

#include <dlgauge/plugin.h>
#include <stdatomic.h>

/* Opens path for reading (with extra_oflags, e.g. O_DIRECT) or, for
 * DLG_OPEN_WRITE, creates/truncates it.  Returns the fd, or -code after
 * h->error(); no_direct_hint ends the line when O_DIRECT is refused. */
int stg_open(const dlg_host *h, const char *path, int flags, int extra_oflags,
             const char *no_direct_hint);

/* Warns, once per *warned (a backend instance's flag), when fd opened with
 * O_DIRECT is on tmpfs: Linux 6.6+ accepts O_DIRECT there, but the reads
 * come from memory, so a "direct" benchmark of it measures RAM, not a
 * disk (/tmp is tmpfs on many distributions). */
void stg_warn_direct_tmpfs(const dlg_host *h, int fd, const char *path, atomic_bool *warned);

#endif
