/* MXNet's colour jitter and PCA lighting (see loader_color.h).  The byte
 * loops are plain float arithmetic in OpenCV's order, built twice on
 * x86-64: unfused for the baseline and with fmaf under AVX2+FMA, where
 * OpenCV's dispatched kernels fuse; the CPU picks.  The file is built with
 * -ffp-contract=off: nothing else fuses. */
#include "loader_color.h"

#include <stdbool.h>
#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define DLG_COLOR_AVX2 1
#endif

#define CHUNK 128 /* pixels a pass of the saturation step and the mean takes */

/* Round half to even (cvRound, v_round) for |x| < 2^22, then clamp: what
 * OpenCV's saturate_cast / v_pack_u do to a float on its way to a byte.
 * The clamp is on ints, which vectorises to min/max. */
static inline uint8_t sat8(float x)
{
    int r = (int)((x + 0x1.8p23f) - 0x1.8p23f);
    r = r < 0 ? 0 : r;
    return (uint8_t)(r > 255 ? 255 : r);
}

static inline int gray(const uint8_t *rgb)
{
    return (rgb[2] * 9798 + rgb[1] * 19235 + rgb[0] * 3735 + (1 << 14)) >> 15;
}

int dlg_mx_gray(const uint8_t rgb[3]) { return gray(rgb); }

/* a * v + b, rounded once (fused) or twice, as OpenCV's convertTo. */
static inline __attribute__((always_inline)) void scale_row(uint8_t *p, int n, float a, float b,
                                                            bool fused)
{
    for (int i = 0; i < n; i++) {
        float v = p[i];
        p[i] = sat8(fused ? __builtin_fmaf(v, a, b) : v * a + b);
    }
}

/* The grey of n <= CHUNK pixels (simple loops, so they vectorise). */
static inline __attribute__((always_inline)) void gray_chunk(const uint8_t *p, int n, int32_t *g)
{
    for (int i = 0; i < n; i++)
        g[i] = (p[3 * i + 2] * 9798 + p[3 * i + 1] * 19235 + p[3 * i] * 3735 + (1 << 14)) >> 15;
}

/* addWeighted(v, a, grey, b, 0): v * a + (grey * b + 0), its v_muladd
 * nesting; a chunk at a time: the greys, their terms per byte, the bytes. */
static inline __attribute__((always_inline)) void blend_row(uint8_t *p, int n, float a, float b,
                                                            bool fused)
{
    int32_t g[CHUNK];
    float t[3 * CHUNK];
    for (int at = 0; at < n; at += CHUNK, p += 3 * CHUNK) {
        int m = n - at < CHUNK ? n - at : CHUNK;
        gray_chunk(p, m, g);
        for (int i = 0; i < m; i++) {
            float gi = (float)g[i] * b + 0.0f;
            t[3 * i] = gi;
            t[3 * i + 1] = gi;
            t[3 * i + 2] = gi;
        }
        for (int i = 0; i < 3 * m; i++) {
            float v = p[i];
            p[i] = sat8(fused ? __builtin_fmaf(v, a, t[i]) : v * a + t[i]);
        }
    }
}

/* cv::mean of the grey image (an exact sum times 1/n in double), as the
 * float MXNet keeps. */
static inline __attribute__((always_inline)) float gray_mean(const dlg_rgb8 *img)
{
    int64_t sum = 0;
    int32_t g[CHUNK];
    for (int y = 0; y < img->h; y++) {
        const uint8_t *p = img->px + (size_t)y * img->stride;
        for (int at = 0; at < img->w; at += CHUNK) {
            int m = img->w - at < CHUNK ? img->w - at : CHUNK, s = 0;
            gray_chunk(p + 3 * at, m, g);
            for (int i = 0; i < m; i++) /* at most 255 * CHUNK */
                s += g[i];
            sum += s;
        }
    }
    return (float)((double)sum * (1.0 / ((double)img->w * img->h)));
}

static inline __attribute__((always_inline)) void jitter(const dlg_rgb8 *img, const float alpha[3],
                                                         const int order[3], bool fused)
{
    for (int k = 0; k < 3; k++) {
        float a = alpha[order[k]], b = 0;
        if (order[k] == DLG_MX_CONTRAST)
            b = (1.0f - a) * gray_mean(img);
        for (int y = 0; y < img->h; y++) {
            uint8_t *p = img->px + (size_t)y * img->stride;
            if (order[k] == DLG_MX_SATURATION)
                blend_row(p, img->w, a, 1.0f - a, fused);
            else
                scale_row(p, 3 * img->w, a, b, fused);
        }
    }
}

static void jitter_base(const dlg_rgb8 *img, const float alpha[3], const int order[3])
{
    jitter(img, alpha, order, false);
}

#ifdef DLG_COLOR_AVX2
__attribute__((target("avx2,fma"))) static void jitter_avx2(const dlg_rgb8 *img,
                                                            const float alpha[3],
                                                            const int order[3])
{
    jitter(img, alpha, order, true);
}

static bool have_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

void dlg_mx_color_jitter(const dlg_rgb8 *img, const float alpha[3], const int order[3])
{
#ifdef DLG_COLOR_AVX2
    if (have_avx2()) {
        jitter_avx2(img, alpha, order);
        return;
    }
#endif
    jitter_base(img, alpha, order);
}

void dlg_mx_color_order(int i, int order[3])
{
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    i = i < 0 ? 0 : i > 5 ? 5 : i;
    for (int k = 0; k < 3; k++)
        order[k] = orders[i][k];
}

/* AlexNet's (Krizhevsky et al. 2012) PCA of ImageNet's RGB pixels in
 * 0..255 units, as MXNet and fb.resnet.torch use it: eigenvalues, and
 * eigenvectors as columns (rows R, G, B). */
static const float eigval[3] = {55.46f, 4.794f, 1.148f};
static const float eigvec[3][3] = {{-0.5675f, 0.7192f, 0.4009f},
                                   {-0.5808f, -0.0045f, -0.8140f},
                                   {-0.5836f, -0.6948f, 0.4203f}};

void dlg_mx_pca_offsets(const float a[3], float off[3])
{
    for (int c = 0; c < 3; c++) { /* MXNet stores l_i e_ci as floats, then sums left to right */
        float w0 = eigval[0] * eigvec[c][0], w1 = eigval[1] * eigvec[c][1];
        float w2 = eigval[2] * eigvec[c][2];
        off[c] = w0 * a[0] + w1 * a[1] + w2 * a[2];
    }
}

void dlg_mx_pca_apply(float *rgb, int n, const float off[3])
{
    for (int i = 0; i < n; i++, rgb += 3)
        for (int c = 0; c < 3; c++) {
            int v = (int)(rgb[c] + off[c]);
            rgb[c] = (float)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

const char *dlg_mx_color_isa(void)
{
#ifdef DLG_COLOR_AVX2
    if (have_avx2())
        return "avx2+fma (dispatched)";
    return "sse2 (x86-64 baseline)";
#else
    return "compiler default";
#endif
}
