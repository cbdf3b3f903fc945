/* Whole-range pread/pwrite loops shared by the storage backends. */
#ifndef DLG_STORAGE_FILEIO_H
#define DLG_STORAGE_FILEIO_H

#include <dlgauge/plugin.h>
#include <stddef.h>
#include <stdint.h>

/* Reads until n bytes or EOF, retrying EINTR and short reads.
 * Returns bytes read (< n only at EOF) or -errno. */
int64_t stg_pread_full(int fd, void *buf, size_t n, uint64_t off);

/* Writes all n bytes, retrying EINTR and short writes.  0 or -errno;
 * *done gets the bytes written before the error. */
int stg_pwrite_full(int fd, const void *buf, size_t n, uint64_t off, size_t *done);

/* A backend's write(): stg_pwrite_full, and on failure one error line with
 * the file, the write, and the offset where it stopped when part of it went
 * through (a disk that fills mid-write).  0 or -DLG_EIO after h->error();
 * -DLG_EINVAL for a file opened for reading. */
int stg_write(const dlg_host *h, int fd, const char *path, const void *buf, size_t n, uint64_t off);

/* Size of an open file (regular file or block device).  0 or -errno. */
int stg_fd_size(int fd, uint64_t *out);

#endif
