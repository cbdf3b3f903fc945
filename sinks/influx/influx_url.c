/* The InfluxDB URL as messages show it.  Warnings and errors name the URL
 * and go to terminals, CI logs and issue reports, so the credentials a URL
 * may carry (http://user:PASSWORD@host/, or 1.x's ?u=user&p=PASSWORD) are
 * shown as "***". */
#include <stdbool.h>
#include <string.h>

#include "influx.h"

/* Query parameters InfluxDB takes a secret in (1.x p=; token= and
 * password= as proxies and compatibility layers spell it). */
static bool secret_param(const char *name, size_t n)
{
    static const char *const secret[] = {"p", "password", "token"};
    for (size_t i = 0; i < sizeof secret / sizeof *secret; i++)
        if (strlen(secret[i]) == n && strncmp(name, secret[i], n) == 0)
            return true;
    return false;
}

/* Appends the query q[0..n) ('&'-separated, without '?'), secrets hidden. */
static int add_query(dlg_sbuf *out, const char *q, size_t n)
{
    int rc = 0;
    for (const char *p = q, *e = q + n; p < e && rc == 0;) {
        const char *amp = memchr(p, '&', (size_t)(e - p));
        const char *end = amp ? amp : e;
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq && eq + 1 < end && secret_param(p, (size_t)(eq - p)))
            rc = sbuf_printf(out, "%.*s***", (int)(eq + 1 - p), p);
        else
            rc = sbuf_add(out, p, (size_t)(end - p));
        if (rc == 0 && amp)
            rc = sbuf_addc(out, '&');
        p = amp ? amp + 1 : e;
    }
    return rc;
}

int influx_url_shown(const char *url, dlg_sbuf *out)
{
    sbuf_truncate(out, 0);
    int rc = sbuf_reserve(out, strlen(url) + 1);
    /* the authority ends at the path, query or fragment; the last '@' in
     * it ends the user info, whose first ':' starts the password.  Without
     * a scheme (a url missing its http://, refused with this text) the
     * authority starts the url, after any "//". */
    size_t slen = strspn(url, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
    const char *auth = slen && strncmp(url + slen, "://", 3) == 0 ? url + slen + 3 : url + strspn(url, "/");
    const char *at = NULL;
    size_t alen = strcspn(auth, "/?#");
    for (size_t i = 0; i < alen; i++)
        if (auth[i] == '@')
            at = auth + i;
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL, *p = url;
    if (colon && rc == 0) {
        rc = sbuf_printf(out, "%.*s***", (int)(colon + 1 - url), url);
        p = at;
    }
    const char *query = auth + alen + strcspn(auth + alen, "?#");
    if (rc == 0)
        rc = sbuf_add(out, p, (size_t)(query - p));
    p = query;
    if (rc == 0 && *p == '?') {
        size_t qlen = strcspn(p + 1, "#");
        rc = sbuf_addc(out, '?');
        if (rc == 0)
            rc = add_query(out, p + 1, qlen);
        p += 1 + qlen;
    }
    return rc ? rc : sbuf_adds(out, p);
}
