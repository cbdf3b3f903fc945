/* HTTP transport of the InfluxDB sink: one libcurl easy handle, created
 * once and reused so the connection stays alive between batches. */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "influx.h"

/* A rejected request's body is only read for its error text. */
#define MAX_BODY 65536

struct influx_http {
    CURL *curl;
    char *url;
    dlg_sbuf shown; /* url for messages, credentials hidden */
    struct curl_slist *headers;
    char errbuf[CURL_ERROR_SIZE];
    dlg_sbuf body;
    dlg_sbuf err;         /* InfluxDB's error text, whole */
    char header_err[512]; /* X-Influxdb-Error */
    char version[64];     /* X-Influxdb-Version of the last answer ("": none) */
    uint64_t retry_after_ns;
    long status; /* of the last answer (0: none) */
    bool ca_cert; /* a CA file of the user's is trusted */
    const char *tls_hint; /* the last request failed on InfluxDB's certificate: what to fix */
    bool query_lost;      /* the last request went out without the url's query (on_request) */
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    influx_http *c = ud;
    size_t len = size * n;
    if (c->body.len < MAX_BODY)
        sbuf_add(&c->body, p, len < MAX_BODY - c->body.len ? len : MAX_BODY - c->body.len);
    return len;
}

/* The value of header line p[0..len) when it is `name`, trimmed; NULL
 * otherwise. */
static const char *header_value(const char *p, size_t len, const char *name, size_t *vlen)
{
    size_t n = strlen(name);
    if (len <= n || strncasecmp(p, name, n) != 0)
        return NULL;
    const char *v = p + n;
    *vlen = len - n;
    while (*vlen && (*v == ' ' || *v == '\t'))
        v++, (*vlen)--;
    while (*vlen && (v[*vlen - 1] == '\r' || v[*vlen - 1] == '\n' || v[*vlen - 1] == ' '))
        (*vlen)--;
    return v;
}

/* Retry-After (RFC 9110): delay-seconds, or an HTTP-date (a proxy or load
 * balancer in front of InfluxDB may send one), as a wait from now; 0 when
 * unreadable or past.  Capped by whoever waits (INFLUX_RETRY_AFTER_MAX_NS). */
static uint64_t parse_retry_after(const char *v, size_t vlen)
{
    char text[64];
    if (vlen == 0 || vlen >= sizeof text)
        return 0;
    memcpy(text, v, vlen);
    text[vlen] = '\0';
    if (strspn(text, "0123456789") == vlen) {
        unsigned long long sec = vlen > 9 ? 999999999ull : strtoull(text, NULL, 10);
        return (uint64_t)sec * 1000000000u;
    }
    time_t at = curl_getdate(text, NULL), now = time(NULL);
    return at == (time_t)-1 || at <= now ? 0 : (uint64_t)(at - now) * 1000000000u;
}

/* The request as libcurl sent it (its debug output, which it gives only
 * with CURLOPT_VERBOSE): whether its target kept the url's query.  libcurl
 * 7.88 drops the query when it has no memory to copy it as it connects,
 * and sends the request all the same: InfluxDB 1.x then answers 400
 * "database is required", which would reject good points for the want of
 * a few bytes on this side. */
static int on_request(CURL *e, curl_infotype type, char *p, size_t n, void *ud)
{
    (void)e;
    influx_http *c = ud;
    if (type != CURLINFO_HEADER_OUT)
        return 0;
    const char *eol = memchr(p, '\n', n), *sp = memchr(p, ' ', n);
    size_t line = eol ? (size_t)(eol - p) : n;
    if (sp && (size_t)(sp - p) < line) { /* "POST TARGET HTTP/1.1" */
        const char *target = sp + 1, *end = memchr(target, ' ', line - (size_t)(target - p));
        size_t tl = end ? (size_t)(end - target) : line - (size_t)(target - p);
        c->query_lost = strchr(c->url, '?') && !memchr(target, '?', tl);
    }
    return 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    influx_http *c = ud;
    size_t len = size * n, vlen;
    const char *v;
    if ((v = header_value(p, len, "X-Influxdb-Error:", &vlen)))
        snprintf(c->header_err, sizeof c->header_err, "%.*s", (int)vlen, v);
    else if ((v = header_value(p, len, "Retry-After:", &vlen)))
        c->retry_after_ns = parse_retry_after(v, vlen);
    else if ((v = header_value(p, len, "X-Influxdb-Version:", &vlen)))
        snprintf(c->version, sizeof c->version, "%.*s", (int)vlen, v);
    return len;
}

