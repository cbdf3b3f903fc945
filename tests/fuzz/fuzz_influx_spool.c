/* Fuzzes the InfluxDB sink's spool replay (sinks/influx/influx_spool.c with
 * influx_deliver.c): a spool file as a crash or a full disk may leave it,
 * and the offset file of an interrupted replay, sent to a stand-in for
 * InfluxDB (influx_http_post below) that answers by what a part holds:
 *   "!down" unreachable, "!deny" 401, "!big" 413, "!bad" lines refused
 *   (named in its error text; "!partial": the others were stored),
 *   else stored.
 * The input is the offset file's text (none when empty), '\n', the spool.
 * Exactly once: every whole line from the offset on ends up stored,
 * rejected (saved) or in the rewritten spool, once; a torn last line only
 * in the rejected file. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz_file.h"
#include "fuzz_host.h"
#include "fuzz_target.h"
#include "influx.h"

/* The stand-in for the HTTP transport: its state is the handle. */
struct influx_http {
    dlg_sbuf stored; /* lines InfluxDB took */
    dlg_sbuf err;    /* the last answer's error text */
    long status;
};

static bool has(const char *p, size_t n, const char *what) { return memmem(p, n, what, strlen(what)) != NULL; }

/* The line of body[0..len) quoted at q: the longest the text holds whole,
 * closed by "': "; NULL where none is. */
static const char *quoted_line(const char *q, const char *body, size_t len, size_t *k)
{
    const char *best = NULL;
    for (const char *p = body, *e = body + len; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
        if ((!best || n > *k) && strnlen(q, n) == n && strncmp(q, p, n) == 0 && strncmp(q + n, "': ", 3) == 0)
            best = p, *k = n;
        p += n + (nl != NULL);
    }
    return best;
}

/* Whether err names line[0..n) as unparseable: as influx_deliver.c reads
 * it, each quote passed over by the line of body it holds. */
static bool named(const char *err, const char *body, size_t len, const char *line, size_t n)
{
    static const char lead[] = "unable to parse '";
    size_t k = 0;
    for (const char *p = err; (p = strstr(p, lead));) {
        p += sizeof lead - 1;
        if (!quoted_line(p, body, len, &k))
            return false;
        if (k == n && memcmp(p, line, n) == 0)
            return true;
        p += k + 3;
    }
    return false;
}

/* "!bad" lines are quoted; with "!partial" the others are stored, where
 * the sink can tell which lines were named (said first: a quoted line may
 * hold a NUL byte, which ends the text). */
static influx_send refuse_lines(influx_http *c, const char *body, size_t len)
{
    dlg_sbuf q = {0};
    for (const char *p = body, *e = body + len; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
        if (has(p, n, "!bad")) {
            sbuf_adds(&q, "unable to parse '");
            sbuf_add(&q, p, n);
            sbuf_adds(&q, "': bad; ");
        }
        p += n + (nl != NULL);
    }
    bool partial = false;
    for (const char *p = body, *e = body + len; q.len && has(body, len, "!partial") && p < e && !partial;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
        partial = named(q.p, body, len, p, n);
        p += n + (nl != NULL);
    }
    if (partial)
        sbuf_adds(&c->err, "partial write; ");
    sbuf_adds(&c->err, q.p ? q.p : ""); /* as influx_http.c keeps the text: up to a NUL */
    sbuf_free(&q);
    for (const char *p = body, *e = body + len; partial && p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
        if (!named(c->err.p, body, len, p, n))
            sbuf_add(&c->stored, p, n + (nl != NULL));
        p += n + (nl != NULL);
    }
    return INFLUX_REJECTED;
}

influx_send influx_http_post(influx_http *c, const char *body, size_t len, uint64_t timeout_ns, char *why,
                             size_t whylen)
{
    (void)timeout_ns;
    sbuf_truncate(&c->err, 0);
    c->status = 0;
    snprintf(why, whylen, "stand-in");
    if (has(body, len, "!down"))
        return INFLUX_RETRY;
    if (has(body, len, "!deny"))
        return c->status = 401, INFLUX_DENIED;
    if (has(body, len, "!big"))
        return c->status = 413, INFLUX_TOO_LARGE;
    if (has(body, len, "!bad"))
        return c->status = 400, refuse_lines(c, body, len);
    sbuf_add(&c->stored, body, len);
    return c->status = 204, INFLUX_SENT;
}

const char *influx_http_tls_hint(const influx_http *c) { return (void)c, NULL; }
long influx_http_status(const influx_http *c) { return c->status; }
uint64_t influx_http_retry_after_ns(const influx_http *c) { return (void)c, 0; }
const char *influx_http_error(const influx_http *c) { return c->err.len ? c->err.p : ""; }
const char *influx_http_version(const influx_http *c) { return (void)c, ""; }

