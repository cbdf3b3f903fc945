/* Benchmark driver for scripts/bench/augment-vs-opencv.sh (not a test):
 *   aug_bench JPEG OUTDIR REPS [SIDE CROP]
 * decodes JPEG, resizes its shorter side to SIDE (342) as transform = mxnet
 * does, then times, REPS times each, the two stages of MXNet's augmenter
 * that OpenCV runs for it: the affine warp of the whole image (bilinear,
 * constant border), the HLS jitter round trip of the centre CROP (299) and
 * the colour jitter (contrast, saturation, brightness) of that crop;
 * then, for each of OpenCV's interpolations (inter_method 0..4), the
 * resize of the decoded image and the warp of the resized one; and
 * INTER_AREA's exact 2 x 2 shrink to the resized size from twice it.
 * Writes what the peer needs to repeat the work and compare results:
 * OUTDIR/in.ppm (the resized image), OUTDIR/params.txt (matrix, shift,
 * crop, color), OUTDIR/warp.ppm, hls.ppm and color.ppm (dlgauge's outputs).  Prints
 * one "key value" per line: per-stage medians in microseconds and the ISA
 * the vectorised loops run with.
 * env AUG_BENCH_SCALAR=1: the warp and INTER_AREA kernels' AVX2 check
 * (dlg_warp_have_avx2, wrapped at link time as test_pipe_area_simd does)
 * answers no, so they run the scalar loops of a CPU without AVX2; the HLS
 * and colour loops keep their own dispatch (isa_* say what ran). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jpeg.h"
#include "loader_affine.h"
#include "loader_color.h"
#include "loader_hls.h"
#include "pipe_util.h"

#include <stdbool.h>

enum { FILL = 0 };
static const int SHIFT[3] = {7, -12, 25}; /* H, L, S: within MXNet's usual 36/50/50 */
/* brightness, contrast, saturation factors (gluon-cv's 0.4 jitter) and an order */
static const float ALPHA[3] = {1.3f, 0.7f, 1.35f};
static const int ORDER[3] = {DLG_MX_CONTRAST, DLG_MX_SATURATION, DLG_MX_BRIGHTNESS};

bool __real_dlg_warp_have_avx2(void);
bool __wrap_dlg_warp_have_avx2(void);

/* Every call from core/data's warp and area kernels lands here (the link
 * option --wrap): AUG_BENCH_SCALAR=1 turns their AVX2 paths off. */
bool __wrap_dlg_warp_have_avx2(void)
{
    const char *e = getenv("AUG_BENCH_SCALAR");
    return !(e && strcmp(e, "1") == 0) && __real_dlg_warp_have_avx2();
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int write_ppm(const char *dir, const char *name, const dlg_rgb8 *im)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return fprintf(stderr, "cannot write %s\n", path), 1;
    fprintf(f, "P6\n%d %d\n255\n", im->w, im->h);
    for (int y = 0; y < im->h; y++)
        fwrite(im->px + (size_t)y * im->stride, 3, (size_t)im->w, f);
    return fclose(f) != 0;
}

/* The colour jitter of a packed copy of crop (in cpx), REPS times, each
 * from the crop's bytes; prints color_us.  The copy is not timed, as MXNet
 * jitters its image in place (augment_peer.py leaves its copy out too). */
static void color(const dlg_rgb8 *crop, uint8_t *cpx, double *t, int reps)
{
    dlg_rgb8 c = {cpx, crop->w, crop->h, (size_t)crop->w * 3};
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        for (int y = 0; y < crop->h; y++)
            memcpy(cpx + (size_t)y * c.stride, crop->px + (size_t)y * crop->stride, c.stride);
        double t0 = now_us();
        dlg_mx_color_jitter(&c, ALPHA, ORDER);
        if (r >= 0)
            t[r] = now_us() - t0;
    }
    printf("color_us %.1f\n", median(t, reps));
}

/* The HLS jitter of every row of crop into hwc (floats), as the loader. */
static void jitter(const dlg_rgb8 *crop, float *hwc)
{
    for (int y = 0; y < crop->h; y++)
        dlg_hls_jitter_row(crop->px + (size_t)y * crop->stride, crop->w, SHIFT,
                           hwc + (size_t)y * crop->w * 3);
}

static void print_isa(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    printf("isa_cpu %s\n", __builtin_cpu_supports("avx2") ? "avx2" : "sse2");
#endif
    printf("isa_hls %s\nisa_warp %s\nisa_color %s\n", dlg_hls_isa(), dlg_warp_isa(),
           dlg_mx_color_isa());
    /* loader_area.c's 2 x 2 shrink: loader_area_avx2.c where the warp's
     * check says AVX2, else its scalar loop; other whole factors SSE2 */
    printf("isa_area %s\n", __wrap_dlg_warp_have_avx2() ? "avx2 (dispatched, loader_area_avx2.c)"
                                                        : "scalar C (2x2 loop; 3x, 4x SSE2)");
}

