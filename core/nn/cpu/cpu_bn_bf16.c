/* Batch normalization over nhwc bf16 activations (cpu_bn_bf16.h).
 *
 * Each thread takes a contiguous range of rows (the same in both passes,
 * so a layer that fits in L2 is read from it the second time).  The first
 * pass sums per channel: rows in blocks of about 32 KiB, each block swept
 * once per 128 channels with the sums in registers, added to fp32 partials
 * and those to doubles every 256 rows; forward sums x - x[0] (a shift
 * that keeps E[x^2] - E[x]^2 from cancelling), backward dy and
 * dy * (x - mean).  The threads' doubles are combined per channel into a
 * few coefficients, so the second pass is one or two FMAs a value. */
#include "cpu_bn_bf16.h"

#include "cpu_bf16_simd.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define CB 8                          /* channel vectors one sweep keeps in registers */
#define BLOCK_BYTES 32768             /* a row block's bf16 values */
#define FLUSH_ROWS 256                /* rows summed in fp32 before they go to doubles */
#define STREAM_MIN ((int64_t)1 << 21) /* values (4 MiB) from which stores stream */

/* Per-channel coefficient arrays in the scratch, Cp floats each. */
enum { SHIFT, A, B, K1, K2, K3, NCOEF };

typedef struct bn_call {
    const cpu_bn_shape *s;
    int64_t Cp;        /* C rounded up to 16: padded lanes hold 0 */
    float *coef;       /* NCOEF x Cp */
    float *facc;       /* per thread 2 x Cp */
    double *dacc;      /* per thread 2 x Cp */
    /* the call's per-channel arrays: forward writes mean_out and
     * var_out, backward reads mean and var, writes dgamma and dbeta */
    const float *gamma, *beta, *mean, *var;
    float *mean_out, *var_out, *dgamma, *dbeta;
    float *sums; /* cpu_bf16_channel_sums: the first pass's sums only */
    const uint16_t *res; /* forward: added before the ReLU (NULL: none) */
} bn_call;

static int64_t padded(int64_t C) { return (C + 15) / 16 * 16; }

static int team_size(const cpu_bn_shape *s) { return s->threads > 0 ? s->threads : 1; }

size_t cpu_bn_bf16_scratch(const cpu_bn_shape *s)
{
    size_t Cp = (size_t)padded(s->C), t = (size_t)team_size(s);
    return Cp * sizeof(float) * NCOEF + t * Cp * 2 * (sizeof(float) + sizeof(double));
}

static bn_call bn_call_init(const cpu_bn_shape *s, void *scratch)
{
    bn_call k = {.s = s, .Cp = padded(s->C)};
    k.coef = scratch;
    k.dacc = (double *)(k.coef + NCOEF * k.Cp); /* Cp is a multiple of 16: 64-byte aligned */
    k.facc = (float *)(k.dacc + team_size(s) * 2 * k.Cp);
    for (int i = 0; i < NCOEF; i++)
        memset(k.coef + i * k.Cp + s->C, 0, (size_t)(k.Cp - s->C) * sizeof(float));
    return k;
}

/* The rows of thread t of nt. */
static void row_range(int64_t rows, int t, int nt, int64_t *r0, int64_t *r1)
{
    *r0 = rows * t / nt;
    *r1 = rows * (t + 1) / nt;
}

/* Sums over rows r0..r1 of channels c0 .. c0 + 16 nv into f1, f2: forward
 * (dy NULL) x - SHIFT and its square, backward dy (masked by the ReLU)
 * and dy * (x - SHIFT).  nv is a constant where it is inlined, and the
 * loops over it are unrolled so that the sums stay in registers (GCC -O2
 * kept them in memory: 10-15% of the time). */
