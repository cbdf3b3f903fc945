/* TurboJPEG wrapper: per-thread handles, DCT scaling choice, errors that
 * name the image, no allocation per image once buffers have grown. */
#include "jpeg.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "jpeg_scan.h"

struct dlg_jpeg {
    tjhandle dec;
    tjhandle enc;       /* created on the first encode */
    unsigned char *out; /* encode buffer (tjAlloc'd, grown on demand) */
    unsigned long out_cap;
    uint8_t *cmyk;      /* CMYK/YCCK sources decode here first (grown on demand) */
    size_t cmyk_cap;
    dlg_jpeg_scan *scan; /* classifies warned decodes (created on the first) */
    uint64_t warnings;  /* decodes kept despite a libjpeg warning */
    char warning[320];  /* the last one: "what: message" */
};

int dlg_jpeg_new(dlg_jpeg **out, dlg_data_err *err)
{
    dlg_jpeg *j = calloc(1, sizeof *j);
    if (!j)
        return dlg_data_fail(err, DLG_ENOMEM, "jpeg: out of memory");
    j->dec = tjInitDecompress();
    if (!j->dec) {
        free(j);
        return dlg_data_fail(err, DLG_ENOMEM, "jpeg: cannot create a decompressor: %s",
                             tjGetErrorStr2(NULL));
    }
    *out = j;
    return 0;
}

void dlg_jpeg_free(dlg_jpeg *j)
{
    if (!j)
        return;
    tjDestroy(j->dec);
    if (j->enc)
        tjDestroy(j->enc);
    tjFree(j->out);
    free(j->cmyk);
    dlg_jpeg_scan_free(j->scan);
    free(j);
}

/* libjpeg-turbo 2.1 leaves a decompressor that failed mid-header in a state
 * where the next header reads as 0x0: start over with a fresh one. */
static void reset_dec(dlg_jpeg *j)
{
    tjhandle fresh = tjInitDecompress();
    if (fresh) {
        tjDestroy(j->dec);
        j->dec = fresh;
    }
}

int dlg_jpeg_is_jpeg(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    return len >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF;
}

/* Names the format when it is a common one: "not a JPEG" alone leaves a
 * user with PNG records (im2rec --encoding .png) guessing. */
static int not_jpeg(const void *buf, size_t len, const char *what, dlg_data_err *err)
{
    static const struct {
        const char *magic, *name;
    } kinds[] = {{"\x89PNG", "PNG"}, {"GIF8", "GIF"}, {"BM", "BMP"}, {"RIFF", "WebP"}};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t n = strlen(kinds[i].magic);
        if (len >= n && memcmp(buf, kinds[i].magic, n) == 0)
            return dlg_data_fail(err, DLG_ECORRUPT,
                                 "%s: not a JPEG but a %s image (%zu bytes): only JPEG is "
                                 "decoded", what,
                                 kinds[i].name, len);
    }
    if (len == 0)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: not a JPEG (an empty file or record)", what);
    return dlg_data_fail(err, DLG_ECORRUPT, "%s: not a JPEG (%zu bytes, no SOI marker)", what,
                         len);
}

int dlg_jpeg_require(const void *buf, size_t len, const char *what, dlg_data_err *err)
{
    return dlg_jpeg_is_jpeg(buf, len) ? 0 : not_jpeg(buf, len, what, err);
}

/* Whether the frame (the first SOF marker, before any scan) is
 * progressive: SOF2, SOF6, SOF10 or SOF14. */
static bool is_progressive(const uint8_t *p, size_t len)
{
    size_t i = 2;
    while (i + 4 <= len && p[i] == 0xFF) {
        uint8_t m = p[i + 1];
        if (m == 0xFF) { /* fill byte */
            i++;
            continue;
        }
        if (m == 0xDA || m == 0xD9) /* a scan, or the end, before any frame */
            return false;
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC)
            return m == 0xC2 || m == 0xC6 || m == 0xCA || m == 0xCE;
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { /* no length */
            i += 2;
            continue;
        }
        i += 2 + ((size_t)p[i + 2] << 8 | p[i + 3]);
    }
    return false;
}

/* Bytes of coefficient buffers a progressive decode of info holds: 64
 * two-byte coefficients per 8x8 block of every component. */
