/* A thread that calls fn(arg) every period_ms until stopped: for counters
 * that must be read more often than a measurement lasts (RAPL wraps). */
#ifndef DLG_RUNTIME_TICKER_H
#define DLG_RUNTIME_TICKER_H

typedef struct dlg_ticker dlg_ticker;
typedef void (*dlg_tick_fn)(void *arg);

/* 0, or -1 (no memory, no thread): *out is then NULL and fn never runs. */
int dlg_ticker_start(dlg_ticker **out, int period_ms, dlg_tick_fn fn, void *arg);
/* Stops and joins the thread (fn is not running once this returns); frees.
 * NULL is a no-op. */
void dlg_ticker_stop(dlg_ticker *t);

#endif