BF16_TARGET static inline __attribute__((always_inline)) void
sums(const bn_call *k, const uint16_t *x, const uint16_t *dy, int64_t r0, int64_t r1, int64_t c0,
     const int nv, float *f1, float *f2)
{
    const int64_t C = k->s->C;
    const float *sh = k->coef + SHIFT * k->Cp + c0, *a = k->coef + A * k->Cp + c0,
                *b = k->coef + B * k->Cp + c0;
    __m512 s1[CB], s2[CB];
    /* only the last vector may be partial: one mask register, not nv */
    const __mmask16 tail = bf16_lanes(C - c0 - 16 * (nv - 1));
#define LANES(v) ((v) == nv - 1 ? tail : (__mmask16)0xffff)
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) {
        s1[v] = _mm512_loadu_ps(f1 + c0 + 16 * v);
        s2[v] = _mm512_loadu_ps(f2 + c0 + 16 * v);
    }
    for (int64_t r = r0; r < r1; r++) {
        const uint16_t *xr = x + r * C + c0;
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++) {
            __m512 xv = bf16_widen(LANES(v), xr + 16 * v);
            __m512 d = _mm512_sub_ps(xv, _mm512_loadu_ps(sh + 16 * v));
            if (!dy) {
                s1[v] = _mm512_add_ps(s1[v], d);
                s2[v] = _mm512_fmadd_ps(d, d, s2[v]);
                continue;
            }
            __m512 g = bf16_widen(LANES(v), dy + r * C + c0 + 16 * v);
            if (k->s->relu) {
                __m512 y = _mm512_fmadd_ps(xv, _mm512_loadu_ps(a + 16 * v), _mm512_loadu_ps(b + 16 * v));
                g = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_GT_OQ), g);
            }
            s1[v] = _mm512_add_ps(s1[v], g);
            s2[v] = _mm512_fmadd_ps(g, d, s2[v]);
        }
    }
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) {
        _mm512_storeu_ps(f1 + c0 + 16 * v, s1[v]);
        _mm512_storeu_ps(f2 + c0 + 16 * v, s2[v]);
    }
#undef LANES
}

BF16_TARGET static void sums_any(const bn_call *k, const uint16_t *x, const uint16_t *dy, int64_t r0,
                                 int64_t r1, int64_t c0, int nv, float *f1, float *f2)
{
    switch (nv) {
#define NV(n)                                      \
    case n:                                        \
        sums(k, x, dy, r0, r1, c0, n, f1, f2);     \
        break;
        NV(1) NV(2) NV(3) NV(4) NV(5) NV(6) NV(7) NV(8)
#undef NV
    }
}

/* f (2 x Cp floats) added to d (doubles) and zeroed. */
BF16_TARGET static void flush(const bn_call *k, float *f, double *d)
{
    for (int64_t i = 0; i < 2 * k->Cp; i += 16) {
        __m512 v = _mm512_loadu_ps(f + i);
        _mm512_storeu_pd(d + i, _mm512_add_pd(_mm512_loadu_pd(d + i), _mm512_cvtps_pd(_mm512_castps512_ps256(v))));
        _mm512_storeu_pd(d + i + 8,
                         _mm512_add_pd(_mm512_loadu_pd(d + i + 8), _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1))));
        _mm512_storeu_ps(f + i, _mm512_setzero_ps());
    }
}

/* Thread t's sums over its rows into its doubles (dacc + t 2 Cp). */
BF16_TARGET static void thread_sums(const bn_call *k, const uint16_t *x, const uint16_t *dy, int t,
                                    int nt)
{
    const int64_t C = k->s->C, Cp = k->Cp;
    float *f = k->facc + (int64_t)t * 2 * Cp;
    double *d = k->dacc + (int64_t)t * 2 * Cp;
    memset(f, 0, (size_t)(2 * Cp) * sizeof *f);
    memset(d, 0, (size_t)(2 * Cp) * sizeof *d);
    int64_t r0, r1, rb = BLOCK_BYTES / 2 / C, since = 0;
    row_range(k->s->rows, t, nt, &r0, &r1);
    rb = rb < 1 ? 1 : rb;
    for (int64_t lo = r0; lo < r1; lo += rb) {
        int64_t hi = lo + rb < r1 ? lo + rb : r1;
        for (int64_t c0 = 0; c0 < C; c0 += 16 * CB) {
            int64_t nv = (C - c0 + 15) / 16;
            sums_any(k, x, dy, lo, hi, c0, (int)(nv < CB ? nv : CB), f, f + Cp);
        }
        since += hi - lo;
        if (since >= FLUSH_ROWS || hi == r1) {
            flush(k, f, d);
            since = 0;
        }
    }
}

