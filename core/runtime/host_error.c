/* The error slot of dlg_services: one text shared by every host and
 * thread of a cell, numbered errors, captures, and each thread's latest
 * error kept apart (host_error.h). */
#define _GNU_SOURCE
#include "host_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The latest error one thread raised through s into the slot (not into
 * a capture: that one is the capture's).  Two workers failing at once
 * each find their own backend's line here; the slot holds only the later
 * one. */
typedef struct dlg_thread_error {
    dlg_error said;
    struct dlg_thread_error *next;
} dlg_thread_error;

/* The calling thread's innermost capture, or NULL; under s->lock. */
static dlg_error_capture *own_capture(const dlg_services *s)
{
    for (dlg_error_capture *c = s->captures; c; c = c->next)
        if (pthread_equal(c->said.thread, pthread_self()))
            return c;
    return NULL;
}

/* The calling thread's record, or NULL; under s->lock. */
static dlg_thread_error *own_record(const dlg_services *s)
{
    for (dlg_thread_error *t = s->thread_errors; t; t = t->next)
        if (pthread_equal(t->said.thread, pthread_self()))
            return t;
    return NULL;
}

/* ... made at the thread's first error, so that no call that goes well
 * allocates.  A thread that ends leaves its record to one that gets its id
 * later: the gen of what it holds is older than that one's marks. */
static dlg_thread_error *new_record(dlg_services *s)
{
    dlg_thread_error *t = own_record(s);
    if (t || !(t = calloc(1, sizeof *t)))
        return t;
    t->next = s->thread_errors;
    s->thread_errors = t;
    return t;
}

void dlg_services_capture_begin(dlg_services *s, dlg_error_capture *c)
{
    memset(c, 0, sizeof *c);
    c->said.thread = pthread_self();
    pthread_mutex_lock(&s->lock);
    c->next = s->captures;
    s->captures = c;
    pthread_mutex_unlock(&s->lock);
}

void dlg_services_capture_end(dlg_services *s, dlg_error_capture *c)
{
    pthread_mutex_lock(&s->lock);
    dlg_error_capture **p = &s->captures;
    while (*p != c)
        p = &(*p)->next;
    *p = c->next;
    pthread_mutex_unlock(&s->lock);
}

void dlg_services_raise(dlg_services *s, const dlg_error *e)
{
    pthread_mutex_lock(&s->lock);
    dlg_error_capture *c = own_capture(s);
    dlg_error *to = c ? &c->said : &s->error;
    snprintf(to->text, sizeof to->text, "%s", e->text);
    to->head = e->head;
    to->code = e->code;
    to->thread = pthread_self();
    to->gen = s->errors + 1;
    __atomic_store_n(&s->errors, to->gen, __ATOMIC_RELEASE);
    /* a captured error is the capture's alone: once its call is over, it
     * was warned about and is no reason for a later failure of this thread */
    dlg_thread_error *t = c ? NULL : new_record(s);
    if (t)
        t->said = *to;
    pthread_mutex_unlock(&s->lock);
}

void dlg_services_vraise(dlg_services *s, int code, const char *context, const char *fmt, va_list ap)
{
    char msg[1536];
    vsnprintf(msg, sizeof msg, fmt, ap);
    dlg_error e;
    if (context && *context)
        snprintf(e.text, sizeof e.text, "%s: %s", context, msg);
    else
        snprintf(e.text, sizeof e.text, "%s", msg);
    e.head = context ? strnlen(context, sizeof e.text - 1) : 0;
    e.code = code;
    dlg_services_raise(s, &e);
}

bool dlg_services_said_here(dlg_services *s, uint64_t mark, dlg_error *out)
{
    pthread_mutex_lock(&s->lock);
    /* inside a capture, what was raised into it; else the thread's record
     * (none, out of memory for one: the slot, if still ours) */
    const dlg_error_capture *c = own_capture(s);
    const dlg_thread_error *t = c ? NULL : own_record(s);
    const dlg_error *e = c ? &c->said : t ? &t->said : &s->error;
    bool said = e->gen > mark && pthread_equal(e->thread, pthread_self());
    if (said && out)
        *out = *e;
    pthread_mutex_unlock(&s->lock);
    return said;
}

void dlg_services_errors_fini(dlg_services *s)
{
    for (dlg_thread_error *t = s->thread_errors, *next; t; t = next) {
        next = t->next;
        free(t);
    }
    s->thread_errors = NULL;
}

uint64_t dlg_services_mark(dlg_services *s) { return __atomic_load_n(&s->errors, __ATOMIC_ACQUIRE); }

int dlg_services_said(dlg_services *s, uint64_t since, uint64_t mark, char *buf, size_t len)
{
    pthread_mutex_lock(&s->lock);
    const dlg_error *e = &s->error;
    bool said = e->gen > mark || (e->gen > since && !pthread_equal(e->thread, pthread_self()));
    snprintf(buf, len, "%s", said ? e->text : "");
    int code = said ? e->code : 0;
    pthread_mutex_unlock(&s->lock);
    return code;
}

int dlg_services_fail(dlg_services *s, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dlg_services_vraise(s, code, NULL, fmt, ap);
    va_end(ap);
    return -code;
}

const char *dlg_services_error(dlg_services *s) { return s->error.text; }

int dlg_services_error_copy(dlg_services *s, char *buf, size_t len)
{
    pthread_mutex_lock(&s->lock);
    snprintf(buf, len, "%s", s->error.text);
    int code = s->error.code;
    pthread_mutex_unlock(&s->lock);
    return code;
}

void dlg_services_clear_error(dlg_services *s)
{
    pthread_mutex_lock(&s->lock);
    s->error.text[0] = '\0';
    s->error.code = 0;
    s->error.gen = 0;
    pthread_mutex_unlock(&s->lock);
}

const char *dlg_code_name(long long rc, char *buf, size_t len)
{
    static const char *const names[] = {NULL,          "DLG_EINVAL",  "DLG_EIO",  "DLG_ENOMEM", "DLG_ENOTSUP",
                                        "DLG_ECORRUPT", "DLG_EAGAIN", "DLG_ESTOP", "DLG_EINTERNAL"};
    unsigned long long c = rc < 0 ? 0ULL - (unsigned long long)rc : (unsigned long long)rc; /* LLONG_MIN too */
    if (c > 0 && c < sizeof names / sizeof *names)
        return names[c];
    snprintf(buf, len, "%lld, no DLG_E* code", rc);
    return buf;
}

void dlg_said_nothing(char *buf, size_t len, const char *ctx, const char *what, long long rc)
{
    char cn[48];
    const char *sep = *ctx ? ": " : "";
    if (rc == -DLG_ENOMEM || rc == DLG_ENOMEM)
        snprintf(buf, len, "%s%s%s: out of memory", ctx, sep, what);
    else
        snprintf(buf, len, "%s%s%s failed (%s) without saying why", ctx, sep, what, dlg_code_name(rc, cn, sizeof cn));
}