static uint64_t mono_ns(const dlg_host *h)
{
    (void)h;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool never(const dlg_host *h) { return (void)h, false; }

/* ---- the check ---- */
typedef struct span {
    const char *p;
    size_t n;
} span;

typedef struct lines {
    span *v;
    size_t n;
} lines;

/* Adds the '\n'-ended lines of p[0..n) (a last one without '\n' too). */
static void add_lines(lines *l, const char *p, size_t n)
{
    if (!n)
        return;
    for (const char *e = p + n; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t k = nl ? (size_t)(nl - p) : (size_t)(e - p);
        span *v = realloc(l->v, (l->n + 1) * sizeof *v);
        FUZZ_CHECK(v);
        l->v = v;
        l->v[l->n++] = (span){p, k};
        p += k + (nl != NULL);
    }
}

static int by_bytes(const void *a, const void *b)
{
    const span *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* Same lines, as many times each, in any order. */
static bool same_lines(lines *a, lines *b)
{
    if (a->n != b->n)
        return false;
    if (a->n == 0)
        return true;
    qsort(a->v, a->n, sizeof *a->v, by_bytes);
    qsort(b->v, b->n, sizeof *b->v, by_bytes);
    for (size_t i = 0; i < a->n; i++)
        if (by_bytes(&a->v[i], &b->v[i]) != 0)
            return false;
    return true;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (!f)
        return NULL;
    char *p = NULL;
    size_t cap = 0;
    for (size_t got = 1; got > 0; *n += got) {
        if (cap - *n < 4096) {
            char *q = realloc(p, cap += 65536);
            FUZZ_CHECK(q);
            p = q;
        }
        got = fread(p + *n, 1, cap - *n, f);
    }
    fclose(f);
    return p;
}

/* Where the replay starts: the offset file's, if it is a line start
 * within the whole lines (len bytes), else 0. */
static size_t start_offset(const uint8_t *sent, size_t nsent, const uint8_t *spool, size_t len)
{
    char text[32] = {0};
    memcpy(text, sent, nsent < sizeof text - 1 ? nsent : sizeof text - 1);
    unsigned long long off = strtoull(text, NULL, 10);
    return off > 0 && off <= len && spool[off - 1] == '\n' ? (size_t)off : 0;
}

static void put(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f && (n == 0 || fwrite(p, 1, n, f) == n) && fclose(f) == 0);
}

static void check_replay(influx_sink *s, influx_http *c, const uint8_t *spool, size_t size, size_t start)
{
    size_t whole = size;
    while (whole > 0 && spool[whole - 1] != '\n')
        whole--;
    FUZZ_CHECK(influx_spool_points(s) == (size_t)fuzz_count_lines(spool + start, whole - start));
    bool kept = false;
    size_t sent = 0;
    int rc = influx_spool_replay(s, false, UINT64_MAX, &kept, &sent);
    size_t nrej = 0, nleft = 0;
    char *rej = slurp(s->rejected_path, &nrej), *left = slurp(s->spool_path, &nleft);
    lines want = {0}, got = {0};
    add_lines(&want, (const char *)spool + start, size - start); /* the torn tail: rejected */
    add_lines(&got, c->stored.p, c->stored.len);
    add_lines(&got, rej, nrej);
    add_lines(&got, left, nleft);
    FUZZ_CHECK(same_lines(&want, &got));
    FUZZ_CHECK(kept || nleft == 0);
    FUZZ_CHECK(rc == 0 || nrej > 0);
    FUZZ_CHECK(nleft == 0 || left[nleft - 1] == '\n');
    char sent_path[4200];
    snprintf(sent_path, sizeof sent_path, "%s.sent", s->spool_path);
    FUZZ_CHECK(access(sent_path, F_OK) != 0); /* an offset of the old spool must not outlive it */
    free(want.v);
    free(got.v);
    free(rej);
    free(left);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    if (!nl || size > 65536)
        return 0;
    size_t nsent = (size_t)(nl - data), nspool = size - nsent - 1;
    const uint8_t *spool = nl + 1;
    char dir[64], path[128], sent[160], rejected[128], lock[160], tmp[160];
    fuzz_dir(dir, sizeof dir); /* tmpfs where there is one: the spool fsyncs every step */
    snprintf(path, sizeof path, "%s/f.lp", dir);
    snprintf(rejected, sizeof rejected, "%s/f.rejected.lp", dir);
    snprintf(sent, sizeof sent, "%s.sent", path);
    snprintf(lock, sizeof lock, "%s.lock", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    (void)mkdir(dir, 0700);
    put(path, spool, nspool);
    if (nsent)
        put(sent, data, nsent);
    fuzz_host fh;
    fuzz_host_init(&fh);
    fh.host.now_ns = mono_ns;
    fh.host.stopping = never;
    influx_http c = {0};
    influx_sink s = {.h = &fh.host, .name = "fuzz", .batch = 3, .timeout_ns = 1000000000, .http = &c,
                     .target = "stand-in", .spool_dir = dir, .spool_path = path, .rejected_path = rejected,
                     .fd = -1, .spool_fd = -1};
    size_t whole = nspool;
    while (whole > 0 && spool[whole - 1] != '\n')
        whole--;
    check_replay(&s, &c, spool, nspool, start_offset(data, nsent, spool, whole));
    sbuf_free(&c.stored);
    sbuf_free(&c.err);
    sbuf_free(&s.held);
    if (s.spool_fd >= 0) /* as the sink's close does: the next input must not inherit it */
        close(s.spool_fd);
    unlink(path);
    unlink(sent);
    unlink(rejected);
    unlink(lock);
    unlink(tmp);
    rmdir(dir);
    return 0;
}