/* The threads' sums of channel c. */
static void total(const bn_call *k, int nt, int64_t c, double *s1, double *s2)
{
    *s1 = *s2 = 0;
    for (int t = 0; t < nt; t++) {
        *s1 += k->dacc[(int64_t)t * 2 * k->Cp + c];
        *s2 += k->dacc[(int64_t)t * 2 * k->Cp + k->Cp + c];
    }
}

/* The affine map forward applied, computed alike in both directions so
 * that backward's ReLU mask is forward's. */
static void affine(float gamma, float beta, float mean, float var, float eps, float *a, float *b)
{
    float rstd = 1.0f / sqrtf(var + eps);
    *a = gamma * rstd;
    *b = beta - mean * *a;
}

static void fwd_coef(const bn_call *k, int nt, int64_t c)
{
    double s1, s2, M = (double)k->s->rows;
    total(k, nt, c, &s1, &s2);
    double dm = s1 / M, v = s2 / M - dm * dm;
    float mean = (float)(k->coef[SHIFT * k->Cp + c] + dm), var = (float)(v > 0 ? v : 0);
    k->mean_out[c] = mean;
    k->var_out[c] = var;
    affine(k->gamma[c], k->beta[c], mean, var, k->s->eps, &k->coef[A * k->Cp + c], &k->coef[B * k->Cp + c]);
}

/* dx = K1 dy + K2 x + K3: gamma rstd (dy - sum dy / M - xhat sum dy xhat / M). */
static void bwd_coef(const bn_call *k, int nt, int64_t c)
{
    double sg, sgd, M = (double)k->s->rows;
    total(k, nt, c, &sg, &sgd);
    double rstd = 1.0 / sqrt((double)k->var[c] + k->s->eps), sgx = sgd * rstd;
    k->dgamma[c] = (float)sgx;
    k->dbeta[c] = (float)sg;
    double k1 = k->gamma[c] * rstd, k2 = -k1 * rstd * sgx / M;
    k->coef[K1 * k->Cp + c] = (float)k1;
    k->coef[K2 * k->Cp + c] = (float)k2;
    k->coef[K3 * k->Cp + c] = (float)(-k1 * sg / M - k2 * k->mean[c]);
}

/* out[r][c] for thread t's rows: forward relu?(A x + B), backward
 * K1 dy' + K2 x + K3 (dy' masked by the ReLU). */
