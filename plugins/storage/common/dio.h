/* O_DIRECT helpers: the alignment a file needs, and a reusable aligned
 * bounce buffer that serves unaligned ranges by reading the enclosing
 * aligned blocks and copying out the wanted slice. */
#ifndef DLG_STORAGE_DIO_H
#define DLG_STORAGE_DIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Alignment O_DIRECT needs for fd: statx(STATX_DIOALIGN) where the kernel
 * reports it, else BLKSSZGET for block devices, else fstatfs's block size,
 * else 4096.  *how names the source (for logs). Always a power of two. */
uint32_t stg_dio_align(int fd, const char **how);

static inline bool stg_aligned(const void *buf, size_t n, uint64_t off, uint32_t align)
{
    uint64_t m = align - 1u;
    return ((uintptr_t)buf & m) == 0 && (n & m) == 0 && (off & m) == 0;
}

/* Reads exactly [off, off+n) with aligned off, n and buf; returns bytes
 * (< n only at EOF) or -code. */
typedef int64_t (*stg_aligned_read_fn)(void *ctx, void *buf, size_t n, uint64_t off);

typedef struct stg_bounce {
    void *buf;
    size_t cap;   /* bytes allocated */
    size_t max;   /* never grow past this: larger reads go in chunks */
    uint32_t align;
} stg_bounce;

void stg_bounce_init(stg_bounce *b, uint32_t align, size_t max);
void stg_bounce_free(stg_bounce *b);

/* Reads [off, off+n) into buf through the bounce buffer, which grows (to a
 * power of two, at most b->max) only when a larger read comes.
 * Returns bytes read (< n only at EOF), -DLG_ENOMEM, or fn's error. */
int64_t stg_bounce_read(stg_bounce *b, stg_aligned_read_fn fn, void *ctx, void *buf, size_t n,
                        uint64_t off);

#endif
