/* Error reporting for the dataset formats: a caller-owned buffer that gets
 * one clear line (file, byte offset or key, what is wrong).  No globals, so
 * readers on different threads never share error state. */
#ifndef DLG_DATA_ERROR_H
#define DLG_DATA_ERROR_H

#include <dlgauge/plugin.h>

typedef struct dlg_data_err {
    int code;       /* DLG_E* (positive), 0 when no error was recorded */
    char msg[512];  /* one line, no trailing newline */
} dlg_data_err;

/* Records code and message in err (which may be NULL); returns -code so
 * callers can write `return dlg_data_fail(err, DLG_ECORRUPT, "...");`. */
int dlg_data_fail(dlg_data_err *err, int code, const char *fmt, ...) DLG_PRINTF(3, 4);

/* bytes[0..n) as one printable line into buf (len >= 5): bytes outside
 * printable ASCII, and '\\', as \xHH, cut to what fits ("..." marks a
 * cut).  A key or name from a dataset goes into messages so: a newline in
 * it would split the error line. Returns buf. */
const char *dlg_data_printable(char *buf, size_t len, const void *bytes, size_t n);

/* Resets err to "no error" (NULL is fine). */
void dlg_data_err_clear(dlg_data_err *err);

#endif