BF16_TARGET static void thread_out(const bn_call *k, const uint16_t *x, const uint16_t *dy, uint16_t *out,
                                   int t, int nt)
{
    const int64_t C = k->s->C, Cp = k->Cp;
    const float *a = k->coef + A * Cp, *b = k->coef + B * Cp, *k1 = k->coef + K1 * Cp,
                *k2 = k->coef + K2 * Cp, *k3 = k->coef + K3 * Cp;
    const bool relu = k->s->relu;
    bool stream = k->s->rows * C >= STREAM_MIN && C % 16 == 0 && (uintptr_t)out % 32 == 0;
    int64_t r0, r1;
    row_range(k->s->rows, t, nt, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const uint16_t *xr = x + r * C;
        uint16_t *o = out + r * C;
        for (int64_t c = 0; c < C; c += 16) {
            __mmask16 m = bf16_lanes(C - c);
            __m512 xv = bf16_widen(m, xr + c), y;
            if (!dy) {
                y = _mm512_fmadd_ps(xv, _mm512_loadu_ps(a + c), _mm512_loadu_ps(b + c));
                if (k->res)
                    y = _mm512_add_ps(y, bf16_widen(m, k->res + r * C + c));
                if (relu)
                    y = _mm512_max_ps(y, _mm512_setzero_ps());
            } else {
                __m512 g = bf16_widen(m, dy + r * C + c);
                if (relu) {
                    __m512 z = _mm512_fmadd_ps(xv, _mm512_loadu_ps(a + c), _mm512_loadu_ps(b + c));
                    g = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_GT_OQ), g);
                }
                y = _mm512_fmadd_ps(g, _mm512_loadu_ps(k1 + c),
                                    _mm512_fmadd_ps(xv, _mm512_loadu_ps(k2 + c), _mm512_loadu_ps(k3 + c)));
            }
            __m256i h = bf16_narrow(y);
            if (stream)
                _mm256_stream_si256((__m256i *)(o + c), h);
            else
                _mm256_mask_storeu_epi16(o + c, m, h);
        }
    }
    if (stream)
        _mm_sfence(); /* visible before the end of the region */
}

/* Both passes on the team: sums, then per channel the coefficients
 * (forward with dy NULL, else backward), then out; with k->sums the sums
 * alone (out NULL). */
static void passes(const bn_call *k, const uint16_t *x, const uint16_t *dy, uint16_t *out)
{
#ifdef _OPENMP
#pragma omp parallel num_threads(team_size(k->s))
#endif
    {
#ifdef _OPENMP
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
        int t = 0, nt = 1;
#endif
        thread_sums(k, x, dy, t, nt);
#ifdef _OPENMP
#pragma omp barrier
#pragma omp for schedule(static)
#endif
        for (int64_t c = 0; c < k->s->C; c++) {
            if (k->sums) {
                double s1, s2;
                total(k, nt, c, &s1, &s2);
                k->sums[c] = (float)s1;
            } else if (dy)
                bwd_coef(k, nt, c);
            else
                fwd_coef(k, nt, c);
        }
        if (out)
            thread_out(k, x, dy, out, t, nt);
    }
}

void cpu_bn_bf16_fwd(const cpu_bn_shape *s, const uint16_t *x, uint16_t *y, const float *gamma,
                     const float *beta, const uint16_t *res, float *mean, float *var, void *scratch)
{
    bn_call k = bn_call_init(s, scratch);
    k.gamma = gamma, k.beta = beta, k.mean_out = mean, k.var_out = var, k.res = res;
    for (int64_t c = 0; c < s->C; c++) {
        uint32_t u = (uint32_t)x[c] << 16;
        memcpy(&k.coef[SHIFT * k.Cp + c], &u, sizeof u);
    }
    passes(&k, x, NULL, y);
}

void cpu_bn_bf16_bwd(const cpu_bn_shape *s, const uint16_t *x, const uint16_t *dy, uint16_t *dx,
                     const float *gamma, const float *beta, const float *mean, const float *var,
                     float *dgamma, float *dbeta, void *scratch)
{
    bn_call k = bn_call_init(s, scratch);
    k.gamma = gamma, k.mean = mean, k.var = var, k.dgamma = dgamma, k.dbeta = dbeta;
    for (int64_t c = 0; c < s->C; c++) {
        k.coef[SHIFT * k.Cp + c] = mean[c];
        affine(gamma[c], beta ? beta[c] : 0.0f, mean[c], var[c], s->eps, &k.coef[A * k.Cp + c],
               &k.coef[B * k.Cp + c]);
    }
    passes(&k, x, dy, dx);
}

void cpu_bf16_channel_sums(const cpu_bn_shape *s, const uint16_t *x, float *sums, void *scratch)
{
    bn_call k = bn_call_init(s, scratch);
    k.sums = sums;
    memset(k.coef + SHIFT * k.Cp, 0, (size_t)s->C * sizeof(float));
    passes(&k, x, NULL, NULL);
}
