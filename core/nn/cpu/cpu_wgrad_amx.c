/* See cpu_wgrad_amx.h.  Per thread, over its share of output rows, a chunk
 * of R rows at a time (R x OWp pixels, OWp = OW rounded up to 32):
 *   A (taps x pixels): tap k = (c, kh, kw) over each row's pixels, copied
 *     from the plane of channel c and stride phase kw % S (xs, built once
 *     per call), which holds input row ih's columns kw % S, kw % S + S, ...
 *     (zero where the padding is), so the tap is a contiguous read;
 *   B (pixel pairs x oc x 2): dy's rows two pixels interleaved, as the
 *     tiles want the reduction's pairs; pixels past OW are zero in B, so
 *     whatever A holds there adds nothing;
 *   C^T (taps x oc, fp32) += A . B by 16x16 tiles, 2x2 at a time.
 * The threads' C^T are summed at the end into OIHW (tap k = (c*KH + kh)*KW
 * + kw is already that order) and the bias (tap K: ones). */
#include "cpu_wgrad_amx.h"

#include <cpuid.h>
#include <immintrin.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18
#define CHUNK_PIXELS 512 /* A: up to 512 x 512 bf16, in L2 with B (1024: 5% slower) */
#define TARGET __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16")))

typedef struct dims {
    int64_t taps, kp;   /* C*KH*KW + 1, rounded up to 32 */
    int64_t owp, rows;  /* OW rounded up to 32; output rows per chunk */
    int64_t ch;         /* pixels per chunk (A's row length) */
    int64_t jw;         /* a phase plane's row: OW + (KW - 1) / S, rounded up */
    size_t xs, a, b, c; /* bytes: the planes; per thread A, B, C^T */
} dims;

static int64_t up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

static dims dims_of(const cpu_wgrad_shape *s)
{
    dims d;
    d.taps = s->C * s->KH * s->KW + 1;
    d.kp = up(d.taps, 32);
    d.owp = up(s->OW, 32);
    d.rows = CHUNK_PIXELS / d.owp > 0 ? CHUNK_PIXELS / d.owp : 1;
    d.ch = d.rows * d.owp;
    d.jw = up(s->OW + (s->KW - 1) / s->S, 32);
    d.xs = (size_t)(s->N * s->C * s->S * s->H * d.jw) * 2;
    d.a = (size_t)(d.kp * d.ch) * 2;
    d.b = (size_t)(d.ch * s->OC) * 2;
    d.c = (size_t)(d.kp * s->OC) * 4;
    return d;
}

bool cpu_wgrad_amx_fits(const cpu_wgrad_shape *s)
{
    return s->SW == s->S && s->PW == s->P && s->C * s->KH * s->KW + 1 <= 512 && s->OC % 32 == 0 && s->OC <= 256 && s->S >= 1 && s->S <= 4 &&
           s->P >= 0 && s->P < s->KH && s->P < s->KW && s->threads >= 1;
}

bool cpu_wgrad_amx_supported(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    bool tiles = (d >> 22 & 1) && (d >> 24 & 1); /* AMX-BF16, AMX-TILE */
    bool cvt = __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1); /* AVX512_BF16 */
    return tiles && cvt && __builtin_cpu_supports("avx512bw") &&
           syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

size_t cpu_wgrad_amx_scratch(const cpu_wgrad_shape *s)
{
    dims d = dims_of(s);
    return up((int64_t)d.xs, 64) + (size_t)s->threads * up((int64_t)(d.a + d.b + d.c), 64);
}

/* The phase planes of input row (n, ih): xs[((n*C + c)*S + ph)*H + ih][j]
 * = x[n][ih][j*S + ph - P][c], zero outside the row.  16 lanes a gather;
 * from bf16, each reads a value and the one after it, so the tensor's
 * last row, whose last read would pass its end, goes value by value. */
