/* Every libjpeg warning of a decode, by code: an error manager whose
 * emit_message sees each one (libjpeg's own prints only the first). */
#include "jpeg_scan.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

struct dlg_jpeg_scan {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr jerr;
    bool created;      /* cinfo is live (jpeg_destroy_decompress owed) */
    jmp_buf fatal;     /* error_exit returns here */
    dlg_jpeg_verdict v;
    JSAMPLE *row;      /* one output row, grown on demand */
    size_t row_cap;
    bool no_memory;    /* the row could not grow */
};

/* libjpeg warnings after which part of the image was not decoded from the
 * file: libjpeg fills it in (grey) and goes on, as OpenCV does; PIL
 * raises "broken data stream" on a premature end of data segment.  The
 * others (extraneous bytes before a marker, an unknown JFIF revision or
 * Adobe transform, odd SOS parameters that baseline files carry as zeros,
 * an inconsistent progression, a bad ICC marker) leave the pixels as
 * stored. */
static bool lost_code(int code)
{
    return code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE || code == JWRN_ARITH_BAD_CODE ||
           code == JWRN_MUST_RESYNC || code == JWRN_JPEG_EOF;
}

static dlg_jpeg_scan *scan_of(j_common_ptr c) { return c->client_data; }

static void on_message(j_common_ptr c, int level)
{
    if (level >= 0) /* trace messages */
        return;
    dlg_jpeg_scan *s = scan_of(c);
    c->err->num_warnings++;
    s->v.warnings++;
    if (!s->v.lost && lost_code(c->err->msg_code)) {
        s->v.lost = true;
        c->err->format_message(c, s->v.msg);
    }
}

static void on_fatal(j_common_ptr c)
{
    dlg_jpeg_scan *s = scan_of(c);
    s->v.lost = true;
    c->err->format_message(c, s->v.msg);
    longjmp(s->fatal, 1);
}

int dlg_jpeg_scan_new(dlg_jpeg_scan **out, dlg_data_err *err)
{
    dlg_jpeg_scan *s = calloc(1, sizeof *s);
    if (!s)
        return dlg_data_fail(err, DLG_ENOMEM, "jpeg: out of memory");
    s->cinfo.err = jpeg_std_error(&s->jerr);
    s->jerr.emit_message = on_message;
    s->jerr.error_exit = on_fatal;
    s->cinfo.client_data = s;
    if (setjmp(s->fatal)) { /* jpeg_create_decompress fails only for memory */
        int rc = dlg_data_fail(err, DLG_ENOMEM, "jpeg: cannot create a libjpeg decompressor: %s",
                               s->v.msg);
        free(s);
        return rc;
    }
    jpeg_create_decompress(&s->cinfo);
    s->created = true;
    *out = s;
    return 0;
}

void dlg_jpeg_scan_free(dlg_jpeg_scan *s)
{
    if (!s)
        return;
    if (s->created)
        jpeg_destroy_decompress(&s->cinfo);
    free(s->row);
    free(s);
}

static bool grow_row(dlg_jpeg_scan *s, size_t n)
{
    if (n <= s->row_cap)
        return true;
    JSAMPLE *p = realloc(s->row, n);
    if (!p)
        return false;
    s->row = p;
    s->row_cap = n;
    return true;
}

/* The whole decode, pixels thrown away: the entropy decoder reads every
 * coefficient at any scale, and finish reads on to EOI (where ImageNet's
 * extraneous bytes are).  Fast settings: only the warnings matter. */
static void decode_all(dlg_jpeg_scan *s, const void *buf, size_t len)
{
    j_decompress_ptr c = &s->cinfo;
    jpeg_mem_src(c, buf, (unsigned long)len);
    jpeg_read_header(c, TRUE);
    c->scale_num = 1;
    c->scale_denom = 8;
    c->dct_method = JDCT_IFAST;
    c->do_fancy_upsampling = FALSE;
    c->do_block_smoothing = FALSE;
    jpeg_start_decompress(c);
    if (!grow_row(s, (size_t)c->output_width * (size_t)c->output_components)) {
        s->no_memory = true;
        jpeg_abort_decompress(c);
        return;
    }
    JSAMPROW rows[1] = {s->row};
    while (c->output_scanline < c->output_height)
        jpeg_read_scanlines(c, rows, 1);
    jpeg_finish_decompress(c);
}

int dlg_jpeg_scan_run(dlg_jpeg_scan *s, const void *buf, size_t len, const char *what,
                      dlg_jpeg_verdict *v, dlg_data_err *err)
{
    memset(&s->v, 0, sizeof s->v);
    s->no_memory = false;
    s->jerr.num_warnings = 0;
    if (setjmp(s->fatal)) /* s->v has the error; the state is reset below */
        jpeg_abort_decompress(&s->cinfo);
    else
        decode_all(s, buf, len);
    if (s->no_memory)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory for a JPEG row", what);
    *v = s->v;
    return 0;
}