static int run(dlg_rgb8 *img, const char *dir, int reps, int crop_side)
{
    dlg_affine fwd, inv;
    int nw, nh;
    dlg_mx_affine(0.1f, 10, 1, 1, img->w, img->h, &fwd, &nw, &nh); /* shear 0.1, 10 degrees */
    dlg_affine_invert(&fwd, &inv);
    uint8_t *wpx = malloc((size_t)nw * nh * 3);
    float *hwc = malloc((size_t)crop_side * crop_side * 3 * sizeof *hwc);
    double *t = malloc((size_t)reps * sizeof *t);
    uint8_t *hpx = malloc((size_t)crop_side * crop_side * 3);
    uint8_t *cpx = malloc((size_t)crop_side * crop_side * 3);
    dlg_rgb8 warped = {wpx, nw, nh, (size_t)nw * 3};
    int cx = (img->w - crop_side) / 2, cy = (img->h - crop_side) / 2;
    dlg_rgb8 crop = {img->px + (size_t)cy * img->stride + (size_t)cx * 3, crop_side, crop_side,
                     img->stride};
    dlg_warp_rgb(img, &warped, &inv, FILL, DLG_WARP_AFFINE_BITS); /* warm-up */
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        dlg_warp_rgb(img, &warped, &inv, FILL, DLG_WARP_AFFINE_BITS);
        t[r] = now_us() - t0;
    }
    printf("warp_us %.1f\n", median(t, reps));
    jitter(&crop, hwc);
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        jitter(&crop, hwc);
        t[r] = now_us() - t0;
    }
    printf("hls_us %.1f\nwarp_size %dx%d\nhls_size %dx%d\n", median(t, reps), nw, nh, crop_side,
           crop_side);
    for (size_t i = 0; i < (size_t)crop_side * crop_side * 3; i++)
        hpx[i] = (uint8_t)hwc[i]; /* whole levels already */
    dlg_rgb8 hout = {hpx, crop_side, crop_side, (size_t)crop_side * 3};
    color(&crop, cpx, t, reps);
    dlg_rgb8 cout = {cpx, crop_side, crop_side, (size_t)crop_side * 3};
    char path[1024];
    snprintf(path, sizeof path, "%s/params.txt", dir);
    FILE *f = fopen(path, "w");
    int rc = !f;
    if (f) {
        fprintf(f, "out %d %d\nfill %d\nmatrix", nw, nh, FILL);
        for (int i = 0; i < 6; i++) /* floats, as MXNet's CV_32F matrix */
            fprintf(f, " %.9g", fwd.m[i]);
        fprintf(f, "\nshift %d %d %d\ncrop %d %d %d\n", SHIFT[0], SHIFT[1], SHIFT[2], cx, cy,
                crop_side);
        fprintf(f, "color %.9g %.9g %.9g %d %d %d\n", (double)ALPHA[0], (double)ALPHA[1],
                (double)ALPHA[2], ORDER[0], ORDER[1], ORDER[2]);
        rc = fclose(f) != 0;
    }
    rc = rc || write_ppm(dir, "in.ppm", img) || write_ppm(dir, "warp.ppm", &warped) ||
         write_ppm(dir, "hls.ppm", &hout) || write_ppm(dir, "color.ppm", &cout);
    free(wpx);
    free(hwc);
    free(t);
    free(hpx);
    free(cpx);
    return rc;
}

/* inter_method's cost and bytes: cv::resize of the decoded image to the
 * resized size and cv::warpAffine of the resized image (run's matrix), by
 * each of OpenCV's methods m (0 nearest .. 4 lanczos4): prints resize_us_m
 * and warp_us_m, writes full.ppm, resize_m.ppm, warp_m.ppm. */