static double coef_bytes(const dlg_jpeg_info *info)
{
    double luma = ceil(info->width / 8.0) * ceil(info->height / 8.0) * 128.0;
    int comps = info->colorspace == TJCS_GRAY ? 1
                : info->colorspace == TJCS_CMYK || info->colorspace == TJCS_YCCK ? 4 : 3;
    double chroma = info->subsamp == TJSAMP_GRAY || info->subsamp < 0 || info->subsamp >= TJ_NUMSAMP
                        ? 1.0
                        : 64.0 / (tjMCUWidth[info->subsamp] * tjMCUHeight[info->subsamp]);
    return luma * (1 + (comps - 1) * chroma);
}

/* TurboJPEG 2.1 fails a header read that warned (stray bytes before a
 * marker, an unknown JFIF revision) once it has read it all: the decode
 * classifies that warning as it does any other.  Its own checks after
 * reading (a sampling or colour space it has no name for) still refuse. */
static bool header_warned(dlg_jpeg *j, int w, int h, int ss, int cs)
{
    return tjGetErrorCode(j->dec) == TJERR_WARNING && w > 0 && h > 0 && ss >= 0 && cs >= 0;
}

/* libjpeg's JERR_OUT_OF_MEMORY ("Insufficient memory (case N)") or
 * TurboJPEG's own failed allocation: the machine's fault, not the image's
 * (skip_corrupt dropped the image, and counted it corrupt). */
static bool out_of_memory(const char *msg)
{
    return strstr(msg, "Insufficient memory") || strstr(msg, "Memory allocation failure");
}

/* A failed header read or decode of a len-byte JPEG: out of memory, or
 * the image's fault; the decompressor reset for the next image. */
static int decode_failed(dlg_jpeg *j, const char *what, size_t len, bool header, const char *msg,
                         dlg_data_err *err)
{
    int rc;
    if (out_of_memory(msg))
        rc = dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory %s the JPEG: %s", what,
                           header ? "reading the header of" : "decoding", msg);
    else if (header)
        rc = dlg_data_fail(err, DLG_ECORRUPT, "%s: bad JPEG header: %s", what, msg);
    else
        rc = dlg_data_fail(err, DLG_ECORRUPT, "%s: corrupt JPEG (%zu bytes): %s", what, len, msg);
    reset_dec(j);
    return rc;
}

int dlg_jpeg_header(dlg_jpeg *j, const void *buf, size_t len, const char *what,
                    dlg_jpeg_info *info, dlg_data_err *err)
{
    if (!dlg_jpeg_is_jpeg(buf, len))
        return not_jpeg(buf, len, what, err);
    if (len > (size_t)0xFFFFFFFFu)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: JPEG of %zu bytes is too large", what, len);
    int w = 0, h = 0, ss = 0, cs = 0;
    if (tjDecompressHeader3(j->dec, buf, (unsigned long)len, &w, &h, &ss, &cs) != 0 &&
        !header_warned(j, w, h, ss, cs))
        return decode_failed(j, what, len, true, tjGetErrorStr2(j->dec), err);
    if (w <= 0 || h <= 0 || (uint64_t)w * (uint64_t)h > DLG_JPEG_MAX_PIXELS)
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: JPEG claims %dx%d pixels", what, w, h);
    info->width = w;
    info->height = h;
    info->subsamp = ss;
    info->colorspace = cs;
    double need = coef_bytes(info);
    if (need > (double)DLG_JPEG_MAX_COEF_BYTES && is_progressive(buf, len))
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s: progressive JPEG of %dx%d would need %.0f MiB of coefficient buffers to "
                             "decode (at most %llu MiB)", what, w, h, need / 1048576.0,
                             DLG_JPEG_MAX_COEF_BYTES >> 20);
    return 0;
}

dlg_jpeg_scale dlg_jpeg_pick_scale(double win_w, double win_h, int out_w, int out_h)
{
    dlg_jpeg_scale best = {1, 1};
    if (2.0 * out_w > win_w || 2.0 * out_h > win_h)
        return best;
    int n = 0;
    const tjscalingfactor *f = tjGetScalingFactors(&n);
    double best_r = 1.0;
    for (int i = 0; i < n; i++) {
        double r = (double)f[i].num / f[i].denom;
        if (r > 0.5 || r >= best_r)
            continue;
        if (win_w * r >= out_w && win_h * r >= out_h) {
            best_r = r;
            best.num = f[i].num;
            best.denom = f[i].denom;
        }
    }
    return best;
}

