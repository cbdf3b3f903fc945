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

/* Resets err to "no error" (NULL is fine). */
void dlg_data_err_clear(dlg_data_err *err);

#endif