static int interp(const dlg_rgb8 *full, const dlg_rgb8 *img, const char *dir, int reps)
{
    static const int code[5] = {DLG_WARP_NEAREST, DLG_WARP_RESIZE_BITS, DLG_WARP_CUBIC,
                                DLG_WARP_AREA, DLG_WARP_LANCZOS4};
    dlg_affine fwd, inv;
    int nw, nh, rc = write_ppm(dir, "full.ppm", full);
    dlg_mx_affine(0.1f, 10, 1, 1, img->w, img->h, &fwd, &nw, &nh);
    dlg_affine_invert(&fwd, &inv);
    uint8_t *rpx = malloc((size_t)img->w * img->h * 3), *wpx = malloc((size_t)nw * nh * 3);
    double *t = malloc((size_t)reps * sizeof *t);
    dlg_rgb8 rs = {rpx, img->w, img->h, (size_t)img->w * 3}, wp = {wpx, nw, nh, (size_t)nw * 3};
    for (int m = 0; m < 5 && !rc; m++) {
        int wcode = m == 1 ? DLG_WARP_AFFINE_BITS : code[m];
        for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
            double t0 = now_us();
            dlg_resize_rgb(full, &rs, code[m]);
            if (r >= 0)
                t[r] = now_us() - t0;
        }
        printf("resize_us_%d %.1f\n", m, median(t, reps));
        for (int r = -1; r < reps; r++) {
            double t0 = now_us();
            dlg_warp_rgb(img, &wp, &inv, FILL, wcode);
            if (r >= 0)
                t[r] = now_us() - t0;
        }
        printf("warp_us_%d %.1f\n", m, median(t, reps));
        char name[32];
        snprintf(name, sizeof name, "resize_%d.ppm", m);
        rc = write_ppm(dir, name, &rs);
        snprintf(name, sizeof name, "warp_%d.ppm", m);
        rc = rc || write_ppm(dir, name, &wp);
    }
    free(rpx);
    free(wpx);
    free(t);
    return rc;
}

/* INTER_AREA's exact 2 x 2 shrink: from full resized (bilinear, not
 * timed) to twice img's size, to img's size; prints half_us, writes
 * half_src.ppm and half.ppm. */
static int half(const dlg_rgb8 *full, const dlg_rgb8 *img, const char *dir, int reps)
{
    int w = img->w, h = img->h;
    uint8_t *spx = malloc((size_t)w * h * 12), *dpx = malloc((size_t)w * h * 3);
    double *t = malloc((size_t)reps * sizeof *t);
    dlg_rgb8 src = {spx, 2 * w, 2 * h, (size_t)w * 6}, dst = {dpx, w, h, (size_t)w * 3};
    dlg_resize_rgb(full, &src, DLG_WARP_RESIZE_BITS);
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        double t0 = now_us();
        dlg_resize_rgb(&src, &dst, DLG_WARP_AREA);
        if (r >= 0)
            t[r] = now_us() - t0;
    }
    printf("half_us %.1f\nhalf_size %dx%d\n", median(t, reps), 2 * w, 2 * h);
    int rc = write_ppm(dir, "half_src.ppm", &src) || write_ppm(dir, "half.ppm", &dst);
    free(spx);
    free(dpx);
    free(t);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6)
        return fprintf(stderr, "usage: aug_bench JPEG OUTDIR REPS [SIDE CROP]\n"), 2;
    int reps = atoi(argv[3]), side = argc == 6 ? atoi(argv[4]) : 342;
    int crop = argc == 6 ? atoi(argv[5]) : 299;
    if (reps < 1 || side < 1 || crop < 1 || crop > side)
        return fprintf(stderr, "aug_bench: REPS, SIDE, CROP must be positive, CROP <= SIDE\n"), 2;
    size_t len;
    uint8_t *jpg = pu_slurp(argv[1], &len);
    dlg_jpeg *j;
    dlg_jpeg_info info;
    if (!jpg || dlg_jpeg_new(&j, NULL) < 0 || dlg_jpeg_header(j, jpg, len, argv[1], &info, NULL) < 0)
        return fprintf(stderr, "cannot read %s\n", argv[1]), 1;
    size_t cap = (size_t)info.width * info.height * 3;
    uint8_t *full = malloc(cap);
    int w, h;
    if (dlg_jpeg_decode(j, jpg, len, argv[1], (dlg_jpeg_scale){1, 1}, full, cap, &w, &h, NULL) < 0)
        return fprintf(stderr, "cannot decode %s\n", argv[1]), 1;
    /* MXNet's resize: the shorter side to SIDE, by cv::resize's map */
    int nw = w < h ? side : (int)((long long)side * w / h);
    int nh = w < h ? (int)((long long)side * h / w) : side;
    uint8_t *px = malloc((size_t)nw * nh * 3);
    dlg_rgb8 src = {full, w, h, (size_t)w * 3}, img = {px, nw, nh, (size_t)nw * 3};
    dlg_resize_rgb(&src, &img, DLG_WARP_RESIZE_BITS);
    print_isa();
    int rc = run(&img, argv[2], reps, crop) || interp(&src, &img, argv[2], reps) ||
             half(&src, &img, argv[2], reps);
    free(px);
    free(full);
    free(jpg);
    dlg_jpeg_free(j);
    return rc;
}
