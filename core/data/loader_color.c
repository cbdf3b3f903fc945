/* MXNet's colour jitter and PCA lighting (see loader_color.h).  The byte
 * loops are OpenCV's float arithmetic in its order, twice on x86-64:
 * plain unfused loops for the baseline, and AVX2 kernels with fused
 * multiply-adds where OpenCV's dispatched kernels fuse; the CPU picks.
 * The steps run on one row after another while it is in cache, so the
 * jitter reads the image twice when contrast is drawn (its mean needs the
 * image as it stands before it) and once otherwise, not up to six times.
 * The file is built with -ffp-contract=off: nothing fuses unless the code
 * asks. */
#include "loader_color.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define DLG_COLOR_AVX2 1
#include <immintrin.h>
#endif

#define CHUNK 128 /* pixels the baseline's blend and grey sum take at a time */

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

/* A row's kernels: brightness and contrast (n bytes: v * a + b), the
 * saturation blend (n pixels) and the sum of n pixels' greys. */
typedef struct {
    void (*scale)(uint8_t *p, int n, float a, float b);
    void (*blend)(uint8_t *p, int n, float a, float b);
    int64_t (*gray_sum)(const uint8_t *p, int n);
} color_ops;

/* The baseline's kernels: plain loops, unfused as OpenCV's SSE2 build.
 * a * v + b, rounded twice, as OpenCV's convertTo. */
static void scale_base(uint8_t *p, int n, float a, float b)
{
    for (int i = 0; i < n; i++)
        p[i] = sat8((float)p[i] * a + b);
}

/* The grey of n <= CHUNK pixels (simple loops, so they vectorise). */
static void gray_chunk(const uint8_t *p, int n, int32_t *g)
{
    for (int i = 0; i < n; i++)
        g[i] = (p[3 * i + 2] * 9798 + p[3 * i + 1] * 19235 + p[3 * i] * 3735 + (1 << 14)) >> 15;
}

/* addWeighted(v, a, grey, b, 0): v * a + (grey * b + 0), its v_muladd
 * nesting; a chunk at a time: the greys, their terms per byte, the bytes. */
static void blend_base(uint8_t *p, int n, float a, float b)
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
        for (int i = 0; i < 3 * m; i++)
            p[i] = sat8((float)p[i] * a + t[i]);
    }
}

static int64_t gray_sum_base(const uint8_t *p, int n)
{
    int64_t sum = 0;
    int32_t g[CHUNK];
    for (int at = 0; at < n; at += CHUNK) {
        int m = n - at < CHUNK ? n - at : CHUNK, s = 0;
        gray_chunk(p + 3 * at, m, g);
        for (int i = 0; i < m; i++) /* at most 255 * CHUNK */
            s += g[i];
        sum += s;
    }
    return sum;
}

static const color_ops ops_base = {scale_base, blend_base, gray_sum_base};

#ifdef DLG_COLOR_AVX2
/* The AVX2 kernels: OpenCV's AVX2 arithmetic (fused multiply-adds, then
 * cvtps2dq's round half to even and v_pack_u's saturating packs), 8 values
 * to a register, 32 bytes or pixels a step.  A row's last part goes
 * through a zeroed block on the stack, so nothing reads or writes past
 * the row and the tail's bytes come from the same instructions. */
#define AVX2 __attribute__((target("avx2,fma")))

/* 4 x 8 rounded values to 32 bytes in order, clamped to 0..255. */
static inline AVX2 __m256i pack32(const __m256i r[4])
{
    __m256i b = _mm256_packus_epi16(_mm256_packs_epi32(r[0], r[1]), _mm256_packs_epi32(r[2], r[3]));
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

static inline AVX2 __m256 bytes8(const uint8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

static inline AVX2 __m256i scale32(const uint8_t *p, __m256 a, __m256 b)
{
    __m256i r[4];
    for (int k = 0; k < 4; k++)
        r[k] = _mm256_cvtps_epi32(_mm256_fmadd_ps(bytes8(p + 8 * k), a, b));
    return pack32(r);
}

static AVX2 void scale_avx2(uint8_t *p, int n, float a, float b)
{
    __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
    int i = 0;
    for (; i + 32 <= n; i += 32)
        _mm256_storeu_si256((__m256i *)(p + i), scale32(p + i, va, vb));
    if (i < n) {
        uint8_t t[32] = {0};
        memcpy(t, p + i, (size_t)(n - i));
        _mm256_storeu_si256((__m256i *)t, scale32(t, va, vb));
        memcpy(p + i, t, (size_t)(n - i));
    }
}

/* The greys of the 8 pixels at p (24 bytes): byte pairs (R, G) and (B, 0)
 * widened by pshufb, weighted by pmaddwd, + 2^14, >> 15 -- gray()'s sum.
 * Lane 1 holds bytes 8..23, so its pixels start at its byte 4. */
static inline AVX2 __m256i gray8(const uint8_t *p)
{
    const __m256i rg = _mm256_setr_epi8(0, -1, 1, -1, 3, -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1,
                                        4, -1, 5, -1, 7, -1, 8, -1, 10, -1, 11, -1, 13, -1, 14, -1);
    const __m256i bz = _mm256_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1,
                                        6, -1, -1, -1, 9, -1, -1, -1, 12, -1, -1, -1, 15, -1, -1, -1);
    __m256i x = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
                                        _mm_loadu_si128((const __m128i *)(p + 8)), 1);
    __m256i s = _mm256_add_epi32(
        _mm256_madd_epi16(_mm256_shuffle_epi8(x, rg), _mm256_set1_epi32(3735 | 19235 << 16)),
        _mm256_madd_epi16(_mm256_shuffle_epi8(x, bz), _mm256_set1_epi32(9798)));
    return _mm256_srli_epi32(_mm256_add_epi32(s, _mm256_set1_epi32(1 << 14)), 15);
}

