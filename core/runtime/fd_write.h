/* Writing a whole buffer to a descriptor (pipes, the journal). */
#ifndef DLG_FD_WRITE_H
#define DLG_FD_WRITE_H

#include <stddef.h>

/* Writes all n bytes, retrying short writes and EINTR.  0, or the errno of
 * the write that failed (a full disk first takes what fits, and only the
 * next write says ENOSPC; a write of 0 bytes reads EIO). */
int dlg_write_all(int fd, const void *buf, size_t n);

#endif
