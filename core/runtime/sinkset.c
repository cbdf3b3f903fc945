#include "sinkset.h"

#include "signals.h"
#include "thread_sigstack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "FILE:LINE: [sink NAME]", what a sink's errors start with: the line of
 * entry e (the key a message is about), else of the sink's section. */
static void sink_where(const dlg_plan *plan, const dlg_instance_spec *spec, const dlg_entry *e, char *buf,
                       size_t len)
{
    char at[600];
    if (e || spec->sec)
        dlg_plan_where(e, spec->sec, at, sizeof at);
    else
        snprintf(at, sizeof at, "%s: ", plan->cfg->path);
    snprintf(buf, len, "%s[sink %s]", at, spec->name);
}

/* The error raised through sink s's host since mark (its call) into out
 * ("" when none): one about a key names that key's file:line instead of
 * the section's.  Its DLG_E* code, 0 for none. */
static int sink_message(dlg_services *svc, uint64_t mark, const dlg_host_impl *h, const dlg_instance_spec *spec,
                        char *out, size_t len)
{
    char msg[sizeof svc->error.text];
    int code = dlg_services_said(svc, mark, mark, msg, sizeof msg);
    size_t clen = strlen(h->context);
    const dlg_entry *e = NULL;
    if (strncmp(msg, h->context, clen) == 0 && strncmp(msg + clen, ": ", 2) == 0)
        e = dlg_msg_entry(spec->sec, msg + clen + 2); /* the influx `url = ...: not an http:// URL` */
    if (!e) {
        snprintf(out, len, "%s", msg);
        return code;
    }
    char where[1200];
    sink_where(svc->plan, spec, e, where, sizeof where);
    snprintf(out, len, "%s: %s", where, msg + clen + 2);
    return code;
}

/* The sink's own message, else "FILE:LINE: [sink NAME]: WHAT failed
 * (DLG_EIO) without saying why": one form, as a workload's that says nothing. */
static int sink_error(dlg_services *svc, uint64_t mark, const dlg_host_impl *h, const dlg_instance_spec *spec,
                      const char *what, int rc, char *err, size_t errlen)
{
    int code = sink_message(svc, mark, h, spec, err, errlen);
    if (!err[0])
        dlg_said_nothing(err, errlen, h->context, what, rc);
    return code;
}

static void report(dlg_sinkset *ss, uint64_t mark, dlg_sink_live *s, const char *what, int rc)
{
    char line[2048];
    sink_error(&ss->svc, mark, s->host, s->spec, what, rc, line, sizeof line);
    s->failures++;
    ss->failures++;
    /* the same complaint once, not once per point */
    if (strcmp(line, s->last_error) != 0) {
        fprintf(stderr, "dlgauge: %s\n", line);
        snprintf(s->last_error, sizeof s->last_error, "%s", line);
    }
}

static dlg_host_impl *sink_host(dlg_services *svc, const dlg_plan *plan, const dlg_instance_spec *spec)
{
    char where[1200];
    sink_where(plan, spec, NULL, where, sizeof where);
    return dlg_host_new(svc, "%s", where);
}

/* Arms g for sink s's op: a crash in it ends dlgauge (as one in an
 * in-process cell does: nothing of the process can be trusted after it),
 * with one line naming the sink, its section, the op and its plugin. */
static void guard_on(dlg_crash_guard *g, const dlg_host_impl *h, const dlg_instance_spec *spec, const char *op)
{
    char then[1400];
    snprintf(then, sizeof then, " in its %s op: a bug in the sink's plugin %s; dlgauge ends here, the rows written "
             "so far are kept%s", op, spec->plugin_path ? spec->plugin_path : spec->desc->name,
             strcmp(op, "write") == 0 ? ", and dlgauge run --resume gives each sink the result rows it lacks" : "");
    dlg_crash_guard_arm_for(g, h->context, then);
}

/* One sink's check op, where its plugin has one (sink ops version 2). */
static int check_one(dlg_services *svc, dlg_plan *plan, const dlg_instance_spec *spec, char *err, size_t errlen)
{
    const dlg_sink_ops *ops = spec->desc->ops;
    if (ops->version < 2 || !ops->check)
        return 0;
    dlg_host_impl *h = sink_host(svc, plan, spec);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint64_t mark = dlg_services_mark(svc);
    dlg_crash_guard g;
    guard_on(&g, h, spec, "check");
    int rc = ops->check(&h->pub, spec->vals, spec->name);
    dlg_crash_guard_disarm(&g);
    if (rc < 0)
        sink_error(svc, mark, h, spec, "check", rc, err, errlen);
    dlg_host_free(h);
    return rc < 0 ? -1 : 0;
}

int dlg_sinkset_check(dlg_plan *plan, int verbosity, char *err, size_t errlen)
{
    dlg_services svc;
    dlg_services_init(&svc, plan, NULL, verbosity);
    int rc = 0;
    for (size_t i = 0; i < plan->nsinks && rc == 0; i++)
        rc = check_one(&svc, plan, &plan->sinks[i], err, errlen);
    dlg_services_fini(&svc);
    return rc;
}

