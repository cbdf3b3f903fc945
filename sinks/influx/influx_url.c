/* The InfluxDB URL as messages show it.  Warnings and errors name the URL
 * and go to terminals, CI logs and issue reports, so the credentials a URL
 * may carry (http://user:PASSWORD@host/, or 1.x's ?u=user&p=PASSWORD) are
 * shown as "***".
 *
 * libcurl parses the URL, as it does to send: the password is what curl
 * would send as one.  A URL curl cannot parse (a password with an
 * unescaped '/', '?', '#' or '@' ends the authority early, which then
 * holds no valid host or port) is cut by hand, hiding everything from the
 * first ':' to the last '@': more than the password, never less. */
#include <curl/curl.h>
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

/* Where url's authority starts: after "scheme://", else after any "//"
 * (a url missing its http://, refused with this text). */
static const char *authority(const char *url)
{
    size_t slen = strspn(url, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
    return slen && strncmp(url + slen, "://", 3) == 0 ? url + slen + 3 : url + strspn(url, "/");
}

bool influx_url_port_ok(const char *url)
{
    /* the host after the user info, cut as shown_by_hand cuts it */
    const char *auth = authority(url), *at = strrchr(auth, '@'), *host = at ? at + 1 : auth;
    const char *end = host + strcspn(host, "/?#"), *colon = NULL;
    if (*host == '[') {
        const char *close = memchr(host, ']', (size_t)(end - host));
        colon = close && close + 1 < end && close[1] == ':' ? close + 1 : NULL;
    } else {
        for (const char *p = host; p < end; p++)
            colon = *p == ':' ? p : colon;
    }
    /* none, or empty: the scheme's own */
    return !colon || colon + 1 == end || influx_port_ok(colon + 1, (size_t)(end - colon - 1));
}

bool influx_port_ok(const char *port, size_t len)
{
    unsigned long v = 0;
    for (size_t i = 0; i < len; i++)
        if (port[i] < '0' || port[i] > '9' || (v = v * 10 + (unsigned long)(port[i] - '0')) > 65535)
            return false;
    return v > 0;
}

/* url cut by hand (see the top): user info up to the last '@'. */
static int shown_by_hand(const char *url, dlg_sbuf *out)
{
    const char *auth = authority(url), *at = strrchr(auth, '@');
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL, *p = url;
    int rc = 0;
    if (colon) {
        rc = sbuf_printf(out, "%.*s***", (int)(colon + 1 - url), url);
        p = at;
    }
    const char *query = p + strcspn(p, "?#");
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

/* A URL curl reads as host:PORT/path with an '@' in the path may be a
 * password of digits followed by '/' (http://user:12/34@host/): cut by
 * hand, so that it does not show. */
static bool ambiguous(CURLU *u, const char *url)
{
    char *user = NULL, *port = NULL;
    bool has_user = curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK;
    bool has_port = curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK;
    curl_free(user);
    curl_free(port);
    const char *auth = authority(url), *rest = auth + strcspn(auth, "/?#");
    return !has_user && has_port && memchr(rest, '@', strcspn(rest, "?#")) != NULL;
}

/* The URL curl parsed into u, password and secret parameters hidden. */
static int shown_parsed(CURLU *u, dlg_sbuf *out)
{
    char *pw = NULL, *query = NULL, *full = NULL;
    dlg_sbuf q = {0};
    int rc = 0;
    if (curl_url_get(u, CURLUPART_PASSWORD, &pw, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_PASSWORD, "***", 0) != CURLUE_OK)
        rc = -DLG_ENOMEM;
    if (rc == 0 && curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK) {
        rc = add_query(&q, query, strlen(query));
        if (rc == 0 && curl_url_set(u, CURLUPART_QUERY, q.p ? q.p : "", 0) != CURLUE_OK)
            rc = -DLG_ENOMEM;
    }
    if (rc == 0)
        rc = curl_url_get(u, CURLUPART_URL, &full, 0) == CURLUE_OK ? sbuf_adds(out, full) : -DLG_ENOMEM;
    curl_free(pw);
    curl_free(query);
    curl_free(full);
    sbuf_free(&q);
    return rc;
}

int influx_url_shown(const char *url, dlg_sbuf *out)
{
    sbuf_truncate(out, 0);
    int rc = sbuf_reserve(out, strlen(url) + 1);
    CURLU *u = rc == 0 ? curl_url() : NULL;
    if (!u)
        return -DLG_ENOMEM;
    if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS) == CURLUE_OK &&
        !ambiguous(u, url))
        rc = shown_parsed(u, out);
    else
        rc = shown_by_hand(url, out);
    curl_url_cleanup(u);
    return rc;
}