/* The value of the first parameter `key` (with its '=') of query q, up
 * to the next '&'; NULL when q has none. */
static const char *query_value(const char *q, const char *key, size_t *len)
{
    size_t n = strlen(key);
    for (const char *s = q; s && *s; s = strchr(s, '&') ? strchr(s, '&') + 1 : NULL)
        if (strncmp(s, key, n) == 0) {
            *len = strcspn(s + n, "&");
            return s + n;
        }
    return NULL;
}

static bool query_has(const char *q, const char *key)
{
    size_t len;
    return query_value(q, key, &len) != NULL;
}

/* Whether url starts with http:// or https:// (any case, as curl reads it). */
static bool http_scheme(const char *url)
{
    return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

/* uc, noting in *oom when libcurl had no memory for a URL call: the URL
 * is then not the user's fault, nor a URL built without that part right */
static CURLUcode url_call(CURLUcode uc, bool *oom)
{
    *oom |= uc == CURLUE_OUT_OF_MEMORY;
    return uc;
}

/* Whether u's path ends in /write, 1.x's write endpoint (behind a
 * proxy's prefix, maybe): any other path answers 404 "page not found". */
static bool write_path(CURLU *u, bool *oom)
{
    char *path = NULL;
    if (url_call(curl_url_get(u, CURLUPART_PATH, &path, 0), oom) != CURLUE_OK)
        return false;
    size_t n = strlen(path);
    bool ok = n >= 6 && strcmp(path + n - 6, "/write") == 0;
    curl_free(path);
    return ok;
}

/* A 1.x URL's database and path, of u parsed whole (query: its query):
 * 0, or the host's error (DLG_ENOMEM when libcurl had no memory to read
 * the path). */
static int check_v1(const dlg_host *h, CURLU *u, const char *query, const char *shown, bool *oom)
{
    size_t dblen;
    if (!query_has(query, "db="))
        return h->error(h, DLG_EINVAL,
                        "url = %s: has no db= parameter; write http://HOST:8086/write?db=NAME "
                        "(InfluxDB 1.x) or set org, bucket and token (2.x)", shown);
    if (!write_path(u, oom))
        return *oom ? h->error(h, DLG_ENOMEM, "url = %s: out of memory reading it", shown)
                    : h->error(h, DLG_EINVAL, "url = %s: InfluxDB 1.x writes at a path ending in /write; write "
                               "http://HOST:8086/write?db=NAME (2.x: the server root with org, bucket and token)",
                               shown);
    if (query_value(query, "db=", &dblen) && dblen == 0)
        return h->error(h, DLG_EINVAL, "url = %s: db= names no database; write http://HOST:8086/write?db=NAME "
                        "(InfluxDB 1.x: the database must exist)", shown);
    return 0;
}

/* 1.x: http://host:8086/write?db=NAME, precision=ns added.
 * 2.x: server root (or a proxy prefix) + /api/v2/write?org=&bucket=&precision=ns. */
static int build_url(const dlg_host *h, const influx_http_conf *conf, bool v2, char **out)
{
    CURLU *u = curl_url();
    if (!u)
        return h->error(h, DLG_ENOMEM, "out of memory");
    dlg_sbuf shown = {0}; /* the url for messages */
    int rc = 0;
    char *scheme = NULL, *query = NULL, *path = NULL;
    if (influx_url_shown(conf->url, &shown) != 0) {
        rc = h->error(h, DLG_ENOMEM, "out of memory");
        goto out;
    }
    /* curl refuses a port past 65535 or not a number as it does another
     * scheme, and takes port 0, where nothing is ever reached */
    if (http_scheme(conf->url) && !influx_url_port_ok(conf->url)) {
        rc = h->error(h, DLG_EINVAL, "url = %s: the port must be a number from 1 to 65535", shown.p);
        goto out;
    }
    bool oom = false; /* each check below is of the URL only once this is false */
    if (url_call(curl_url_set(u, CURLUPART_URL, conf->url, 0), &oom) != CURLUE_OK ||
        url_call(curl_url_get(u, CURLUPART_SCHEME, &scheme, 0), &oom) != CURLUE_OK ||
        (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
        rc = oom ? h->error(h, DLG_ENOMEM, "url = %s: out of memory reading it", shown.p)
                 : h->error(h, DLG_EINVAL, "url = %s: not an http:// or https:// URL", shown.p);
        goto out;
    }
    if (url_call(curl_url_get(u, CURLUPART_QUERY, &query, 0), &oom) != CURLUE_OK)
        query = NULL;
    if (v2) {
        if (url_call(curl_url_get(u, CURLUPART_PATH, &path, 0), &oom) != CURLUE_OK)
            path = NULL;
        size_t plen = path ? strlen(path) : 0;
        while (plen && path[plen - 1] == '/')
            plen--;
        char full[1024];
        static const char api[] = "/api/v2/write";
        bool has_api = plen >= sizeof api - 1 && !strncmp(path + plen - (sizeof api - 1), api, sizeof api - 1);
        snprintf(full, sizeof full, "%.*s%s", (int)plen, path ? path : "", has_api ? "" : api);
        char org[512], bucket[512];
        snprintf(org, sizeof org, "org=%s", conf->org);
        snprintf(bucket, sizeof bucket, "bucket=%s", conf->bucket);
        url_call(curl_url_set(u, CURLUPART_PATH, full, 0), &oom);
        url_call(curl_url_set(u, CURLUPART_QUERY, NULL, 0), &oom);
        url_call(curl_url_set(u, CURLUPART_QUERY, org, CURLU_APPENDQUERY | CURLU_URLENCODE), &oom);
        url_call(curl_url_set(u, CURLUPART_QUERY, bucket, CURLU_APPENDQUERY | CURLU_URLENCODE), &oom);
    } else if (!oom && (rc = check_v1(h, u, query, shown.p, &oom)) != 0) {
        goto out;
    }
    if (!oom && query_has(query, "precision=") && !query_has(query, "precision=ns")) {
        rc = h->error(h, DLG_EINVAL, "url = %s: dlgauge sends nanosecond timestamps; drop precision= "
                      "or use precision=ns", shown.p);
        goto out;
    }
    if (!query_has(query, "precision=") || v2)
        url_call(curl_url_set(u, CURLUPART_QUERY, "precision=ns", CURLU_APPENDQUERY), &oom);
    if (oom) {
        rc = h->error(h, DLG_ENOMEM, "url = %s: out of memory reading it", shown.p);
        goto out;
    }
    char *full = NULL;
    if (curl_url_get(u, CURLUPART_URL, &full, 0) != CURLUE_OK || !(*out = strdup(full)))
        rc = h->error(h, DLG_ENOMEM, "out of memory");
    curl_free(full);
out:
    curl_free(scheme);
    curl_free(query);
    curl_free(path);
    curl_url_cleanup(u);
    sbuf_free(&shown);
    return rc;
}

/* curl's limits in ms; 0 would mean none, so at least 1. */
static void set_timeout(CURL *e, uint64_t timeout_ns)
{
    long ms = (long)(timeout_ns / 1000000u);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ms > 0 ? ms : 1L);
}

static int setup_handle(const dlg_host *h, const influx_http_conf *conf, bool v2, influx_http *c)
{
    c->headers = curl_slist_append(NULL, "Content-Type: text/plain; charset=utf-8");
    /* No "Expect: 100-continue" round trip for large batches. */
    c->headers = c->headers ? curl_slist_append(c->headers, "Expect:") : NULL;
    if (v2 && conf->token && c->headers) {
        char *auth = NULL; /* as long as the token is: a longer one was cut */
        if (asprintf(&auth, "Authorization: Token %s", conf->token) < 0)
            auth = NULL;
        c->headers = auth ? curl_slist_append(c->headers, auth) : (curl_slist_free_all(c->headers), NULL);
        free(auth);
    }
    if (!c->headers || !(c->curl = curl_easy_init()))
        return h->error(h, DLG_ENOMEM, "out of memory setting up libcurl");
    CURL *e = c->curl;
    curl_easy_setopt(e, CURLOPT_URL, c->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    set_timeout(e, conf->timeout_ns);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, on_request);
    curl_easy_setopt(e, CURLOPT_DEBUGDATA, c);
    curl_easy_setopt(e, CURLOPT_VERBOSE, 1L); /* to on_request, nothing printed */
    /* Connect only to what the user configured: no proxy from the
     * environment, no redirects, no other protocols. */
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    if (conf->user && *conf->user) {
        curl_easy_setopt(e, CURLOPT_USERNAME, conf->user);
        curl_easy_setopt(e, CURLOPT_PASSWORD, conf->password ? conf->password : "");
    }
    influx_tls_setup(h, e, conf, c->shown.p);
    c->ca_cert = conf->ca_cert != NULL;
    return 0;
}

/* 2.x (org, bucket, token) is all or nothing. */
static int check_v2(const dlg_host *h, const influx_http_conf *conf, bool *v2)
{
    *v2 = conf->org || conf->bucket || conf->token;
    if (!*v2 || (conf->org && conf->bucket && conf->token))
        return 0;
    /* named by the first key given (its line); never the token's value */
    const char *key = conf->org ? "org" : conf->bucket ? "bucket" : "token";
    const char *value = conf->org ? conf->org : conf->bucket ? conf->bucket : "(hidden)";
    return h->error(h, DLG_EINVAL, "%s = %s: InfluxDB 2.x needs all of org, bucket and token (missing %s)", key,
                    value, !conf->org ? "org" : !conf->bucket ? "bucket" : "token");
}

int influx_http_check(const dlg_host *h, const influx_http_conf *conf)
{
    bool v2;
    char *url = NULL;
    int rc = check_v2(h, conf, &v2);
    if (rc == 0)
        rc = build_url(h, conf, v2, &url);
    if (rc == 0)
        rc = influx_tls_check(h, conf);
    free(url);
    return rc;
}

int influx_http_open(const dlg_host *h, const influx_http_conf *conf, bool *v2, influx_http **out)
{
    bool any2;
    int rc = check_v2(h, conf, &any2);
    if (rc != 0)
        return rc;
    influx_http *c = calloc(1, sizeof *c);
    if (!c)
        return h->error(h, DLG_ENOMEM, "out of memory");
    rc = build_url(h, conf, any2, &c->url);
    if (rc == 0 && influx_url_shown(c->url, &c->shown) != 0)
        rc = h->error(h, DLG_ENOMEM, "out of memory");
    if (rc == 0)
        rc = influx_tls_check(h, conf);
    if (rc == 0)
        rc = setup_handle(h, conf, any2, c);
    if (rc != 0) {
        influx_http_close(c);
        return rc;
    }
    *v2 = any2;
    *out = c;
    return 0;
}

const char *influx_http_url(const influx_http *c) { return c->shown.p; }

/* InfluxDB's own words: {"error": ...} (1.x), {"message": ...} (2.x), the
 * X-Influxdb-Error header, else the start of the body. */
static void error_text(influx_http *c, long status, char *why, size_t whylen)
{
    const char *text = NULL;
    json_object *root = c->body.len ? json_tokener_parse(c->body.p) : NULL, *v = NULL;
    if (root && (json_object_object_get_ex(root, "error", &v) || json_object_object_get_ex(root, "message", &v)))
        text = json_object_get_string(v);
    if (!text && c->header_err[0])
        text = c->header_err;
    if (!text && c->body.len)
        text = c->body.p;
    sbuf_truncate(&c->err, 0);
    if (text)
        sbuf_adds(&c->err, text);
    snprintf(why, whylen, "HTTP %ld: %.300s", status, text ? text : "(no error text)");
    for (char *p = why; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    json_object_put(root);
}

influx_send influx_http_post(influx_http *c, const char *body, size_t len, uint64_t timeout_ns, char *why,
                             size_t whylen)
{
    set_timeout(c->curl, timeout_ns);
    sbuf_truncate(&c->body, 0);
    sbuf_truncate(&c->err, 0);
    c->header_err[0] = '\0';
    c->version[0] = '\0';
    c->errbuf[0] = '\0';
    c->retry_after_ns = 0;
    c->status = 0;
    c->tls_hint = NULL;
    c->query_lost = false;
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    CURLcode cc = curl_easy_perform(c->curl);
    if (cc != CURLE_OK) {
        /* the URL is the one build_url had libcurl parse at open: libcurl
         * 7.88 answers "malformed" when it runs out of memory parsing it */
        snprintf(why, whylen, "%s%s", c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc),
                 cc == CURLE_URL_MALFORMAT ? ", for the URL it parsed when the sink opened: libcurl says so "
                                             "when it runs out of memory parsing it"
                                           : "");
        /* an untrusted certificate stays untrusted: retries cannot help */
        c->tls_hint = influx_tls_hint(cc, c->ca_cert);
        return c->tls_hint ? INFLUX_DENIED : INFLUX_RETRY;
    }
    long status = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    c->status = status;
    if (c->query_lost && !(status >= 200 && status < 300)) {
        /* the answer is to a request that named no database: not the points' */
        snprintf(why, whylen, "libcurl sent the request without the url's query (?db=, or org and bucket): it "
                 "drops it when it runs out of memory connecting (libcurl 7.88), and InfluxDB answered HTTP %ld to "
                 "that",
                 status);
        return INFLUX_RETRY;
    }
    if (status >= 200 && status < 300)
        return INFLUX_SENT;
    error_text(c, status, why, whylen);
    if (status >= 500 || status == 429 || status == 408)
        return INFLUX_RETRY;
    /* 1.x and 2.x both answer a bad token/user (401), a missing write
     * right (403) or an unknown database, org or bucket (404) for the whole
     * request: the configuration is wrong, not the points; so is a URL
     * that a proxy redirects (redirects are not followed) */
    if (status == 401 || status == 403 || status == 404 || (status >= 300 && status < 400))
        return INFLUX_DENIED;
    return status == 413 ? INFLUX_TOO_LARGE : INFLUX_REJECTED;
}

long influx_http_status(const influx_http *c) { return c->status; }

const char *influx_http_tls_hint(const influx_http *c) { return c->tls_hint; }

uint64_t influx_http_retry_after_ns(const influx_http *c) { return c->retry_after_ns; }

const char *influx_http_error(const influx_http *c) { return c->err.len ? c->err.p : ""; }

const char *influx_http_version(const influx_http *c) { return c->version; }

void influx_http_close(influx_http *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    curl_slist_free_all(c->headers);
    sbuf_free(&c->body);
    sbuf_free(&c->err);
    sbuf_free(&c->shown);
    free(c->url);
    free(c);
}
