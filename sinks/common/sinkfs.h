/* File helpers shared by the sinks. */
#ifndef DLG_SINKFS_H
#define DLG_SINKFS_H

#include <stddef.h>
#include <sys/types.h>

/* Creates every missing parent directory of `path` (like mkdir -p of its
 * dirname), each made durable in its parent.  Returns 0 or an errno value. */
int sink_mkdir_parents(const char *path);

/* Creates directory `dir` and its parents, each made durable in its parent
 * (sink_fsync_dir).  Returns 0 or an errno value. */
int sink_mkdir_p(const char *dir);

/* fsync of the directory holding `path`: a file just created, renamed or
 * removed is only sure to stay so after a crash once its directory entry
 * is on disk (fsync of the file alone does not write that).  0 or an errno
 * value (filesystems that cannot fsync a directory, EINVAL, are fine). */
int sink_fsync_dir(const char *path);

/* open(path, flags | O_CLOEXEC), creating it (mode 0666) when missing and
 * then making its directory entry durable (sink_fsync_dir).  Returns the
 * fd, or -1 with errno set. */
int sink_open_durable(const char *path, int flags);

/* Writes all n bytes (retrying short writes and EINTR).  Returns 0 or an
 * errno value (ENOSPC on a full disk). */
int sink_write_all(int fd, const void *buf, size_t n);

/* Reads n bytes at file offset off in full (retrying short reads and
 * EINTR).  0, or an errno value (EIO where the file ends first). */
int sink_read_at(int fd, void *buf, size_t n, off_t off);

/* Reads a whole file into *out (NUL-terminated, caller frees).  Returns 0,
 * ENOENT when it does not exist, or another errno value. */
int sink_read_file(const char *path, char **out, size_t *len);

/* fsync(fd) for a sink's flush(): 0, or -DLG_EIO after reporting the file
 * through the host (filesystems that cannot fsync, EINVAL, are fine). */
struct dlg_host;
int sink_fsync(const struct dlg_host *h, int fd, const char *path);

/* Opens a sink's results file for appending (access: O_WRONLY or O_RDWR),
 * creating it and its directories: the `path` option must be set.  On
 * success *fd and *path_copy (strdup'ed) are the caller's; else -code after
 * reporting through the host ("path = VALUE: ...", so that the core names
 * the key's line). */
struct dlg_value;
int sink_open_append(const struct dlg_host *h, const struct dlg_value *path_opt, int access, int *fd,
                     char **path_copy);

/* An exclusive advisory lock (flock) on a results file, so that two runs
 * appending to the same file never interleave a header, a record or the
 * repair of a cut one.  Best effort: where the filesystem has no flock the
 * sink goes on unlocked. */
void sink_lock(int fd);
void sink_unlock(int fd);

/* Appends n bytes as one piece: a write that fails part way (ENOSPC, EFBIG)
 * is undone by truncating back, so the file never keeps a torn record that
 * the next one would glue onto.  Hold sink_lock.  0 or an errno value. */
int sink_append(int fd, const void *buf, size_t n);

/* sink_append, then fdatasync: a result row is on stable storage when it
 * returns 0 (plugin.h: the host journals it as written then).  A failed
 * sync undoes the append too, so that --resume, which writes the row
 * again, finds no copy of it.  Files that cannot sync (EINVAL: a pipe, a
 * device) are fine.  Hold sink_lock.  0 or an errno value; *sync_failed tells
 * whether it was the sync that failed. */
int sink_append_durable(int fd, const void *buf, size_t n, int *sync_failed);

/* Where a last line not ended by '\n' starts (the file size when there is
 * none) into *start.  0 or an errno value. */
int sink_last_line_start(int fd, off_t *start);

/* Moves the bytes from `from` to the end of the file -- a record cut short
 * by an earlier crash -- to PATH.cut (appended, '\n' ended) and truncates
 * the file there, with one warning, so that every record left parses and
 * new ones follow whole ones.  Hold sink_lock.  0, or -code after
 * reporting. */
int sink_set_aside(const struct dlg_host *h, int fd, const char *path, off_t from);

/* sink_set_aside for a last line not ended by '\n' (a line-per-record
 * file: JSON Lines, line protocol), under sink_lock.  0, or -code after
 * reporting. */
int sink_set_aside_cut_line(const struct dlg_host *h, int fd, const char *path);

/* A results file deleted, or renamed away, during the run would take
 * every later record with it unseen.  Call before each write: when the
 * file open at *fd is no longer the one at path, *fd becomes the file at
 * path -- a deleted one made again from what it held (still readable
 * through *fd), else the file now there, or a new one -- with one warning
 * (`what` names a record, n how many there were and `whose` whose they
 * are: "this run wrote", or "it held" for a file that outlives runs).  0 when *fd is
 * still the file at path (or not a regular file), 1 when it was reopened,
 * -code after reporting (the record is then not written). */
int sink_follow_path(const struct dlg_host *h, int *fd, const char *path, const char *what, size_t n,
                     const char *whose);

/* What sink_open_append would find wrong with the `path` option, found
 * without creating or writing anything (for a sink's check op): an existing
 * path must be a writable non-directory, else the nearest existing ancestor
 * of its directory must be a writable directory.  0, or -code after
 * reporting through the host. */
int sink_check_path(const struct dlg_host *h, const struct dlg_value *path_opt);

/* The same for a directory a sink will write in (an option `key`, named in
 * the message): an existing one must be a writable directory, else the
 * nearest existing ancestor must be.  0, or -code after reporting. */
int sink_check_dir(const struct dlg_host *h, const char *key, const char *dir);

#endif
