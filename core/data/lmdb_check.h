/* A structural check of an LMDB's main B-tree, made once at open.
 *
 * Why: liblmdb trusts its pages.  On a corrupt one it asserts and calls
 * abort() (its assert hook cannot stop that), dereferences a wild page
 * number (SIGSEGV/SIGBUS) or a duplicate-data flag it has no cursor for.
 * None of that can be caught inside the process, so the tree liblmdb will
 * walk is checked first: every branch and leaf page is read once (pread,
 * no map) and everything liblmdb relies on when reading is verified.
 * Overflow pages (the image data) are not read, only bounds-checked, so
 * the check costs one pass over the small key pages and leaves the data's
 * cache state alone; reads after it cost nothing extra. */
#ifndef DLG_LMDB_CHECK_H
#define DLG_LMDB_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "data_error.h"

/* Called for every record in key order; nonzero stops the walk with that
 * return value (a negative dlg error). */
typedef int (*dlg_lmdb_key_fn)(void *ctx, uint64_t index, const void *key, size_t len,
                               dlg_data_err *err);

/* Checks the main database of the snapshot with transaction id txnid in
 * the open data file fd (named file in errors, file_size bytes long):
 * its meta page, then each branch and leaf page (page number, flags, node
 * offsets and sizes inside the page, child and overflow pages inside the
 * file, keys strictly ascending, tree depth and record count as the meta
 * page says).  Returns 0, or -DLG_ECORRUPT with one line naming file and
 * the byte offset of what is wrong (-DLG_EIO when the file cannot be read). */
int dlg_lmdb_check(int fd, const char *file, uint64_t file_size, uint64_t txnid,
                   dlg_lmdb_key_fn fn, void *ctx, dlg_data_err *err);

#endif
