/* PIL-style antialiased bilinear resample of a crop window (separable,
 * float), and the normalise/mirror/store step into a batch buffer. */
#include "loader_image.h"

#include <math.h>
#include <string.h>

int dlg_taps_max(double span, int n)
{
    double scale = span / n;
    double support = scale > 1.0 ? scale : 1.0;
    return (int)ceil(support) * 2 + 1;
}

void dlg_taps_fill(dlg_taps *t, double x0, double span, int n, int insize)
{
    dlg_taps_fill_within(t, x0, span, n, 0, insize);
}

void dlg_taps_fill_within(dlg_taps *t, double x0, double span, int n, int lo_bound, int hi_bound)
{
    double scale = span / n;
    double fs = scale > 1.0 ? scale : 1.0;
    double inv = 1.0 / fs;
    t->n = n;
    for (int j = 0; j < n; j++) {
        double c = x0 + (j + 0.5) * scale;
        int lo = (int)floor(c - fs + 0.5), hi = (int)floor(c + fs + 0.5);
        if (lo < lo_bound)
            lo = lo_bound;
        if (hi > hi_bound)
            hi = hi_bound;
        if (hi <= lo) { /* a window at the very edge: take the nearest pixel */
            lo = lo >= hi_bound ? hi_bound - 1 : lo;
            hi = lo + 1;
        }
        if (hi - lo > t->maxk)
            hi = lo + t->maxk;
        float *w = t->w + (size_t)j * t->maxk;
        double total = 0;
        for (int i = lo; i < hi; i++) {
            double d = fabs((i + 0.5 - c) * inv);
            double v = d < 1.0 ? 1.0 - d : 0.0;
            w[i - lo] = (float)v;
            total += v;
        }
        if (total <= 0) { /* only possible for a degenerate window */
            for (int i = lo; i < hi; i++)
                w[i - lo] = 1.0f / (float)(hi - lo);
        } else {
            for (int i = lo; i < hi; i++)
                w[i - lo] = (float)(w[i - lo] / total);
        }
        t->first[j] = lo;
        t->count[j] = hi - lo;
    }
}

int dlg_taps_rows(const dlg_taps *ty)
{
    int last = 0;
    for (int j = 0; j < ty->n; j++)
        if (ty->first[j] + ty->count[j] > last)
            last = ty->first[j] + ty->count[j];
    return last - ty->first[0];
}

static void resample_row(const uint8_t *src, const dlg_taps *tx, float *dst)
{
    if (tx->maxk == 3) { /* upscaling or mild downscaling: 2-3 taps */
        for (int j = 0; j < tx->n; j++) {
            const uint8_t *p = src + (size_t)tx->first[j] * 3;
            const float *w = tx->w + (size_t)j * 3;
            float w2 = tx->count[j] > 2 ? w[2] : 0.0f;
            const uint8_t *p2 = tx->count[j] > 2 ? p + 6 : p;
            if (tx->count[j] < 2) { /* one tap at an edge */
                dst[3 * j] = w[0] * p[0];
                dst[3 * j + 1] = w[0] * p[1];
                dst[3 * j + 2] = w[0] * p[2];
                continue;
            }
            for (int c = 0; c < 3; c++)
                dst[3 * j + c] = w[0] * p[c] + w[1] * p[3 + c] + w2 * p2[c];
        }
        return;
    }
    for (int j = 0; j < tx->n; j++) {
        const uint8_t *p = src + (size_t)tx->first[j] * 3;
        const float *w = tx->w + (size_t)j * tx->maxk;
        float r = 0, g = 0, b = 0;
        for (int i = 0; i < tx->count[j]; i++) {
            r += w[i] * p[3 * i];
            g += w[i] * p[3 * i + 1];
            b += w[i] * p[3 * i + 2];
        }
        dst[3 * j] = r;
        dst[3 * j + 1] = g;
        dst[3 * j + 2] = b;
    }
}

