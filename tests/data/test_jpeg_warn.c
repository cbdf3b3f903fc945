/* libjpeg warnings: a JPEG whose entropy data was lost (premature end of
 * data segment) is corrupt, one with a harmless warning (extraneous bytes
 * before EOI) is kept and counted, by the codec and by the loader (one
 * warning naming the first such file, the count at close, skip_corrupt
 * skipping only the corrupt one); a harmless first warning (in the
 * headers, or between progressive scans) does not hide a later loss,
 * which TurboJPEG alone does not show; and the encoder refuses a side over
 * 65500 pixels before TurboJPEG does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <turbojpeg.h>

#include "jpeg.h"
#include "loader.h"
#include "mock_host.h"
#include "tmpdir.h"

enum { W = 64, H = 48 };

/* A W x H test JPEG (copied: the codec's buffer is reused) with room for
 * `extra` more bytes. */
static uint8_t *make_jpeg(dlg_jpeg *j, size_t *len, size_t extra)
{
    uint8_t rgb[W * H * 3];
    for (int i = 0; i < W * H * 3; i++)
        rgb[i] = (uint8_t)(i * 7 ^ (i / (W * 3)) * 13);
    const uint8_t *p;
    assert_int_equal(dlg_jpeg_encode(j, rgb, W, H, 90, &p, len, NULL), 0);
    uint8_t *copy = malloc(*len + extra);
    memcpy(copy, p, *len);
    return copy;
}

static size_t first_sos(const uint8_t *p, size_t len)
{
    for (size_t i = 2; i + 1 < len; i++)
        if (p[i] == 0xFF && p[i + 1] == 0xDA)
            return i;
    fail_msg("no SOS marker");
    return 0;
}

/* An EOI marker in the middle of the scan: libjpeg warns "premature end of
 * data segment" and fills the rest in; the file still ends with EOI. */
static void cut_scan(uint8_t *p, size_t len)
{
    size_t at = first_sos(p, len) + 40;
    assert_true(at + 2 < len);
    p[at] = 0xFF;
    p[at + 1] = 0xD9;
}

/* Stray bytes before the final EOI: "N extraneous bytes before marker
 * 0xd9", every pixel as stored (the entropy decoder's read-ahead takes up
 * to 3 of them silently).  len grows by EXTRA (room made by the caller). */
enum { EXTRA = 16 };
static void add_extraneous(uint8_t *p, size_t *len)
{
    for (int i = 0; i < EXTRA; i++)
        p[*len - 2 + i] = (uint8_t)(0x12 + i);
    p[*len - 2 + EXTRA] = 0xFF;
    p[*len - 1 + EXTRA] = 0xD9;
    *len += EXTRA;
}

/* JUNK stray bytes before the SOS marker: libjpeg warns "4 extraneous
 * bytes before marker 0xda" and decodes every pixel as stored.  len grows
 * by JUNK (room made by the caller). */
enum { JUNK = 4 };
static void add_junk_before_sos(uint8_t *p, size_t *len)
{
    size_t at = first_sos(p, *len);
    memmove(p + at + JUNK, p + at, *len - at);
    memcpy(p + at, "\x12\x34\x56\x78", JUNK);
    *len += JUNK;
}

/* TurboJPEG keeps an image's first warning only: a harmless one in the
 * headers must not hide the loss of scan data after it. */
