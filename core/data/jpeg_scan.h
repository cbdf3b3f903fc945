/* A second look at a JPEG that TurboJPEG decoded with a warning: TurboJPEG
 * keeps only the first libjpeg warning of a decode, so a harmless one
 * (extraneous bytes before a marker) would hide a later loss of image
 * data.  This decodes the stream again through the libjpeg API, at the
 * smallest DCT scale into one reused row, and sees every warning's code
 * (jerror.h's JWRN_*).  Used only after a warning: clean images never get
 * here.  One per dlg_jpeg (not thread-safe). */
#ifndef DLG_JPEG_SCAN_H
#define DLG_JPEG_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "data_error.h"

typedef struct dlg_jpeg_scan dlg_jpeg_scan;

int dlg_jpeg_scan_new(dlg_jpeg_scan **out, dlg_data_err *err);
void dlg_jpeg_scan_free(dlg_jpeg_scan *s);

/* What a libjpeg decode of a whole stream warned about. */
typedef struct dlg_jpeg_verdict {
    unsigned warnings; /* libjpeg warnings, all of them */
    bool lost;         /* part of the image was not decoded from the file (or a fatal error) */
    char msg[200];     /* then the first such warning's (or the error's) message, else "" */
} dlg_jpeg_verdict;

/* Decodes buf (len bytes, a JPEG whose header TurboJPEG has read) and
 * fills v; 0, or -DLG_ENOMEM when the row buffer cannot grow (err says). */
int dlg_jpeg_scan_run(dlg_jpeg_scan *s, const void *buf, size_t len, const char *what,
                      dlg_jpeg_verdict *v, dlg_data_err *err);

#endif