void dlg_resample_rgb(const uint8_t *src, size_t stride, const dlg_taps *tx, const dlg_taps *ty,
                      float *tmp, float *out)
{
    int base = ty->first[0], rows = dlg_taps_rows(ty);
    size_t rw = (size_t)tx->n * 3;
    for (int r = 0; r < rows; r++)
        resample_row(src + (size_t)(base + r) * stride, tx, tmp + (size_t)r * rw);
    for (int j = 0; j < ty->n; j++) {
        float *o = out + (size_t)j * rw;
        const float *w = ty->w + (size_t)j * ty->maxk;
        const float *t0 = tmp + (size_t)(ty->first[j] - base) * rw;
        for (size_t x = 0; x < rw; x++)
            o[x] = w[0] * t0[x];
        for (int i = 1; i < ty->count[j]; i++) {
            const float *ti = t0 + (size_t)i * rw;
            float wi = w[i];
            for (size_t x = 0; x < rw; x++)
                o[x] += wi * ti[x];
        }
    }
}

/* inline in the store loop: a call per element costs more than the
 * channel loop around it */
static inline uint16_t half_of(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xff) /* inf / nan */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) { /* subnormal half (or zero) */
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        unsigned shift = (unsigned)(14 - e);
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = (uint32_t)e << 10 | man >> 13, rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++; /* may carry into the exponent: that is the correct rounding */
    return (uint16_t)(sign | h);
}

uint16_t dlg_fp16(float f) { return half_of(f); }

void dlg_ld_store(const dlg_loader_config *cfg, const float *hwc, int s, bool mirror,
                  void *batch, int index)
{
    /* per source (RGB) channel c: its output channel oc[c] (bgr reverses
     * them here, in the one pass that writes the batch) and coefficients */
    float a[3], b[3];
    size_t oc[3];
    for (int c = 0; c < 3; c++) {
        oc[c] = (size_t)(cfg->order == DLG_BGR ? 2 - c : c);
        a[c] = (float)cfg->pixel_range / (255.0f * cfg->std[oc[c]]);
        b[c] = -cfg->mean[oc[c]] / cfg->std[oc[c]];
    }
    size_t plane = (size_t)s * s, img = plane * 3;
    if (cfg->dtype == DLG_LOADER_FP32 && cfg->layout == DLG_LAYOUT_NCHW) {
        /* the common case, without per-element branches */
        float *o = (float *)batch + img * (size_t)index;
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < s; y++) {
                const float *px = hwc + (size_t)y * s * 3 + c;
                float *dst = o + oc[c] * plane + (size_t)y * s;
                if (mirror)
                    for (int x = 0; x < s; x++)
                        dst[s - 1 - x] = px[3 * x] * a[c] + b[c];
                else
                    for (int x = 0; x < s; x++)
                        dst[x] = px[3 * x] * a[c] + b[c];
            }
        return;
    }
    bool f16 = cfg->dtype == DLG_LOADER_FP16, nchw = cfg->layout == DLG_LAYOUT_NCHW;
    size_t off[3]; /* of each source channel's value from a pixel's first */
    for (int c = 0; c < 3; c++)
        off[c] = oc[c] * (nchw ? plane : 1);
    float *o32 = (float *)batch + (f16 ? 0 : img * (size_t)index);
    uint16_t *o16 = (uint16_t *)batch + (f16 ? img * (size_t)index : 0);
    for (int y = 0; y < s; y++) {
        const float *row = hwc + (size_t)y * s * 3;
        for (int x = 0; x < s; x++) {
            const float *px = row + (size_t)(mirror ? s - 1 - x : x) * 3;
            size_t at0 = nchw ? (size_t)y * s + x : ((size_t)y * s + x) * 3;
            for (int c = 0; c < 3; c++) {
                float v = px[c] * a[c] + b[c];
                size_t at = at0 + off[c];
                if (f16)
                    o16[at] = half_of(v);
                else
                    o32[at] = v;
            }
        }
    }
}