/* 32 pixels (96 bytes) of the blend: each grey times b, spread to its
 * pixel's three values by vpermps, then v * a + that, fused. */
static inline AVX2 void blend32(uint8_t *p, __m256 a, __m256 b)
{
    const __m256i spread[3] = {_mm256_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2),
                               _mm256_setr_epi32(2, 3, 3, 3, 4, 4, 4, 5),
                               _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7)};
    __m256i r[12];
    for (int j = 0; j < 4; j++) {
        __m256 g = _mm256_mul_ps(_mm256_cvtepi32_ps(gray8(p + 24 * j)), b);
        for (int k = 0; k < 3; k++)
            r[3 * j + k] = _mm256_cvtps_epi32(_mm256_fmadd_ps(
                bytes8(p + 24 * j + 8 * k), a, _mm256_permutevar8x32_ps(g, spread[k])));
    }
    for (int m = 0; m < 3; m++)
        _mm256_storeu_si256((__m256i *)(p + 32 * m), pack32(r + 4 * m));
}

static AVX2 void blend_avx2(uint8_t *p, int n, float a, float b)
{
    __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
    int i = 0;
    for (; i + 32 <= n; i += 32)
        blend32(p + 3 * i, va, vb);
    if (i < n) {
        uint8_t t[96] = {0};
        memcpy(t, p + 3 * i, 3 * (size_t)(n - i));
        blend32(t, va, vb);
        memcpy(p + 3 * i, t, 3 * (size_t)(n - i));
    }
}

static AVX2 int64_t gray_sum_avx2(const uint8_t *p, int n)
{
    int64_t sum = 0;
    int i = 0;
    while (i + 8 <= n) { /* 2^16 greys a lane at most before the int64 */
        __m256i acc = _mm256_setzero_si256();
        for (int k = 0; k < 1 << 16 && i + 8 <= n; k++, i += 8)
            acc = _mm256_add_epi32(acc, gray8(p + 3 * i));
        int32_t l[8];
        _mm256_storeu_si256((__m256i *)l, acc);
        for (int k = 0; k < 8; k++)
            sum += l[k];
    }
    for (; i < n; i++)
        sum += gray(p + 3 * i);
    return sum;
}

static const color_ops ops_avx2 = {scale_avx2, blend_avx2, gray_sum_avx2};

static bool have_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

/* The given steps on each row in turn, while it is in cache; the sum of
 * the result's greys when want_sum. */
static int64_t pass(const dlg_rgb8 *img, const float alpha[3], const float beta[3],
                    const int *steps, int n, bool want_sum, const color_ops *ops)
{
    int64_t sum = 0;
    for (int y = 0; y < img->h; y++) {
        uint8_t *p = img->px + (size_t)y * img->stride;
        for (int k = 0; k < n; k++) {
            int s = steps[k];
            if (s == DLG_MX_SATURATION)
                ops->blend(p, img->w, alpha[s], 1.0f - alpha[s]);
            else
                ops->scale(p, 3 * img->w, alpha[s], beta[s]);
        }
        if (want_sum)
            sum += ops->gray_sum(p, img->w);
    }
    return sum;
}

/* Two passes at most: the steps before contrast with the grey sum of
 * their result (cv::mean: an exact sum times 1/n in double, kept as a
 * float), then contrast and the steps after.  A factor of exactly 1 is
 * skipped: v * 1 + 0 and v * 1 + grey * 0 give v back. */
static void jitter(const dlg_rgb8 *img, const float alpha[3], const int order[3],
                   const color_ops *ops)
{
    int steps[3], n = 0, c = -1;
    for (int k = 0; k < 3; k++)
        if (alpha[order[k]] != 1.0f) {
            if (order[k] == DLG_MX_CONTRAST)
                c = n;
            steps[n++] = order[k];
        }
    float beta[3] = {0, 0, 0};
    if (c >= 0) {
        int64_t sum = pass(img, alpha, beta, steps, c, true, ops);
        float mean = (float)((double)sum * (1.0 / ((double)img->w * img->h)));
        beta[DLG_MX_CONTRAST] = (1.0f - alpha[DLG_MX_CONTRAST]) * mean;
    }
    int from = c < 0 ? 0 : c;
    pass(img, alpha, beta, steps + from, n - from, false, ops);
}

void dlg_mx_color_jitter(const dlg_rgb8 *img, const float alpha[3], const int order[3])
{
#ifdef DLG_COLOR_AVX2
    if (have_avx2()) {
        jitter(img, alpha, order, &ops_avx2);
        return;
    }
#endif
    jitter(img, alpha, order, &ops_base);
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