int dlg_sinkset_open(dlg_sinkset *ss, dlg_plan *plan, bool begin_run, int verbosity, char *err,
                     size_t errlen)
{
    memset(ss, 0, sizeof *ss);
    dlg_services_init(&ss->svc, plan, NULL, verbosity);
    /* one signal stack for every guard of the run: none allocated per point */
    ss->sigstack = dlg_sigstack_on();
    ss->sinks = calloc(plan->nsinks + 1, sizeof *ss->sinks);
    if (!ss->sinks) {
        ss->open_error = DLG_ENOMEM;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    dlg_schema schema = {plan->tag_keys, plan->ntag_keys, plan->fields, plan->nfields};
    for (size_t i = 0; i < plan->nsinks; i++) {
        dlg_sink_live *s = &ss->sinks[i];
        s->spec = &plan->sinks[i];
        const dlg_sink_ops *ops = s->spec->desc->ops;
        s->host = sink_host(&ss->svc, plan, s->spec);
        if (!s->host) {
            ss->open_error = DLG_ENOMEM;
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        ss->n = i + 1; /* so that close() cleans up whatever opened */
        uint64_t mark = dlg_services_mark(&ss->svc);
        dlg_crash_guard g;
        s->named_from = ss->svc.files.nkept;
        guard_on(&g, s->host, s->spec, "open");
        int rc = ops->open(&s->host->pub, s->spec->vals, s->spec->name, &s->state);
        dlg_crash_guard_disarm(&g);
        if (rc >= 0 && begin_run && ops->begin) {
            guard_on(&g, s->host, s->spec, "begin");
            rc = ops->begin(s->state, &schema);
            dlg_crash_guard_disarm(&g);
        }
        s->named_to = ss->svc.files.nkept;
        if (rc < 0) {
            /* what host->error() said it was, else what open returned */
            int said = sink_error(&ss->svc, mark, s->host, s->spec, "open", rc, err, errlen);
            ss->open_error = said ? said : -rc;
            if (s->state) {
                guard_on(&g, s->host, s->spec, "close");
                ops->close(s->state);
                dlg_crash_guard_disarm(&g);
            }
            s->state = NULL;
            return -1;
        }
    }
    return 0;
}

typedef int (*write_op)(void *state, const dlg_point *pts, size_t n);

/* Sink i's op (named what) on pts, under a crash guard. */
static int write_with(dlg_sinkset *ss, size_t i, write_op op, const char *what, const dlg_point *pts, size_t n)
{
    dlg_sink_live *s = &ss->sinks[i];
    uint64_t mark = dlg_services_mark(&ss->svc);
    dlg_crash_guard g;
    guard_on(&g, s->host, s->spec, what);
    int rc = op(s->state, pts, n);
    dlg_crash_guard_disarm(&g);
    if (rc < 0) {
        report(ss, mark, s, what, rc);
        return -1;
    }
    return 0;
}

static bool is_open(const dlg_sinkset *ss, size_t i)
{
    return ss && i < ss->n && ss->sinks[i].state;
}

int dlg_sinkset_write_one(dlg_sinkset *ss, size_t i, const dlg_point *pts, size_t n)
{
    if (!is_open(ss, i))
        return -1;
    return write_with(ss, i, ((const dlg_sink_ops *)ss->sinks[i].spec->desc->ops)->write, "write", pts, n);
}

int dlg_sinkset_write_again_one(dlg_sinkset *ss, size_t i, const dlg_point *pts, size_t n)
{
    if (!is_open(ss, i))
        return -1;
    const dlg_sink_ops *ops = ss->sinks[i].spec->desc->ops;
    if (ops->version < 4 || !ops->write_again)
        return write_with(ss, i, ops->write, "write", pts, n);
    return write_with(ss, i, ops->write_again, "write_again", pts, n);
}

int dlg_sinkset_write(dlg_sinkset *ss, const dlg_point *pts, size_t n)
{
    int failed = 0;
    for (size_t i = 0; ss && i < ss->n; i++)
        if (ss->sinks[i].state && dlg_sinkset_write_one(ss, i, pts, n) != 0)
            failed++;
    return failed;
}

/* A flush that could not deliver everything but lost nothing. */
static void note_kept(dlg_sinkset *ss, uint64_t mark, dlg_sink_live *s)
{
    char msg[2048];
    sink_message(&ss->svc, mark, s->host, s->spec, msg, sizeof msg);
    if (msg[0])
        fprintf(stderr, "dlgauge: %s\n", msg);
    else
        fprintf(stderr, "dlgauge: %s: some points could not be delivered and were kept for later\n",
                s->host->context);
    ss->kept++;
}

size_t dlg_sinkset_named(const dlg_sinkset *ss, size_t i, char *const **paths)
{
    *paths = NULL;
    if (i >= ss->n || ss->sinks[i].named_to <= ss->sinks[i].named_from)
        return 0;
    *paths = ss->svc.files.kept + ss->sinks[i].named_from;
    return ss->sinks[i].named_to - ss->sinks[i].named_from;
}

void dlg_sinkset_close(dlg_sinkset *ss, uint64_t timeout_ns)
{
    for (size_t i = 0; i < ss->n; i++) {
        dlg_sink_live *s = &ss->sinks[i];
        const dlg_sink_ops *ops = s->spec->desc->ops;
        dlg_crash_guard g;
        if (s->state && ops->flush) {
            uint64_t mark = dlg_services_mark(&ss->svc);
            guard_on(&g, s->host, s->spec, "flush");
            int rc = ops->flush(s->state, timeout_ns);
            dlg_crash_guard_disarm(&g);
            if (rc == -DLG_EAGAIN)
                note_kept(ss, mark, s);
            else if (rc < 0)
                report(ss, mark, s, "flush", rc);
        }
        if (s->state) {
            guard_on(&g, s->host, s->spec, "close");
            ops->close(s->state);
            dlg_crash_guard_disarm(&g);
        }
        dlg_host_free(s->host);
    }
    free(ss->sinks);
    dlg_services_fini(&ss->svc);
    dlg_sigstack_off(ss->sigstack);
    ss->sigstack = NULL;
    ss->sinks = NULL;
    ss->n = 0;
}
