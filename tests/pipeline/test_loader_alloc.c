/* The steady state allocates nothing: once every record has been through
 * the (single) worker, batches cost no malloc and no mmap in the loader,
 * its sources or the decoder wrapper (libturbojpeg's own are not seen).
 * Allocation is counted by wrapping the allocator at link time. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "pipe_util.h"

static atomic_long allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__real_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
void *__wrap_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off);

void *__wrap_malloc(size_t n)
{
    atomic_fetch_add(&allocs, 1);
    return __real_malloc(n);
}

void *__wrap_calloc(size_t a, size_t b)
{
    atomic_fetch_add(&allocs, 1);
    return __real_calloc(a, b);
}

void *__wrap_realloc(void *p, size_t n)
{
    atomic_fetch_add(&allocs, 1);
    return __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
    atomic_fetch_add(&allocs, 1);
    return __real_aligned_alloc(a, n);
}

void *__wrap_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
    atomic_fetch_add(&allocs, 1);
    return __real_mmap(a, n, prot, flags, fd, off);
}

/* Allocations during `nb` batches after `warm` batches (mx: transform =
 * mxnet with these augmentations). */
static long steady_mx(const char *spec, bool decode, bool train, int warm, int nb,
                      const dlg_mxnet_aug *mx)
{
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.data = spec;
    cfg.batch = 3;
    cfg.crop = 32;
    cfg.threads = 1; /* one worker sees every record in the warm-up */
    cfg.decode = decode;
    cfg.train = train;
    if (mx) {
        cfg.transform = DLG_TRANSFORM_MXNET;
        cfg.mx = *mx;
    }
    dlg_loader *l;
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), 0);
    long a0 = 0;
    for (int i = 0; i < warm + nb; i++) {
        if (i == warm)
            a0 = atomic_load(&allocs);
        dlg_batch *b;
        assert_int_equal(dlg_loader_next(l, &b), 0);
        dlg_loader_release(l, b);
    }
    long n = atomic_load(&allocs) - a0;
    dlg_loader_close(l);
    mock_host_fini(&m);
    return n;
}

static long steady(const char *spec, bool decode, bool train, int warm, int nb)
{
    return steady_mx(spec, decode, train, warm, nb, NULL);
}

static void test_steady_state(void **st)
{
    (void)st;
    pu_dataset d;
    pu_make_images(&d, "alloc", 9, 3, 60, 50, 5);
    pu_make_rec(&d);
    char spec[700];
    snprintf(spec, sizeof spec, "recordio:%s", d.rec);
    /* 9 records, 3 per batch: 6 batches are two epochs, then 12 more */
    assert_int_equal(steady(spec, true, true, 6, 12), 0);
    assert_int_equal(steady(spec, true, false, 6, 12), 0);
    assert_int_equal(steady(spec, false, true, 6, 12), 0);
    /* transform = mxnet, train_imagenet.py's level 3 with a pad: the warp,
     * pad and HLS buffers are the worker's, grown in the warm-up */
    dlg_mxnet_aug mx = {.max_rotate_angle = 10, .rotate = -1, .max_shear_ratio = 0.1f,
                        .min_random_scale = 1, .max_random_scale = 1, .max_aspect_ratio = 0.25f,
                        .min_random_area = 1, .max_random_area = 1, .random_h = 36,
                        .random_s = 50, .random_l = 50, .fill_value = 127, .pad = 2,
                        .inter_method = 1, .min_crop_size = -1, .max_crop_size = -1,
                        .max_img_size = 1e10f};
    assert_int_equal(steady_mx(spec, true, true, 6, 12, &mx), 0);
    /* and gluon-cv's ImageRecordIter colour options on a crop-size crop */
    mx.min_crop_size = 28;
    mx.max_crop_size = 40;
    mx.brightness = mx.contrast = mx.saturation = 0.4f;
    mx.pca_noise = 0.1f;
    assert_int_equal(steady_mx(spec, true, true, 6, 12, &mx), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_steady_state)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
