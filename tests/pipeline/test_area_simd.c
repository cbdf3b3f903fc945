/* INTER_AREA's whole-factor shrinks (loader_area.c; the 2 x 2 one also in
 * AVX2, loader_area_avx2.c) against the bytes OpenCV 4.6 (Debian's
 * python3-opencv) produced once, on both paths: the test wraps
 * dlg_warp_have_avx2, the kernels' CPU check, to force the scalar loops.
 * Output widths below, at and past the AVX2 block of 8 pixels (and not
 * multiples of it), 1-pixel-wide results; sources packed against pages
 * that may not be read, and rows with padding that must not be read into
 * the result or written.  The 3 x 3 and 4 x 4 means take SSE2 (the
 * x86-64 baseline) on both runs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loader_affine.h"

static bool scalar_only; /* the wrap below: false unless a case forces the scalar loops */

bool __real_dlg_warp_have_avx2(void);
bool __wrap_dlg_warp_have_avx2(void);

bool __wrap_dlg_warp_have_avx2(void)
{
    return !scalar_only && __real_dlg_warp_have_avx2();
}

/* cv2.resize(src, (w, h), interpolation=cv2.INTER_AREA) of the scattered
 * bytes below at (f w) x (f h), as the 64-bit FNV-1a of its packed bytes. */
typedef struct area_case {
    int f, w, h;
    uint64_t fnv;
} area_case;

static const area_case cases[] = {
    {2, 1, 1, 0x71fc4a1b0628d885u},   {2, 1, 5, 0x842c7459c5351b4au},
    {2, 2, 3, 0x222e3936910eede0u},   {2, 7, 2, 0x2d719562e96cc25fu},
    {2, 8, 1, 0xa299b3f9de9f1ae0u},   {2, 9, 3, 0xdeed3a61dae633c8u},
    {2, 15, 2, 0x1e03c3e571403900u},  {2, 16, 4, 0x8c7e7dc8283a49e6u},
    {2, 17, 3, 0x73da6b06456c4330u},  {2, 31, 1, 0x9ec798a1d6153318u},
    {2, 33, 2, 0x56424452e876b614u},  {2, 64, 2, 0xb0a5cb415fc54843u},
    {2, 100, 3, 0x568bbfca7e64b89cu}, {3, 1, 2, 0x133f963e756efa70u},
    {3, 11, 3, 0x34356b2046a441b0u},  {4, 9, 2, 0x57d1e5b245019a55u},
    {4, 3, 1, 0x1872f381fa0fd28fu},
};

/* Byte i of the packed source: scattered, so 2 x 2 sums hit every residue
 * mod 4 (ties of the half-up rounding included). */
static uint8_t scattered(size_t i)
{
    return (uint8_t)(((uint32_t)i * 2654435761u) >> 24);
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3u;
    return h;
}

/* OpenCV's 2 x 2 rule on src's packed bytes: where the first wrong byte
 * is and how many sums were ties. */
static int half_up_check(const uint8_t *out, size_t dstride, const area_case *c, const char *how)
{
    const size_t sw = (size_t)2 * c->w * 3;
    int ties = 0;
    for (int y = 0; y < c->h; y++)
        for (int i = 0; i < 3 * c->w; i++) {
            size_t at = (size_t)2 * y * sw + (size_t)(2 * i - i % 3);
            int s = scattered(at) + scattered(at + 3) + scattered(at + sw) + scattered(at + sw + 3);
            ties += s % 4 == 2;
            if (out[(size_t)y * dstride + i] != (s + 2) >> 2) {
                print_error("%s %dx%d: row %d byte %d is %d, OpenCV's %d\n", how, c->w, c->h, y, i,
                            out[(size_t)y * dstride + i], (s + 2) >> 2);
                fail();
            }
        }
    return ties;
}

/* One case from src (its rows sstride apart) into out (dstride apart):
 * the 2 x 2 rule, then OpenCV's bytes. */
static int run_case(const area_case *c, uint8_t *src, size_t sstride, uint8_t *out,
                    size_t dstride, const char *how)
{
    const int sw = c->f * c->w, sh = c->f * c->h;
    for (int y = 0; y < sh; y++)
        for (int i = 0; i < 3 * sw; i++)
            src[(size_t)y * sstride + i] = scattered((size_t)y * sw * 3 + i);
    dlg_rgb8 s = {src, sw, sh, sstride}, d = {out, c->w, c->h, dstride};
    dlg_resize_rgb(&s, &d, DLG_WARP_AREA);
    int ties = c->f == 2 ? half_up_check(out, dstride, c, how) : 0;
    uint64_t h = 0xcbf29ce484222325u;
    for (int y = 0; y < c->h; y++)
        h = fnv1a(h, out + (size_t)y * dstride, (size_t)c->w * 3);
    if (h != c->fnv) {
        print_error("%s %dx%d by %d: FNV-1a %016llx, OpenCV's %016llx\n", how, c->w, c->h, c->f,
                     (unsigned long long)h, (unsigned long long)c->fnv);
        fail();
    }
    return ties;
}

/* Every case packed, its source ending against a page that may not be
 * read and then starting just after one. */
static void packed_cases(const char *how)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map, page, PROT_NONE), 0);
    assert_int_equal(mprotect(map + 2 * page, page, PROT_NONE), 0);
    static uint8_t out[100 * 5 * 3];
    int ties = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const area_case *c = &cases[k];
        size_t row = (size_t)c->f * c->w * 3, n = row * c->f * c->h;
        assert_true(n <= page && (size_t)c->w * c->h * 3 <= sizeof out);
        ties += run_case(c, map + 2 * page - n, row, out, (size_t)c->w * 3, how);
        ties += run_case(c, map + page, row, out, (size_t)c->w * 3, how);
    }
    assert_true(ties > 0); /* the half-up rule was exercised */
    assert_int_equal(munmap(map, 3 * page), 0);
}

/* Every case with padded rows: the source's padding must not reach the
 * result, the result's must stay as it was. */
static void padded_cases(const char *how)
{
    enum { SPAD = 7, DPAD = 5 };
    static uint8_t src[(600 + SPAD) * 8], out[(300 + DPAD) * 5];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const area_case *c = &cases[k];
        size_t ss = (size_t)c->f * c->w * 3 + SPAD, ds = (size_t)c->w * 3 + DPAD;
        assert_true(ss * c->f * c->h <= sizeof src && ds * c->h <= sizeof out);
        memset(src, 0xff, sizeof src);
        memset(out, 0xee, sizeof out);
        run_case(c, src, ss, out, ds, how);
        for (int y = 0; y < c->h; y++)
            for (size_t i = ds - DPAD; i < ds; i++)
                assert_int_equal(out[(size_t)y * ds + i], 0xee);
        for (size_t i = ds * c->h; i < sizeof out; i++)
            assert_int_equal(out[i], 0xee);
    }
}

static void test_area_dispatched(void **st)
{
    (void)st;
    scalar_only = false;
    if (!__real_dlg_warp_have_avx2())
        print_message("no AVX2 on this CPU: the dispatched run is the scalar one\n");
    packed_cases("dispatched");
    padded_cases("dispatched");
}

static void test_area_scalar(void **st)
{
    (void)st;
    scalar_only = true;
    packed_cases("scalar");
    padded_cases("scalar");
    scalar_only = false;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_area_dispatched),
        cmocka_unit_test(test_area_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
