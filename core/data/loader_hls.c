/* RGB <-> HLS (see loader_hls.h), the textbook hexcone formulas in
 * OpenCV's units.  Branches are selects, so the row loop can vectorise. */
#include "loader_hls.h"

#include <float.h>
#include <stdbool.h>
#include <stddef.h>

static inline float maxf(float a, float b) { return a > b ? a : b; }
static inline float minf(float a, float b) { return a < b ? a : b; }
static inline float clampf(float v, float lo, float hi) { return minf(maxf(v, lo), hi); }

/* The conversions, inlined into the row loop so that it vectorises: every
 * choice is arithmetic on 0/1 masks (float compares), not a branch. */
static inline float mask(bool c) { return c ? 1.0f : 0.0f; }

static inline __attribute__((always_inline)) void to_hls(float r, float g, float b, float hls[3])
{
    r *= 1.0f / 255;
    g *= 1.0f / 255;
    b *= 1.0f / 255;
    float vmax = maxf(maxf(r, g), b), vmin = minf(minf(r, g), b);
    float diff = vmax - vmin, sum = vmax + vmin, l = sum * 0.5f;
    float grey = mask(diff <= FLT_EPSILON), dark = mask(l < 0.5f);
    /* grey: the denominators get 1, so nothing divides by zero */
    float s = diff / (dark * sum + (1 - dark) * (2.0f - sum) + grey);
    /* degrees: the sector of the largest channel, then the others' difference */
    float is_r = mask(vmax == r), is_g = (1 - is_r) * mask(vmax == g), is_b = 1 - is_r - is_g;
    float num = is_r * (g - b) + is_g * (b - r) + is_b * (r - g);
    float h = 120.0f * is_g + 240.0f * is_b + 60.0f * num / (diff + grey);
    h += 360.0f * mask(h < 0);
    hls[0] = (1 - grey) * h * 0.5f;
    hls[1] = l * 255.0f;
    hls[2] = (1 - grey) * s * 255.0f;
}

/* One channel from the hue t (degrees, within a turn of [0, 360)) between
 * p and q: rising over [0, 60), q to 180, falling to 240, then p. */
static inline __attribute__((always_inline)) float hue_ch(float p, float q, float t)
{
    t += 360.0f * mask(t < 0) - 360.0f * mask(t >= 360.0f);
    return p + (q - p) * clampf(minf(t, 240.0f - t) * (1.0f / 60), 0, 1);
}

static inline __attribute__((always_inline)) void to_rgb(float h, float l, float s, float rgb[3])
{
    float deg = h * 2.0f;
    deg -= 360.0f * mask(deg >= 360.0f); /* H = 180 is red again */
    l *= 1.0f / 255;
    s *= 1.0f / 255;
    float light = mask(l <= 0.5f);
    float q = light * (l * (1.0f + s)) + (1 - light) * (l + s - l * s), p = 2.0f * l - q;
    rgb[0] = hue_ch(p, q, deg + 120.0f) * 255.0f;
    rgb[1] = hue_ch(p, q, deg) * 255.0f;
    rgb[2] = hue_ch(p, q, deg - 120.0f) * 255.0f;
}

void dlg_rgb_to_hls(float r, float g, float b, float hls[3]) { to_hls(r, g, b, hls); }
void dlg_hls_to_rgb(float h, float l, float s, float rgb[3]) { to_rgb(h, l, s, rgb); }

/* Pixels per pass of the row loop: channels are taken apart into these
 * arrays so that the conversions run on contiguous floats. */
#define CHUNK 256

/* n <= CHUNK pixels in place: RGB -> HLS, shift and clamp, -> RGB. */
static void jitter_planes(float *restrict r, float *restrict g, float *restrict b, int n,
                          float dh, float dl, float ds)
{
    for (int i = 0; i < n; i++) {
        float hls[3], o[3];
        to_hls(r[i], g[i], b[i], hls);
        to_rgb(clampf(hls[0] + dh, 0, 180), clampf(hls[1] + dl, 0, 255),
               clampf(hls[2] + ds, 0, 255), o);
        r[i] = o[0];
        g[i] = o[1];
        b[i] = o[2];
    }
}

void dlg_hls_jitter_row(const uint8_t *rgb, int n, const int shift[3], float *out)
{
    float r[CHUNK], g[CHUNK], b[CHUNK];
    for (int at = 0; at < n; at += CHUNK) {
        int m = n - at < CHUNK ? n - at : CHUNK;
        const uint8_t *in = rgb + (size_t)at * 3;
        for (int i = 0; i < m; i++) {
            r[i] = in[3 * i];
            g[i] = in[3 * i + 1];
            b[i] = in[3 * i + 2];
        }
        jitter_planes(r, g, b, m, (float)shift[0], (float)shift[1], (float)shift[2]);
        float *o = out + (size_t)at * 3;
        for (int i = 0; i < m; i++) { /* whole levels, as MXNet's bytes */
            o[3 * i] = (float)(int)(clampf(r[i], 0, 255) + 0.5f);
            o[3 * i + 1] = (float)(int)(clampf(g[i], 0, 255) + 0.5f);
            o[3 * i + 2] = (float)(int)(clampf(b[i], 0, 255) + 0.5f);
        }
    }
}
