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

#include <stdbool.h>
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

/* What mdb_env_open itself trusts, checked before it runs, on the open
 * data file fd (named file in errors).  It reads the second meta page at
 * the first one's page size, takes the page size of the newer of the two,
 * maps the file and reads both meta pages through the map, the second at
 * that page size: a page size of 0 divided by zero there (SIGFPE), a newer
 * meta page of another page size read past the file (SIGBUS; both found
 * by fuzz_lmdb).  Returns 1 with the page size and the newer meta page's
 * last page number (the file must hold pages 0 .. *last_pg), 0 where
 * liblmdb will refuse the file itself (a first or second meta page it
 * does not take), or -DLG_ECORRUPT naming the byte: a page size liblmdb
 * does not write, or meta pages whose page sizes differ. */
int dlg_lmdb_check_metas(int fd, const char *file, uint32_t *psize, uint64_t *last_pg,
                         dlg_data_err *err);
/* A page size liblmdb writes: a power of two from 512 to 65536. */
bool dlg_lmdb_page_size_ok(uint32_t psize);

#endif