TARGET static void planes_row(const cpu_wgrad_shape *s, const dims *d, const void *x, uint16_t *xs, int64_t n,
                              int64_t ih)
{
    const uint16_t *row = (const uint16_t *)x + (n * s->H + ih) * s->W * s->C;
    bool last = n == s->N - 1 && ih == s->H - 1;
    for (int64_t c = 0; c < s->C; c++)
        for (int ph = 0; ph < s->S; ph++) {
            uint16_t *out = xs + (((n * s->C + c) * s->S + ph) * s->H + ih) * d->jw;
            for (int64_t j0 = 0; j0 < d->jw; j0 += 16) {
                __m512i jv = _mm512_add_epi32(_mm512_set1_epi32((int)j0),
                                              _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
                __m512i iw = _mm512_sub_epi32(_mm512_add_epi32(_mm512_mullo_epi32(jv, _mm512_set1_epi32(s->S)),
                                                               _mm512_set1_epi32(ph)),
                                              _mm512_set1_epi32(s->P));
                __mmask16 ok = _mm512_cmpge_epi32_mask(iw, _mm512_setzero_si512()) &
                               _mm512_cmplt_epi32_mask(iw, _mm512_set1_epi32((int)s->W));
                if (s->f32_nchw) { /* x[n][c][ih][iw], rounded to nearest even */
                    const float *plane = (const float *)x + ((n * s->C + c) * s->H + ih) * s->W;
                    __m512 f = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok, iw, plane, 4);
                    _mm256_storeu_si256((__m256i *)(out + j0), (__m256i)_mm512_cvtneps_pbh(f));
                    continue;
                }
                __m512i at = _mm512_add_epi32(_mm512_mullo_epi32(iw, _mm512_set1_epi32((int)s->C)),
                                              _mm512_set1_epi32((int)c));
                __m512i v;
                if (!last) {
                    v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), ok, at, row, 2);
                } else {
                    int32_t idx[16], val[16];
                    _mm512_storeu_si512(idx, at);
                    for (int l = 0; l < 16; l++)
                        val[l] = ok >> l & 1 ? row[idx[l]] : 0;
                    v = _mm512_loadu_si512(val);
                }
                _mm256_storeu_si256((__m256i *)(out + j0), _mm512_cvtepi32_epi16(v));
            }
        }
}

/* A's columns [r*OWp, (r+1)*OWp) for output row q = n*OH + oh. */
TARGET static void taps_row(const cpu_wgrad_shape *s, const dims *d, const uint16_t *xs, uint16_t *a, int64_t r,
                            int64_t q)
{
    int64_t n = q / s->OH, oh = q % s->OH;
    for (int64_t c = 0; c < s->C; c++)
        for (int kh = 0; kh < s->KH; kh++) {
            int64_t ih = oh * s->S + kh - s->P;
            bool in = ih >= 0 && ih < s->H;
            for (int kw = 0; kw < s->KW; kw++) {
                int64_t k = (c * s->KH + kh) * s->KW + kw;
                uint16_t *dst = a + k * d->ch + r * d->owp;
                const uint16_t *src =
                    in ? xs + (((n * s->C + c) * s->S + kw % s->S) * s->H + ih) * d->jw + kw / s->S : NULL;
                for (int64_t o = 0; o < d->owp; o += 32) {
                    int64_t left = s->OW - o;
                    __mmask32 m = !in || left <= 0 ? 0 : left >= 32 ? ~0u : (1u << left) - 1;
                    _mm512_storeu_si512(dst + o, _mm512_maskz_loadu_epi16(m, in ? src + o : dst));
                }
            }
        }
    uint16_t *ones = a + (d->taps - 1) * d->ch + r * d->owp; /* the bias tap */
    for (int64_t o = 0; o < d->owp; o += 32)
        _mm512_storeu_si512(ones + o, _mm512_set1_epi16(0x3f80));
}

/* B's pairs [r*OWp/2, (r+1)*OWp/2) for output row q: (dy[ow][oc],
 * dy[ow+1][oc]) side by side, zero past OW. */
