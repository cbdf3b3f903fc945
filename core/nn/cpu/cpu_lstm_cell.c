/* The GEMM LSTM's elementwise loops (cpu_lstm_gemm.h): gate activations
 * and their gradients per step, bf16 rounding, bias gradient sums.  The
 * cpu-bf16 backend runs on AVX-512 CPUs only, so they are compiled for
 * it; exp is a polynomial (relative error ~2e-7, far below bf16's 2^-9)
 * that vectorizes, where libm's expf/tanhf would take a call per value
 * (5 per hidden unit and step: more time than the gates' GEMM). */
#include "cpu_lstm_gemm.h"

#include <string.h>

#define CELL_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))
/* A step's gates (B x H units, ~15 us a 10^4 on one core) go parallel
 * only when large: each parallel region is a barrier, and on a loaded
 * machine a barrier waits for a descheduled thread's time slice. */
#define CELL_ROWS _Pragma("omp parallel for schedule(static) if (B * H >= CELL_PAR)")
enum { CELL_PAR = 1 << 16 };

/* e^x for x clamped to [-87, 88]: 2^n e^r, |r| <= ln2/2, degree-6 Taylor. */
static inline float fexp(float x)
{
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
    float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = x - n * 0.693145751953125f - n * 1.428606765330187e-6f;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t e = ((int32_t)n + 127) << 23;
    float s;
    memcpy(&s, &e, sizeof s);
    return p * s;
}

static inline float sigm(float x) { return 1.0f / (1.0f + fexp(-x)); }
static inline float ftanh(float x) { return 1.0f - 2.0f / (fexp(2.0f * x) + 1.0f); }

/* Round to nearest even, inline so the loops vectorize.  A NaN is
 * truncated and kept quiet: rounding carried some payloads into the
 * exponent (+Inf) or the sign (-0), so a diverged h0 or gradient read as
 * a number. */
static inline uint16_t bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t r = u + 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(((u & 0x7fffffffu) > 0x7f800000u ? u | 0x400000u : r) >> 16);
}

CELL_TARGET void cpu_lstm_cell_fwd(int64_t B, int64_t H, float *g, const float *r, const float *cp,
                                   float *c, float *y, uint16_t *hb)
{
    CELL_ROWS
    for (int64_t b = 0; b < B; b++) {
        float *gb = g + b * 4 * H, *cb = c + b * H, *yb = y + b * H;
        const float *rb = r + b * 4 * H, *cpb = cp + b * H;
        uint16_t *hbb = hb + b * H;
#pragma omp simd
        for (int64_t h = 0; h < H; h++) {
            float gi = sigm(gb[h] + rb[h]), gf = sigm(gb[H + h] + rb[H + h]);
            float gg = ftanh(gb[2 * H + h] + rb[2 * H + h]), go = sigm(gb[3 * H + h] + rb[3 * H + h]);
            gb[h] = gi;
            gb[H + h] = gf;
            gb[2 * H + h] = gg;
            gb[3 * H + h] = go;
            float cc = gf * cpb[h] + gi * gg, hh = go * ftanh(cc);
            cb[h] = cc;
            yb[h] = hh;
            hbb[h] = bf16(hh);
        }
    }
}

CELL_TARGET void cpu_lstm_cell_bwd(int64_t B, int64_t H, const float *g, const float *cp,
                                   const float *c, const float *dy, const float *dh, float *dc,
                                   uint16_t *dg)
{
    CELL_ROWS
    for (int64_t b = 0; b < B; b++) {
        const float *gb = g + b * 4 * H, *cpb = cp + b * H, *cb = c + b * H;
        const float *dyb = dy + b * H, *dhb = dh + b * H;
        float *dcb = dc + b * H;
        uint16_t *dgb = dg + b * 4 * H;
#pragma omp simd
        for (int64_t h = 0; h < H; h++) {
            float gi = gb[h], gf = gb[H + h], gg = gb[2 * H + h], go = gb[3 * H + h];
            float tc = ftanh(cb[h]), d = dyb[h] + dhb[h];
            float dcell = dcb[h] + d * go * (1 - tc * tc);
            dgb[h] = bf16(dcell * gg * gi * (1 - gi));
            dgb[H + h] = bf16(dcell * cpb[h] * gf * (1 - gf));
            dgb[2 * H + h] = bf16(dcell * gi * (1 - gg * gg));
            dgb[3 * H + h] = bf16(d * tc * go * (1 - go));
            dcb[h] = dcell * gf;
        }
    }
}

CELL_TARGET void cpu_lstm_to_bf16(const float *src, uint16_t *dst, int64_t n)
{
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++)
        dst[i] = bf16(src[i]);
}

static inline float from_bf16(uint16_t v)
{
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

enum { COLS = 256 }; /* columns per task: a row's slice stays in L1 */

CELL_TARGET void cpu_lstm_colsum(const uint16_t *m, int64_t rows, int64_t cols, float *out)
{
#pragma omp parallel for schedule(static)
    for (int64_t j0 = 0; j0 < cols; j0 += COLS) {
        int64_t n = cols - j0 < COLS ? cols - j0 : COLS;
        float *o = out + j0;
        memset(o, 0, (size_t)n * sizeof(float));
        for (int64_t r = 0; r < rows; r++) {
            const uint16_t *row = m + r * cols + j0;
#pragma omp simd
            for (int64_t j = 0; j < n; j++)
                o[j] += from_bf16(row[j]);
        }
    }
}
