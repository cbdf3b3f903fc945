/* The services' error slot as host.c uses it (host_error.c): errors are
 * numbered; the slot holds the latest, and each thread's latest is kept
 * apart too, so that "did the backend say why during my call" is answered
 * by what this thread said, whatever other threads said since. */
#ifndef DLG_HOST_ERROR_H
#define DLG_HOST_ERROR_H

#include "host.h"

#include <stdarg.h>
#include <stdbool.h>

/* A thread's errors kept out of the shared slot while it runs a call
 * whose failure is only a warning (the ABI's void file_close): another
 * thread's error raised meanwhile stays in the slot, untouched. */
typedef struct dlg_error_capture {
    dlg_error said;
    struct dlg_error_capture *next;
} dlg_error_capture;

void dlg_services_capture_begin(dlg_services *s, dlg_error_capture *c);
void dlg_services_capture_end(dlg_services *s, dlg_error_capture *c);

/* Records e (its text, head and code) as the latest error, numbered: in
 * the calling thread's capture if it has one, else in the slot. */
void dlg_services_raise(dlg_services *s, const dlg_error *e);
/* "CONTEXT: MSG" (context NULL or "": MSG) raised as above. */
void dlg_services_vraise(dlg_services *s, int code, const char *context, const char *fmt, va_list ap);

/* Whether the calling thread raised an error since mark, copied to *out
 * (NULL: not wanted): what a backend said during a call this thread made,
 * not another loader worker's, even one raised after it.  Inside a
 * capture, into that capture; outside, out of any: what a capture held
 * was only warned about, no reason for a later failure. */
bool dlg_services_said_here(dlg_services *s, uint64_t mark, dlg_error *out);

/* Frees what the slot keeps per thread (dlg_services_fini). */
void dlg_services_errors_fini(dlg_services *s);

#endif