TARGET static void pairs_row(const cpu_wgrad_shape *s, const dims *d, const uint16_t *dy, uint16_t *b, int64_t r,
                             int64_t q)
{
    static const uint16_t order[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                       8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i lo = _mm512_loadu_si512(order), hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    const uint16_t *row = dy + q * s->OW * s->OC;
    for (int64_t ow = 0; ow < d->owp; ow += 2) {
        uint16_t *out = b + (r * d->owp + ow) * s->OC; /* pair (r*OWp + ow)/2, OC x 2 values */
        for (int64_t o = 0; o < s->OC; o += 32) {
            __m512i u = ow < s->OW ? _mm512_loadu_si512(row + ow * s->OC + o) : _mm512_setzero_si512();
            __m512i v = ow + 1 < s->OW ? _mm512_loadu_si512(row + (ow + 1) * s->OC + o) : _mm512_setzero_si512();
            _mm512_storeu_si512(out + 2 * o, _mm512_permutex2var_epi16(u, lo, v));
            _mm512_storeu_si512(out + 2 * o + 32, _mm512_permutex2var_epi16(u, hi, v));
        }
    }
}

typedef struct tilecfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tilecfg;

/* C^T (kp x OC, fp32) += A (kp x px, row stride ch) . B (px/2 pairs). */
TARGET static void tiles(const cpu_wgrad_shape *s, const dims *d, const uint16_t *a, const uint16_t *b, float *ct,
                         int64_t px)
{
    size_t sa = (size_t)d->ch * 2, sb = (size_t)s->OC * 4, sc = (size_t)s->OC * 4;
    for (int64_t m = 0; m < d->kp; m += 32)
        for (int64_t n = 0; n < s->OC; n += 32) {
            float *c0 = ct + m * s->OC + n, *c1 = c0 + 16 * s->OC;
            _tile_loadd(0, c0, sc);
            _tile_loadd(1, c0 + 16, sc);
            _tile_loadd(2, c1, sc);
            _tile_loadd(3, c1 + 16, sc);
            for (int64_t p = 0; p < px; p += 32) {
                const uint16_t *a0 = a + m * d->ch + p, *b0 = b + (p / 2 * s->OC + n) * 2;
                _tile_loadd(4, a0, sa);
                _tile_loadd(5, a0 + 16 * d->ch, sa);
                _tile_loadd(6, b0, sb);
                _tile_loadd(7, b0 + 32, sb);
                _tile_dpbf16ps(0, 4, 6);
                _tile_dpbf16ps(1, 4, 7);
                _tile_dpbf16ps(2, 5, 6);
                _tile_dpbf16ps(3, 5, 7);
            }
            _tile_stored(0, c0, sc);
            _tile_stored(1, c0 + 16, sc);
            _tile_stored(2, c1, sc);
            _tile_stored(3, c1 + 16, sc);
        }
}

/* Thread t of nt: its rows, chunk by chunk, into its C^T. */
TARGET static void share(const cpu_wgrad_shape *s, const dims *d, const uint16_t *xs, const uint16_t *dy, char *mine,
                         int t, int nt)
{
    uint16_t *a = (uint16_t *)mine, *b = (uint16_t *)(mine + d->a);
    float *ct = (float *)(mine + d->a + d->b);
    tilecfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int i = 0; i < 8; i++) {
        cfg.rows[i] = 16;
        cfg.colsb[i] = 64;
    }
    _tile_loadconfig(&cfg);
    memset(ct, 0, d->c);
    /* the taps past the bias multiply zero... or B's pixels past OW do;
     * either way they must hold numbers */
    memset(a + d->taps * d->ch, 0, (size_t)((d->kp - d->taps) * d->ch) * 2);
    int64_t q0 = s->N * s->OH * t / nt, q1 = s->N * s->OH * (t + 1) / nt;
    for (int64_t q = q0; q < q1; q += d->rows) {
        int64_t rows = q1 - q < d->rows ? q1 - q : d->rows;
        for (int64_t r = 0; r < rows; r++) {
            taps_row(s, d, xs, a, r, q + r);
            pairs_row(s, d, dy, b, r, q + r);
        }
        tiles(s, d, a, b, ct, rows * d->owp);
    }
    _tile_release();
}

void cpu_wgrad_amx(const cpu_wgrad_shape *s, const void *x, const uint16_t *dy, float *dw, float *db,
                   void *scratch)
{
    dims d = dims_of(s);
    uint16_t *xs = scratch;
    char *threads = (char *)scratch + up((int64_t)d.xs, 64);
    size_t per = (size_t)up((int64_t)(d.a + d.b + d.c), 64);
    int nt = s->threads;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
#ifdef _OPENMP
        int t = omp_get_thread_num(), got = omp_get_num_threads();
#else
        int t = 0, got = 1;
#endif
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t r = 0; r < s->N * s->H; r++)
            planes_row(s, &d, x, xs, r / s->H, r % s->H);
        /* got < nt (nested, or a smaller team): the team's threads take
         * the shares of those missing */
        for (int k = t; k < nt; k += got)
            share(s, &d, xs, dy, threads + (size_t)k * per, k, nt);
    }
    int64_t K = d.taps - 1;
    for (int64_t o = 0; o < s->OC; o++) {
        for (int64_t k = 0; k <= K; k++) {
            double v = 0;
            for (int i = 0; i < nt; i++)
                v += ((const float *)(threads + (size_t)i * per + d.a + d.b))[k * s->OC + o];
            if (k < K)
                dw[o * K + k] = (float)v;
            else if (db)
                db[o] = (float)v;
        }
    }
}