int dlg_jpeg_scaled(int dim, dlg_jpeg_scale s)
{
    return (int)(((int64_t)dim * s.num + s.denom - 1) / s.denom);
}

/* Offset of the first SOS marker (where the image data starts), or len
 * when the headers are cut short.  Walks the marker segments, so an EXIF
 * thumbnail's EOI before it is never taken for the image's. */
static size_t first_scan(const uint8_t *p, size_t len)
{
    size_t i = 2;
    while (i + 4 <= len) {
        if (p[i] != 0xFF) /* stray bytes between segments: libjpeg skips them */
            return i;
        uint8_t m = p[i + 1];
        if (m == 0xDA)
            return i;
        if (m == 0xFF || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { /* fill byte, no length */
            i += m == 0xFF ? 1 : 2;
            continue;
        }
        i += 2 + ((size_t)p[i + 2] << 8 | p[i + 3]);
    }
    return len;
}

int dlg_jpeg_has_eoi(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    size_t stop = len > 4096 ? len - 4096 : 0, sos = first_scan(p, len);
    if (stop < sos)
        stop = sos;
    for (size_t i = len; i >= stop + 2; i--)
        if (p[i - 2] == 0xFF && p[i - 1] == 0xD9)
            return 1;
    return 0;
}

/* After a decode that warned: the image is kept, and counted, when the
 * stream ends with EOI and no warning of a second libjpeg pass (every
 * one, not only the first that TurboJPEG keeps) says data was lost.  msg
 * is TurboJPEG's (its first warning), read only after the failure. */
static int classify(dlg_jpeg *j, const void *buf, size_t len, const char *what, const char *msg,
                    dlg_data_err *err)
{
    dlg_jpeg_verdict v = {.lost = !dlg_jpeg_has_eoi(buf, len)};
    if (!v.lost) {
        int rc = j->scan ? 0 : dlg_jpeg_scan_new(&j->scan, err);
        if (rc == 0)
            rc = dlg_jpeg_scan_run(j->scan, buf, len, what, &v, err);
        if (rc < 0)
            return rc;
    }
    if (!v.lost) {
        j->warnings++;
        snprintf(j->warning, sizeof j->warning, "%s: %s", what, msg);
        return 0;
    }
    if (v.msg[0] && strcmp(v.msg, msg) != 0) /* a loss after a harmless first warning */
        return dlg_data_fail(err, DLG_ECORRUPT, "%s: corrupt JPEG (%zu bytes): %s (part of the "
                             "image is missing; libjpeg warned %u times, first: %s)", what, len,
                             v.msg, v.warnings, msg);
    return dlg_data_fail(err, DLG_ECORRUPT, "%s: corrupt JPEG (%zu bytes): %s (part of the image is "
                         "missing)", what, len, msg);
}

/* tjDecompress2 into dst (pixel format pf, pixel size ps); a warning is
 * classified (kept or corrupt). */
static int decompress(dlg_jpeg *j, const void *buf, size_t len, const char *what, uint8_t *dst,
                      int sw, int sh, int pf, int ps, dlg_data_err *err)
{
    if (tjDecompress2(j->dec, buf, (unsigned long)len, dst, sw, sw * ps, sh, pf, 0) == 0)
        return 0;
    bool warning = tjGetErrorCode(j->dec) == TJERR_WARNING;
    const char *msg = tjGetErrorStr2(j->dec);
    if (warning)
        return classify(j, buf, len, what, msg, err);
    return decode_failed(j, what, len, false, msg, err);
}

uint64_t dlg_jpeg_warnings(const dlg_jpeg *j) { return j->warnings; }

const char *dlg_jpeg_last_warning(const dlg_jpeg *j) { return j->warning; }

/* TurboJPEG cannot turn CMYK into RGB (ImageNet has a few Photoshop CMYK
 * files).  Adobe stores CMYK inverted (255 = no ink); like OpenCV and
 * Pillow, R = k - (255 - c) * k / 255 on the stored values, rounded as
 * Pillow's MULDIV255. */
static void cmyk_to_rgb(const uint8_t *cmyk, size_t n, uint8_t *rgb)
{
    for (size_t i = 0; i < n; i++, cmyk += 4, rgb += 3) {
        unsigned k = cmyk[3];
        for (int c = 0; c < 3; c++) {
            unsigned t = (255u - cmyk[c]) * k + 128u;
            rgb[c] = (uint8_t)(k - (((t >> 8) + t) >> 8));
        }
    }
}

static int decode_cmyk(dlg_jpeg *j, const void *buf, size_t len, const char *what, int sw,
                       int sh, uint8_t *rgb, dlg_data_err *err)
{
    size_t n = (size_t)sw * (size_t)sh;
    if (n * 4 > j->cmyk_cap) {
        uint8_t *p = realloc(j->cmyk, n * 4);
        if (!p)
            return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory for a %dx%d CMYK image",
                                 what, sw, sh);
        j->cmyk = p;
        j->cmyk_cap = n * 4;
    }
    int rc = decompress(j, buf, len, what, j->cmyk, sw, sh, TJPF_CMYK, 4, err);
    if (rc == 0)
        cmyk_to_rgb(j->cmyk, n, rgb);
    return rc;
}