static void test_codec_two_warnings(void **st)
{
    (void)st;
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    size_t len, jlen;
    uint8_t *good = make_jpeg(j, &len, 0), *junk = make_jpeg(j, &jlen, JUNK), out[W * H * 3],
            ref[W * H * 3];
    dlg_jpeg_scale one = {1, 1};
    int w, h;
    dlg_data_err err = {0};
    assert_int_equal(dlg_jpeg_decode(j, good, len, "good.jpg", one, ref, sizeof ref, &w, &h, NULL), 0);

    /* the harmless warning alone: kept, counted, the pixels as stored */
    add_junk_before_sos(junk, &jlen);
    if (dlg_jpeg_decode(j, junk, jlen, "junk.jpg", one, out, sizeof out, &w, &h, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(dlg_jpeg_warnings(j), 1);
    assert_non_null(strstr(dlg_jpeg_last_warning(j), "junk.jpg: "));
    assert_non_null(strstr(dlg_jpeg_last_warning(j), "4 extraneous bytes before marker 0xda"));
    assert_memory_equal(out, ref, sizeof ref);

    /* then a premature end of the scan: corrupt, at any scale */
    cut_scan(junk, jlen);
    dlg_jpeg_scale scales[] = {{1, 1}, {1, 2}, {1, 8}};
    for (int i = 0; i < 3; i++) {
        dlg_data_err_clear(&err);
        assert_int_equal(dlg_jpeg_decode(j, junk, jlen, "both.jpg", scales[i], out, sizeof out, &w, &h,
                                         &err), -DLG_ECORRUPT);
        assert_non_null(strstr(err.msg, "both.jpg: corrupt JPEG"));
        assert_non_null(strstr(err.msg, "premature end of data segment"));
    }
    assert_int_equal(dlg_jpeg_warnings(j), 1);
    /* the decoder is whole after that: a clean image decodes as before */
    assert_int_equal(dlg_jpeg_decode(j, good, len, "good.jpg", one, out, sizeof out, &w, &h, NULL), 0);
    assert_memory_equal(out, ref, sizeof ref);

    /* two harmless warnings (before SOS and before EOI): kept, one image counted */
    size_t tlen;
    uint8_t *two = make_jpeg(j, &tlen, JUNK + EXTRA);
    add_junk_before_sos(two, &tlen);
    add_extraneous(two, &tlen);
    assert_int_equal(dlg_jpeg_decode(j, two, tlen, "two.jpg", one, out, sizeof out, &w, &h, &err), 0);
    assert_int_equal(dlg_jpeg_warnings(j), 2);
    assert_memory_equal(out, ref, sizeof ref);
    free(good);
    free(junk);
    free(two);
    dlg_jpeg_free(j);
}

/* A progressive W x H JPEG of make_jpeg's pixels (malloc'd, with room for
 * `extra` more bytes): its scans come after the headers TurboJPEG reads
 * apart, so a warning between them reaches the decode. */
static uint8_t *make_progressive(size_t *len, size_t extra)
{
    uint8_t rgb[W * H * 3];
    for (int i = 0; i < W * H * 3; i++)
        rgb[i] = (uint8_t)(i * 7 ^ (i / (W * 3)) * 13);
    tjhandle tj = tjInitCompress();
    unsigned char *p = NULL;
    unsigned long n = 0;
    assert_int_equal(tjCompress2(tj, rgb, W, W * 3, H, TJPF_RGB, &p, &n, TJSAMP_420, 90,
                                 TJFLAG_PROGRESSIVE), 0);
    uint8_t *copy = malloc(n + extra);
    memcpy(copy, p, n);
    *len = n;
    tjFree(p);
    tjDestroy(tj);
    return copy;
}

/* Offset of the marker after the scan whose SOS is at sos (entropy data
 * holds FF only as FF 00 or an RST marker). */
static size_t scan_end(const uint8_t *p, size_t len, size_t sos)
{
    for (size_t i = sos + 2 + ((size_t)p[sos + 2] << 8 | p[sos + 3]); i + 1 < len; i++)
        if (p[i] == 0xFF && p[i + 1] != 0 && (p[i + 1] < 0xD0 || p[i + 1] > 0xD7))
            return i;
    fail_msg("scan at %zu has no end", sos);
    return 0;
}

/* Progressive: stray bytes before the marker after the first scan
 * (harmless: "3 extraneous bytes before marker 0xc4", the entropy
 * decoder's read-ahead taking one), then an EOI in the
 * middle of the longest later scan ("premature end of data segment"). */
static void test_codec_progressive_two_warnings(void **st)
{
    (void)st;
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    size_t len;
    uint8_t *p = make_progressive(&len, JUNK), out[W * H * 3];
    size_t at = scan_end(p, len, first_sos(p, len));
    memmove(p + at + JUNK, p + at, len - at);
    memcpy(p + at, "\x12\x34\x56\x78", JUNK);
    len += JUNK;
    dlg_jpeg_scale one = {1, 1};
    int w, h;
    dlg_data_err err = {0};
    if (dlg_jpeg_decode(j, p, len, "junk.jpg", one, out, sizeof out, &w, &h, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(dlg_jpeg_warnings(j), 1);
    if (!strstr(dlg_jpeg_last_warning(j), "extraneous bytes before marker"))
        fail_msg("%s", dlg_jpeg_last_warning(j));

    size_t best = 0, best_n = 0; /* the longest scan after the junk */
    for (size_t i = at + JUNK; i + 3 < len; i++)
        if (p[i] == 0xFF && p[i + 1] == 0xDA) {
            size_t e = scan_end(p, len, i);
            if (e - i > best_n) {
                best = i;
                best_n = e - i;
            }
            i = e - 1;
        }
    assert_true(best_n > 40);
    p[best + best_n / 2] = 0xFF;
    p[best + best_n / 2 + 1] = 0xD9;
    assert_int_equal(dlg_jpeg_decode(j, p, len, "both.jpg", one, out, sizeof out, &w, &h, &err),
                     -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "both.jpg: corrupt JPEG"));
    assert_non_null(strstr(err.msg, ": Corrupt JPEG data: premature end of data segment (part of the "
                                    "image is missing; libjpeg warned 2 times, first: "));
    assert_non_null(strstr(err.msg, "extraneous bytes before marker"));
    assert_int_equal(dlg_jpeg_warnings(j), 1);
    free(p);
    dlg_jpeg_free(j);
}

static void test_codec(void **st)
{
    (void)st;
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    size_t len;
    uint8_t *good = make_jpeg(j, &len, 0), out[W * H * 3];
    dlg_jpeg_scale one = {1, 1};
    int w, h;
    dlg_data_err err = {0};

    uint8_t *cut = malloc(len);
    memcpy(cut, good, len);
    cut_scan(cut, len);
    assert_int_equal(dlg_jpeg_decode(j, cut, len, "cut.jpg", one, out, sizeof out, &w, &h, &err),
                     -DLG_ECORRUPT);
    assert_non_null(strstr(err.msg, "cut.jpg: corrupt JPEG"));
    assert_non_null(strstr(err.msg, "premature end of data segment"));
    assert_int_equal(dlg_jpeg_warnings(j), 0);
    /* also at a DCT scale, where fewer coefficients are used */
    assert_int_equal(dlg_jpeg_decode(j, cut, len, "cut.jpg", (dlg_jpeg_scale){1, 2}, out, sizeof out,
                                     &w, &h, &err), -DLG_ECORRUPT);

    size_t xlen = len;
    uint8_t *x = make_jpeg(j, &xlen, EXTRA);
    add_extraneous(x, &xlen);
    assert_string_equal(dlg_jpeg_last_warning(j), "");
    assert_int_equal(dlg_jpeg_decode(j, x, xlen, "extra.jpg", one, out, sizeof out, &w, &h, &err), 0);
    assert_int_equal(dlg_jpeg_warnings(j), 1);
    assert_non_null(strstr(dlg_jpeg_last_warning(j), "extra.jpg: "));
    assert_non_null(strstr(dlg_jpeg_last_warning(j), "extraneous bytes before marker 0xd9"));
    /* the pixels are the clean file's */
    uint8_t ref[W * H * 3];
    assert_int_equal(dlg_jpeg_decode(j, good, len, "good.jpg", one, ref, sizeof ref, &w, &h, NULL), 0);
    assert_int_equal(dlg_jpeg_warnings(j), 1); /* a clean decode counts nothing */
    assert_memory_equal(out, ref, sizeof ref);

    /* a side over 65500 pixels: refused by the codec, before TurboJPEG */
    const uint8_t *p;
    size_t n;
    uint8_t *row = calloc(65501, 3);
    assert_int_equal(dlg_jpeg_encode(j, row, 65501, 1, 90, &p, &n, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "at most 65500 pixels"));
    free(row);
    free(good);
    free(cut);
    free(x);
    dlg_jpeg_free(j);
}

static void put_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The loader reads good0, extra1 (kept, counted), cut2 (corrupt), good3. */
static void make_set(char *dir, char *spec, size_t cap)
{
    tmpdir_make(dir, "jpgwarn");
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    size_t len, xlen;
    uint8_t *good = make_jpeg(j, &len, 0), *x = make_jpeg(j, &xlen, EXTRA), *cut = make_jpeg(j, &len, 0);
    add_extraneous(x, &xlen);
    cut_scan(cut, len);
    put_file(dir, "good0.jpg", good, len);
    put_file(dir, "extra1.jpg", x, xlen);
    put_file(dir, "cut2.jpg", cut, len);
    put_file(dir, "good3.jpg", good, len);
    const char list[] = "good0.jpg 0\nextra1.jpg 1\ncut2.jpg 0\ngood3.jpg 1\n";
    put_file(dir, "list.txt", (const uint8_t *)list, sizeof list - 1);
    snprintf(spec, cap, "files:%s/list.txt", dir);
    free(good);
    free(x);
    free(cut);
    dlg_jpeg_free(j);
}

static void loader_cfg(dlg_loader_config *cfg, const char *spec, bool skip)
{
    dlg_loader_config_defaults(cfg);
    cfg->data = spec;
    cfg->batch = 4;
    cfg->crop = 24;
    cfg->threads = 1;
    cfg->shuffle = false;
    cfg->skip_corrupt = skip;
}

static void test_loader(void **st)
{
    (void)st;
    char dir[64], spec[700];
    make_set(dir, spec, sizeof spec);
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    loader_cfg(&cfg, spec, false);
    dlg_loader *l;
    dlg_batch *b;
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), 0);
    assert_int_equal(dlg_loader_next(l, &b), -DLG_ECORRUPT);
    assert_non_null(strstr(m.last_error, "cut2.jpg: corrupt JPEG"));
    assert_non_null(strstr(m.last_error, "premature end of data segment"));
    dlg_loader_close(l);

    loader_cfg(&cfg, spec, true);
    int warned0 = m.warnings;
    assert_int_equal(dlg_loader_open(&l, &cfg, &m.host), 0);
    for (int i = 0; i < 2; i++) { /* two epochs */
        assert_int_equal(dlg_loader_next(l, &b), 0);
        assert_int_equal(b->skipped, 1);
        assert_int_equal(b->jpeg_warnings, 1);
        assert_int_equal(b->labels[2], 1); /* cut2 replaced by good3 */
        dlg_loader_release(l, b);
    }
    dlg_loader_stats s;
    dlg_loader_stats_get(l, &s);
    assert_int_equal(s.skipped, 2);
    assert_int_equal(s.jpeg_warnings, 2);
    /* the first warned image's line, the first skip's */
    assert_int_equal(m.warnings - warned0, 2);
    dlg_loader_close(l);
    assert_int_equal(m.warnings - warned0, 3); /* and the count at close */
    assert_non_null(strstr(m.last_log, "2 images kept despite a libjpeg warning"));
    assert_non_null(strstr(m.last_log, "(the first: "));
    assert_non_null(strstr(m.last_log, "/extra1.jpg: Corrupt JPEG data: "));
    assert_non_null(strstr(m.last_log, "extraneous bytes before marker 0xd9)"));
    mock_host_fini(&m);
    tmpdir_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec),
        cmocka_unit_test(test_codec_two_warnings),
        cmocka_unit_test(test_codec_progressive_two_warnings),
        cmocka_unit_test(test_loader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
