/* JPEG decode/encode with libjpeg-turbo's TurboJPEG API.
 *
 * A dlg_jpeg holds one decompressor and (created on first use) one
 * compressor: make one per thread, once, and reuse it; it is not
 * thread-safe.  Corrupt or truncated data is an error naming `what` (a file
 * or record), never a crash.  A libjpeg warning that says entropy-coded
 * data was lost (premature end of data segment, bad Huffman or arithmetic
 * code, a missing RST marker, premature end of file: libjpeg makes the
 * rest up, where PIL raises "broken data stream"), or any warning from a
 * stream without its EOI marker, is a corrupt-image error.  Any other
 * warning (ImageNet's "extraneous bytes before marker", an unknown JFIF
 * revision...), in the headers or after them, keeps the image and is
 * counted (dlg_jpeg_warnings).  TurboJPEG shows an image's first warning
 * only: a decode that warned is decoded again through the libjpeg API
 * (jpeg_scan.h), which sees every warning, so a loss after a harmless
 * warning is refused too.  A limit of what libjpeg tells: scan bytes
 * overwritten in place may decode to garbage with no more than an
 * "extraneous bytes" warning, counted and named, not refused. */
#ifndef DLG_JPEG_H
#define DLG_JPEG_H

#include <stddef.h>
#include <stdint.h>

#include "data_error.h"

typedef struct dlg_jpeg dlg_jpeg;

/* Images larger than this (pixels) are refused as corrupt/hostile. */
#define DLG_JPEG_MAX_PIXELS (1ull << 28)
/* The longest side libjpeg can encode (its JPEG_MAX_DIMENSION). */
#define DLG_JPEG_MAX_SIDE 65500
/* A progressive JPEG is decoded from whole-image coefficient buffers (2
 * bytes a coefficient, every component: a 16384x16384 4:2:0 image needs
 * 768 MiB whatever the DCT scaling), a baseline one streams; one needing
 * more than this per decoding thread is refused, as libjpeg-turbo 3's
 * TJPARAM_MAXMEMORY would (Debian 12's 2.1 has no such limit).  A 100
 * megapixel 4:2:0 photo needs 286 MiB. */
#define DLG_JPEG_MAX_COEF_BYTES (512ull << 20)

typedef struct dlg_jpeg_info {
    int width, height;
    int subsamp;    /* TJSAMP_* */
    int colorspace; /* TJCS_* */
} dlg_jpeg_info;

/* A DCT-domain scaling factor num/denom (1/1 = no scaling). */
typedef struct dlg_jpeg_scale {
    int num, denom;
} dlg_jpeg_scale;

int dlg_jpeg_new(dlg_jpeg **out, dlg_data_err *err);
void dlg_jpeg_free(dlg_jpeg *j);

/* True when buf starts like a JPEG (SOI marker). */
int dlg_jpeg_is_jpeg(const void *buf, size_t len);

/* 0 when buf starts like a JPEG; else -DLG_ECORRUPT with "WHAT: not a JPEG
 * but a PNG image (N bytes): only JPEG is decoded" (the format named when
 * it is a common one). */
int dlg_jpeg_require(const void *buf, size_t len, const char *what, dlg_data_err *err);

/* True when the stream ends with an EOI marker (FF D9, possibly followed
 * by up to 4 KiB of padding) after its first scan: libjpeg takes a stream
 * cut short for a warning only, and an EXIF thumbnail's EOI in the headers
 * must not make a truncated file look complete. */
int dlg_jpeg_has_eoi(const void *buf, size_t len);

/* A header libjpeg warned about (stray bytes before a marker...) is
 * read: the decode decides whether the image is kept. */
int dlg_jpeg_header(dlg_jpeg *j, const void *buf, size_t len, const char *what,
                    dlg_jpeg_info *info, dlg_data_err *err);

/* The factor to decode with when a window of win_w x win_h source pixels
 * will be resized to out_w x out_h: 1/1 unless the output is at most half
 * the window in both axes; then the smallest factor (largest reduction)
 * offered by libjpeg-turbo whose scaled window still covers the output. */
dlg_jpeg_scale dlg_jpeg_pick_scale(double win_w, double win_h, int out_w, int out_h);

/* Size of one dimension decoded at scale s (libjpeg rounds up). */
int dlg_jpeg_scaled(int dim, dlg_jpeg_scale s);

/* Decodes to packed RGB (3 bytes per pixel, rows of *w*3 bytes) at scale s
 * into rgb (cap bytes; too small is -DLG_EINVAL).  Grayscale and CMYK
 * sources are converted.  *w and *h receive the decoded size. */
int dlg_jpeg_decode(dlg_jpeg *j, const void *buf, size_t len, const char *what,
                    dlg_jpeg_scale s, uint8_t *rgb, size_t cap, int *w, int *h,
                    dlg_data_err *err);

/* Decodes that succeeded with a tolerated libjpeg warning since
 * dlg_jpeg_new (an image, however many warnings it had), and the last
 * one's "what: libjpeg's first message" ("" when none yet). */
uint64_t dlg_jpeg_warnings(const dlg_jpeg *j);
const char *dlg_jpeg_last_warning(const dlg_jpeg *j);

/* Encodes packed RGB at quality 1..100 with 4:2:0 subsampling (sides of
 * at most DLG_JPEG_MAX_SIDE).  *out points
 * into a buffer the dlg_jpeg owns (reused; valid until the next encode). */
int dlg_jpeg_encode(dlg_jpeg *j, const uint8_t *rgb, int w, int h, int quality,
                    const uint8_t **out, size_t *len, dlg_data_err *err);

#endif