int dlg_jpeg_decode(dlg_jpeg *j, const void *buf, size_t len, const char *what,
                    dlg_jpeg_scale s, uint8_t *rgb, size_t cap, int *w, int *h,
                    dlg_data_err *err)
{
    dlg_jpeg_info info;
    int rc = dlg_jpeg_header(j, buf, len, what, &info, err);
    if (rc < 0)
        return rc;
    int sw = dlg_jpeg_scaled(info.width, s), sh = dlg_jpeg_scaled(info.height, s);
    if ((size_t)sw * (size_t)sh * 3 > cap)
        return dlg_data_fail(err, DLG_EINVAL, "%s: %dx%d RGB needs %zu bytes, buffer has %zu",
                             what, sw, sh, (size_t)sw * sh * 3, cap);
    if (info.colorspace == TJCS_CMYK || info.colorspace == TJCS_YCCK)
        rc = decode_cmyk(j, buf, len, what, sw, sh, rgb, err);
    else
        rc = decompress(j, buf, len, what, rgb, sw, sh, TJPF_RGB, 3, err);
    if (rc < 0)
        return rc;
    *w = sw;
    *h = sh;
    return 0;
}

int dlg_jpeg_encode(dlg_jpeg *j, const uint8_t *rgb, int w, int h, int quality,
                    const uint8_t **out, size_t *len, dlg_data_err *err)
{
    if (w <= 0 || h <= 0 || quality < 1 || quality > 100)
        return dlg_data_fail(err, DLG_EINVAL, "jpeg: cannot encode %dx%d at quality %d", w, h,
                             quality);
    if (w > DLG_JPEG_MAX_SIDE || h > DLG_JPEG_MAX_SIDE)
        return dlg_data_fail(err, DLG_EINVAL, "jpeg: cannot encode %dx%d: a JPEG side is at most "
                             "%d pixels", w, h, DLG_JPEG_MAX_SIDE);
    if (!j->enc && !(j->enc = tjInitCompress()))
        return dlg_data_fail(err, DLG_ENOMEM, "jpeg: cannot create a compressor: %s",
                             tjGetErrorStr2(NULL));
    unsigned long need = tjBufSize(w, h, TJSAMP_420);
    if (need > j->out_cap) {
        tjFree(j->out);
        j->out = tjAlloc((int)need);
        j->out_cap = j->out ? need : 0;
        if (!j->out)
            return dlg_data_fail(err, DLG_ENOMEM, "jpeg: out of memory for a %dx%d image", w, h);
    }
    unsigned long size = j->out_cap;
    if (tjCompress2(j->enc, rgb, w, w * 3, h, TJPF_RGB, &j->out, &size, TJSAMP_420, quality,
                    TJFLAG_NOREALLOC) != 0)
        return dlg_data_fail(err, DLG_EIO, "jpeg: encoding %dx%d failed: %s", w, h,
                             tjGetErrorStr2(j->enc));
    *out = j->out;
    *len = size;
    return 0;
}
