/* Pages of a file in the page cache, counted by the test itself (mincore
 * over a read-only mapping), independent of the code a test checks.
 * Include after <cmocka.h>. */
#ifndef DLG_TEST_PAGE_CACHE_H
#define DLG_TEST_PAGE_CACHE_H

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Resident pages of path; *pages (when not NULL) gets its page count. */
static inline size_t tc_resident_pages(const char *path, size_t *pages)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(p != MAP_FAILED);
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = ((size_t)st.st_size + page - 1) / page, in = 0;
    unsigned char *vec = malloc(n);
    assert_non_null(vec);
    assert_int_equal(mincore(p, (size_t)st.st_size, vec), 0);
    for (size_t i = 0; i < n; i++)
        in += vec[i] & 1;
    free(vec);
    munmap(p, (size_t)st.st_size);
    close(fd);
    if (pages)
        *pages = n;
    return in;
}

#endif
