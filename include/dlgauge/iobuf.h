/* dlgauge I/O buffers — memory that storage reads land in.
 *
 * Buffers of DLG_IOBUF_HUGE_MIN (64 KiB) or more are whole 2 MiB-aligned
 * mappings with madvise(MADV_HUGEPAGE), so the kernel may back them with
 * transparent huge pages where it grants them on request (THP "madvise"
 * mode, the usual default).  An O_DIRECT read then lands in one physically
 * contiguous page instead of 256 scattered 4 KiB ones: on the development
 * VM (virtio disk) 1 MiB sequential direct reads ran 2.1-2.8x faster
 * (median 1667 against 748 MB/s, four interleaved runs each), and the
 * loader's O_DIRECT reads of ~109 KB RecordIO records 1.5x (370 against
 * 249 MB/s).  The price is up to 2 MiB of memory per buffer.  Smaller
 * buffers, and every buffer under AddressSanitizer (which checks heap
 * blocks only), come from posix_memalign.
 *
 * Header-only: core/data, the storage backends and the workloads share it
 * without a library.  Free with dlg_iobuf_free(p, bytes), the same bytes.
 */
#ifndef DLGAUGE_IOBUF_H
#define DLGAUGE_IOBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* MAP_ANONYMOUS, madvise and posix_memalign are extensions that the C
 * library declares only with _GNU_SOURCE or _DEFAULT_SOURCE (implied by
 * gcc's default -std=gnu11 and by C++, not by -std=c11). */
#if !defined(MAP_ANONYMOUS) || !defined(MADV_HUGEPAGE)
#error "dlgauge/iobuf.h needs MAP_ANONYMOUS and madvise: #define _GNU_SOURCE (or _DEFAULT_SOURCE) before the first #include, or build with -std=gnu11"
#else /* the rest would only add errors after that one */

#define DLG_IOBUF_HUGE ((size_t)2 << 20)
#ifndef DLG_IOBUF_HUGE_MIN
#define DLG_IOBUF_HUGE_MIN ((size_t)64 << 10)
#endif

#if defined(__SANITIZE_ADDRESS__)
#define DLG_IOBUF_MAPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DLG_IOBUF_MAPS 0
#endif
#endif
#ifndef DLG_IOBUF_MAPS
#define DLG_IOBUF_MAPS 1
#endif

static inline size_t dlg_iobuf_round(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* Whether a buffer of `bytes` is a huge-page mapping. */
static inline int dlg_iobuf_is_mapped(size_t bytes)
{
    return DLG_IOBUF_MAPS && bytes >= DLG_IOBUF_HUGE_MIN;
}

/* bytes of memory aligned to align (a power of two; at least 64 is used),
 * untouched; NULL when out of memory. */
static inline void *dlg_iobuf_alloc(size_t bytes, size_t align)
{
    if (align < 64)
        align = 64;
    size_t a = align > DLG_IOBUF_HUGE ? align : DLG_IOBUF_HUGE;
    /* a size that rounding up would wrap to a small one: NULL, as malloc */
    if (a > SIZE_MAX / 4 || bytes > SIZE_MAX - 2 * a)
        return NULL;
    if (!dlg_iobuf_is_mapped(bytes)) { /* posix_memalign: C99 too, where aligned_alloc is missing */
        void *b = NULL;
        return posix_memalign(&b, align, dlg_iobuf_round(bytes ? bytes : 1, align)) == 0 ? b : NULL;
    }
    size_t len = dlg_iobuf_round(bytes, DLG_IOBUF_HUGE);
    char *m = (char *)mmap(NULL, len + a, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                           -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    /* keep the aligned len bytes; the head (maybe none) and the tail (the
     * rest of the extra a bytes, never none) go back */
    size_t head = dlg_iobuf_round((uintptr_t)m, a) - (uintptr_t)m;
    char *p = m + head;
    if (head)
        munmap(m, head);
    munmap(p + len, a - head);
    (void)madvise(p, len, MADV_HUGEPAGE); /* a hint: 4 KiB pages otherwise */
    return p;
}

static inline void dlg_iobuf_free(void *p, size_t bytes)
{
    if (!p)
        return;
    if (dlg_iobuf_is_mapped(bytes))
        munmap(p, dlg_iobuf_round(bytes, DLG_IOBUF_HUGE));
    else
        free(p);
}

#endif /* MAP_ANONYMOUS */
#endif
