/* The report API given to workloads (report_api.h). */
#define _GNU_SOURCE
#include "report_api.h"

#include <stdlib.h>
#include <string.h>

static dlg_wfield *wfield(dlg_fields *f, const char *key, dlg_field_type want)
{
    dlg_field_sink *fs = (dlg_field_sink *)f;
    const dlg_metric *m = fs->metrics;
    while (m && m->name && strcmp(m->name, key) != 0)
        m++;
    if (!m || !m->name) {
        fs->host->pub.log(&fs->host->pub, DLG_LOG_WARN, "reported field '%s' is not declared in its metrics; dropped", key);
        return NULL;
    }
    dlg_wfield *w = NULL;
    for (size_t i = 0; i < fs->res->nwf && !w; i++)
        if (fs->res->wf[i].key == m->name)
            w = &fs->res->wf[i];
    if (!w) { /* zeroed: emitted only once a right call sets it */
        dlg_wfield *arr = realloc(fs->res->wf, (fs->res->nwf + 1) * sizeof *arr);
        if (!arr)
            return NULL;
        fs->res->wf = arr;
        w = &arr[fs->res->nwf++];
        memset(w, 0, sizeof *w);
        w->key = m->name;
        w->type = m->type;
    }
    /* a string where a number was declared (or the reverse) would be
     * written as 0, or overwrite the repetitions' sum; said once a cell,
     * not once a repetition */
    if ((want == DLG_FIELD_STRING) != (m->type == DLG_FIELD_STRING)) {
        if (!w->warned)
            fs->host->pub.log(&fs->host->pub, DLG_LOG_WARN,
                              "reported field '%s' is declared %s but reported with %s; dropped", key,
                              m->type == DLG_FIELD_STRING ? "a string" : "a number",
                              want == DLG_FIELD_STRING ? "add_string" : "add_int/add_double");
        w->warned = true;
        return NULL;
    }
    return w;
}

/* Whether w was reported already in this repetition: the mean is over
 * the repetitions, so a second value replaces the first (said once a
 * cell), rather than being averaged with it as another repetition's. */
static bool again(dlg_field_sink *fs, dlg_wfield *w)
{
    if (w->rep != fs->rep + 1) {
        w->rep = fs->rep + 1;
        return false;
    }
    if (!w->warned_twice)
        fs->host->pub.log(&fs->host->pub, DLG_LOG_WARN,
                          "reported field '%s' twice in one repetition's report; the last value is kept", w->key);
    w->warned_twice = true;
    return true;
}

static void add_double(dlg_fields *f, const char *key, double v)
{
    dlg_wfield *w = wfield(f, key, DLG_FIELD_DOUBLE);
    if (!w)
        return;
    if (again((dlg_field_sink *)f, w))
        w->sum -= w->last;
    else
        w->count++;
    w->sum += v;
    w->last = v;
}

static void add_int(dlg_fields *f, const char *key, int64_t v) { add_double(f, key, (double)v); }

static void add_string(dlg_fields *f, const char *key, const char *v)
{
    dlg_wfield *w = wfield(f, key, DLG_FIELD_STRING);
    if (w) {
        again((dlg_field_sink *)f, w);
        free(w->text);
        w->text = strdup(v ? v : "");
        w->count = 1;
    }
}

const dlg_report_api dlg_field_report_api = {add_double, add_int, add_string};
