/* A watchdog for one plugin load: a constructor or a plugin entry that
 * never returns would otherwise hang every command (list and help
 * included).  A ticker thread (ticker.h) waits; past the limit it writes
 * one line and ends the process with exit 2, the loading thread being
 * stuck where it cannot be left (inside dlopen, or in the plugin's code). */
#ifndef DLG_LOAD_WATCH_H
#define DLG_LOAD_WATCH_H

#include <stddef.h>
#include <stdint.h>

/* How long one load may take unless $DLGAUGE_PLUGIN_LOAD_TIMEOUT says
 * otherwise: generous, a plugin that links CUDA may take seconds. */
#define DLG_PLUGIN_LOAD_TIMEOUT_DEFAULT "30s"

typedef struct dlg_load_watch {
    struct dlg_ticker *ticker; /* NULL: not watched */
    char line[4096 + 256];     /* written as it is on timeout */
    size_t len;
} dlg_load_watch;

/* $DLGAUGE_PLUGIN_LOAD_TIMEOUT (a duration: 30s, 500ms; a bare number is
 * seconds; 0 for no limit), or the default: 0 with *ns set, or -1 with
 * why[] naming the variable and its value. */
int dlg_load_timeout(int64_t *ns, char *why, size_t whylen);

/* Starts watching a load of path that must end within timeout_ns (0: no
 * watch); on timeout, "dlgauge: PATH: " what " did not return within N
 * ..." and exit 2.  No thread to be had (a tight ulimit -v or -u): the
 * load goes on unwatched rather than not at all. */
void dlg_load_watch_start(dlg_load_watch *w, const char *path, const char *what, int64_t timeout_ns);
/* The load returned: ends the watch and its thread. */
void dlg_load_watch_stop(dlg_load_watch *w);

#endif
