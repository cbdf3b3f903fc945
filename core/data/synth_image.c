/* Photo-like synthetic images: everything is a pure function of (seed,
 * index, label), so the same seed gives the same pixels on any machine and
 * any thread count.  Cheap on purpose (separable background, shapes drawn
 * in their bounding boxes only): mkdata must write thousands per second. */
#include "synth.h"

#include <math.h>
#include <dlgauge/splitmix.h>

typedef struct rng {
    uint64_t s;
} rng;

static rng rng_at(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t k = dlg_splitmix_mix(seed ^ 0x696d616765ULL);
    k ^= dlg_splitmix_mix(a + DLG_SPLITMIX_GAMMA);
    rng r = {dlg_splitmix_mix(k ^ b) | 1};
    return r;
}

static uint64_t next(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}

static double unif(rng *r) { return (double)(next(r) >> 11) * 0x1.0p-53; }

static double normal(rng *r)
{
    double u = unif(r), v = unif(r);
    return sqrt(-2.0 * log(u > 1e-300 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

/* Aspect ratios (w/h) of photos, roughly as common in ImageNet. */
static const struct {
    double ar, p;
} aspects[] = {{4.0 / 3, 0.50}, {3.0 / 2, 0.10}, {1.0, 0.12}, {3.0 / 4, 0.18},
               {16.0 / 9, 0.05}, {2.0 / 3, 0.05}};

void dlg_synth_image_size(uint64_t seed, uint64_t index, int *w, int *h)
{
    rng r = rng_at(seed, index, 1);
    double u = unif(&r), ar = aspects[0].ar;
    for (size_t i = 0; i < sizeof aspects / sizeof aspects[0]; i++) {
        if (u < aspects[i].p) {
            ar = aspects[i].ar;
            break;
        }
        u -= aspects[i].p;
    }
    double s = 358.0 * exp(0.25 * normal(&r)); /* geometric mean side */
    int ww = (int)lround(s * sqrt(ar)), hh = (int)lround(s / sqrt(ar));
    *w = ww < DLG_SYNTH_MIN_SIDE ? DLG_SYNTH_MIN_SIDE : ww > DLG_SYNTH_MAX_SIDE ? DLG_SYNTH_MAX_SIDE : ww;
    *h = hh < DLG_SYNTH_MIN_SIDE ? DLG_SYNTH_MIN_SIDE : hh > DLG_SYNTH_MAX_SIDE ? DLG_SYNTH_MAX_SIDE : hh;
}

static uint8_t clamp8(double v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)(v + 0.5); }

/* Background: two colours blended along a low-frequency cosine wave
 * (separable: cos(a+b) = cos a cos b - sin a sin b) under soft lighting. */
static void background(rng *r, rng *cls, int w, int h, uint8_t *rgb, float *tab)
{
    double a[3], b[3];
    for (int c = 0; c < 3; c++) {
        a[c] = 40 + 170 * unif(cls) + 30 * normal(r);
        b[c] = 40 + 170 * unif(cls) + 30 * normal(r);
    }
    double theta = 6.283185307179586 * unif(r), cycles = 0.5 + 1.5 * unif(r);
    double k = 6.283185307179586 * cycles / (w > h ? w : h);
    double kx = k * cos(theta), ky = k * sin(theta), ph = 6.283185307179586 * unif(r);
    float *cx = tab, *sx = tab + w, *cy = tab + 2 * w, *sy = tab + 2 * w + h;
    for (int x = 0; x < w; x++) {
        cx[x] = (float)cos(kx * x + ph);
        sx[x] = (float)sin(kx * x + ph);
    }
    for (int y = 0; y < h; y++) {
        cy[y] = (float)cos(ky * y);
        sy[y] = (float)sin(ky * y);
    }
    double lx = w * unif(r), ly = h * unif(r), lr2 = 1.0 / ((double)w * w + (double)h * h);
    for (int y = 0; y < h; y++) {
        uint8_t *row = rgb + (size_t)y * w * 3;
        double dy2 = (y - ly) * (y - ly);
        for (int x = 0; x < w; x++) {
            double t = 0.5 + 0.5 * (cx[x] * cy[y] - sx[x] * sy[y]);
            double light = 1.15 - 0.6 * ((x - lx) * (x - lx) + dy2) * lr2;
            for (int c = 0; c < 3; c++)
                row[3 * x + c] = clamp8((a[c] + (b[c] - a[c]) * t) * light);
        }
    }
}

/* Class shapes with a soft (anti-aliased) edge; shape kind by class. */
static void shapes(rng *r, rng *cls, int label, int w, int h, uint8_t *rgb)
{
    double col[3];
    for (int c = 0; c < 3; c++)
        col[c] = 255 * unif(cls);
    int kind = label % 4, n = 2 + (int)(next(r) % 3);
    int m = w < h ? w : h;
    for (int s = 0; s < n; s++) {
        double rad = m * (0.08 + 0.22 * unif(r)), ccx = w * unif(r), ccy = h * unif(r);
        double asp = 0.6 + 0.8 * unif(r), shade = 0.75 + 0.5 * unif(r);
        int x0 = (int)(ccx - rad * 1.6) - 2, x1 = (int)(ccx + rad * 1.6) + 2;
        int y0 = (int)(ccy - rad * 1.6) - 2, y1 = (int)(ccy + rad * 1.6) + 2;
        x0 = x0 < 0 ? 0 : x0;
        y0 = y0 < 0 ? 0 : y0;
        x1 = x1 > w ? w : x1;
        y1 = y1 > h ? h : y1;
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) {
                double dx = x - ccx, dy = (y - ccy) * asp, d;
                if (kind == 0)
                    d = sqrt(dx * dx + dy * dy) - rad; /* disc */
                else if (kind == 1)
                    d = fmax(fabs(dx), fabs(dy)) - rad; /* box */
                else if (kind == 2)
                    d = fmax(fabs(dx) * 0.866 + dy * 0.5, -dy) - rad * 0.5; /* triangle */
                else
                    d = fabs(dx + dy) - rad * 0.3; /* bar */
                double al = 0.5 - d / 1.5;
                if (al <= 0)
                    continue;
                al = al > 1 ? 1 : al;
                uint8_t *p = rgb + ((size_t)y * w + x) * 3;
                double lit = shade * (1.0 - 0.25 * dy / (rad + 1));
                for (int c = 0; c < 3; c++)
                    p[c] = clamp8(p[c] + (col[c] * lit - p[c]) * al);
            }
    }
}

/* One row of the texture grid: gw values, drawn in row-major order. */
static void grid_row(rng *r, float *row, int gw, double amp)
{
    for (int i = 0; i < gw; i++)
        row[i] = (float)((unif(r) * 2 - 1) * amp);
}

/* Surface texture: value noise on a coarse grid, bilinearly interpolated,
 * so there is mid-frequency detail as in real photos (not just grain).
 * The grid is drawn row by row into two rows kept on the stack (a cell is
 * at least 2 pixels, so a row has at most DLG_SYNTH_MAX_SIDE / 2 + 2
 * values): no allocation, which could fail and change the pixels.  Every
 * value of the gw x gh grid is drawn, used or not, so the noise after it
 * gets the same draws as ever. */
static void texture(rng *r, int w, int h, uint8_t *rgb, int cell, double amp)
{
    int gw = w / cell + 2, gh = h / cell + 2;
    float rows[2][DLG_SYNTH_MAX_SIDE / 2 + 2];
    int drawn = 0; /* grid rows drawn so far; row k lives in rows[k % 2] */
    float inv = 1.0f / (float)cell;
    for (int y = 0; y < h; y++) {
        int gy = y / cell;
        for (; drawn < gy + 2; drawn++)
            grid_row(r, rows[drawn % 2], gw, amp);
        float fy = (float)(y - gy * cell) * inv;
        const float *g0 = rows[gy % 2], *g1 = rows[(gy + 1) % 2];
        uint8_t *row = rgb + (size_t)y * w * 3;
        for (int x = 0; x < w; x++) {
            int gx = x / cell;
            float fx = (float)(x - gx * cell) * inv;
            float top = g0[gx] + (g0[gx + 1] - g0[gx]) * fx;
            float bot = g1[gx] + (g1[gx + 1] - g1[gx]) * fx;
            int d = (int)lrintf(top + (bot - top) * fy);
            for (int c = 0; c < 3; c++) {
                int v = row[3 * x + c] + d;
                row[3 * x + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    }
    for (; drawn < gh; drawn++)
        grid_row(r, rows[drawn % 2], gw, amp);
}

/* Sensor-like noise: luminance plus a little chroma, triangular pdf. */
static void noise(rng *r, int w, int h, uint8_t *rgb, int amp)
{
    size_t n = (size_t)w * h;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = next(r);
        int l = ((int)(v & 255) + (int)(v >> 8 & 255) - 255) * amp / 255;
        for (int c = 0; c < 3; c++) {
            int ch = ((int)(v >> (16 + 8 * c) & 255) - 128) * amp / 200;
            int x = rgb[3 * i + c] + l + ch;
            rgb[3 * i + c] = (uint8_t)(x < 0 ? 0 : x > 255 ? 255 : x);
        }
    }
}

void dlg_synth_image_render(uint64_t seed, uint64_t index, int label, int w, int h, uint8_t *rgb)
{
    rng r = rng_at(seed, index, 2);
    rng cls = rng_at(seed, (uint64_t)label, 3); /* the same for every image of a class */
    float tab[4 * DLG_SYNTH_MAX_SIDE]; /* background's cos/sin tables: 2 (w + h) */
    background(&r, &cls, w, h, rgb, tab);
    shapes(&r, &cls, label, w, h, rgb);
    texture(&r, w, h, rgb, 2 + (int)(next(&r) % 3), 30 + 24 * unif(&r));
    noise(&r, w, h, rgb, 58 + (int)(next(&r) % 32));
}
