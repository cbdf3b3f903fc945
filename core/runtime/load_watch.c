#include "load_watch.h"

#include "ticker.h"
#include "units.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int dlg_load_timeout(int64_t *ns, char *why, size_t whylen)
{
    const char *env = getenv("DLGAUGE_PLUGIN_LOAD_TIMEOUT");
    char sub[128];
    if (dlg_parse_duration(env && *env ? env : DLG_PLUGIN_LOAD_TIMEOUT_DEFAULT, ns, sub, sizeof sub) == 0)
        return 0;
    snprintf(why, whylen, "DLGAUGE_PLUGIN_LOAD_TIMEOUT: %s; 0 for no limit", sub);
    return -1;
}

/* The ticker's first tick: the load is past its time.  The loading thread
 * is stuck where it cannot be left (inside dlopen, holding the dynamic
 * loader's lock, or in the plugin's code): one line, and the process ends
 * without running anything more of it (no atexit handlers, destructors). */
static void expire(void *arg)
{
    const dlg_load_watch *w = arg;
    ssize_t n = write(STDERR_FILENO, w->line, w->len);
    (void)n;
    _exit(2);
}

void dlg_load_watch_start(dlg_load_watch *w, const char *path, const char *what, int64_t timeout_ns)
{
    w->ticker = NULL;
    if (timeout_ns <= 0)
        return;
    char limit[32];
    dlg_format_duration(timeout_ns, limit, sizeof limit);
    int n = snprintf(w->line, sizeof w->line, "dlgauge: %s: %s did not return within %s "
                     "(DLGAUGE_PLUGIN_LOAD_TIMEOUT raises the limit); move the file out of the plugin folder\n", path,
                     what, limit);
    w->len = n < 0 ? 0 : (size_t)n < sizeof w->line ? (size_t)n : sizeof w->line - 1;
    int64_t ms = (timeout_ns + 999999) / 1000000;
    if (dlg_ticker_start(&w->ticker, ms > INT_MAX ? INT_MAX : (int)ms, expire, w) != 0)
        w->ticker = NULL; /* no thread to be had: unwatched rather than not loaded */
}

void dlg_load_watch_stop(dlg_load_watch *w)
{
    dlg_ticker_stop(w->ticker);
    w->ticker = NULL;
}
