#include "point_wire.h"

#include "fd_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "DLGP"
#define MAX_FRAME DLG_WIRE_MAX_FRAME

/* A frame on its way out, through a buffer of its own: sending allocates
 * nothing, so a cell short of memory still sends the result it measured.
 * One thread sends a process's frames (the runner's), so a frame written
 * in several writes cannot interleave with another. */
typedef struct wbuf {
    int fd;
    int err;            /* the first write's errno, then nothing more is written */
    size_t len;
    unsigned char p[4096];
} wbuf;

static void flush(wbuf *b)
{
    if (!b->err && b->len)
        b->err = dlg_write_all(b->fd, b->p, b->len);
    b->len = 0;
}

static void put(wbuf *b, const void *src, size_t n)
{
    const unsigned char *s = src;
    while (n > 0 && !b->err) { /* a NULL string is put as n = 0: memcpy wants a pointer */
        size_t k = sizeof b->p - b->len < n ? sizeof b->p - b->len : n;
        memcpy(b->p + b->len, s, k);
        b->len += k;
        s += k;
        n -= k;
        if (b->len == sizeof b->p)
            flush(b);
    }
}

static void put_u32(wbuf *b, uint32_t v) { put(b, &v, 4); }

static void put_str(wbuf *b, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : 0;
    put_u32(b, n);
    put(b, s, n);
}

static size_t str_size(const char *s) { return 4 + (s ? strlen(s) : 0); }

static size_t field_size(const dlg_field *f)
{
    size_t v = f->type == DLG_FIELD_STRING ? str_size(f->v.s) : f->type == DLG_FIELD_BOOL ? 1 : 8;
    return str_size(f->key) + 1 + v;
}

/* The frame's length (after its 8-byte header) for p. */
static size_t frame_size(const dlg_point *p)
{
    size_t n = str_size(p->measurement) + 8 + 4 + 4;
    for (size_t i = 0; i < p->ntags; i++)
        n += str_size(p->tags[i].key) + str_size(p->tags[i].value);
    for (size_t i = 0; i < p->nfields; i++)
        n += field_size(&p->fields[i]);
    return n;
}

/* Who sent the point, for messages: its workload tag, else its measurement. */
static const char *sender(const dlg_point *p)
{
    for (size_t i = 0; i < p->ntags; i++)
        if (p->tags[i].key && strcmp(p->tags[i].key, "workload") == 0 && p->tags[i].value)
            return p->tags[i].value;
    return p->measurement ? p->measurement : "?";
}

/* Index of the largest string field of p, or -1. */
static long largest_string(const dlg_point *p)
{
    long best = -1;
    for (size_t i = 0; i < p->nfields; i++)
        if (p->fields[i].type == DLG_FIELD_STRING &&
            (best < 0 || field_size(&p->fields[i]) > field_size(&p->fields[best])))
            best = (long)i;
    return best;
}

/* One line on stderr, the cell's channel for what the run should see. */
static void say(const dlg_point *p, const char *what)
{
    fprintf(stderr, "dlgauge: workload %s: its %s point %s\n", sender(p), p->measurement ? p->measurement : "?",
            what);
}

int dlg_wire_fit(const dlg_point *p, dlg_field *fields, dlg_point *out)
{
    char msg[512];
    if (p->ntags > DLG_WIRE_MAX_ITEMS || p->nfields > DLG_WIRE_MAX_ITEMS) {
        snprintf(msg, sizeof msg, "has %zu tags and %zu fields, more than the %d of either a point may carry to "
                 "the run: not sent", p->ntags, p->nfields, DLG_WIRE_MAX_ITEMS);
        say(p, msg);
        return -EMSGSIZE;
    }
    *out = *p;
    if (p->nfields) /* memcpy from NULL is undefined even for 0 bytes */
        memcpy(fields, p->fields, p->nfields * sizeof *fields);
    out->fields = fields;
    /* measured figures are kept: the largest strings go until it fits */
    for (size_t size; (size = frame_size(out)) > MAX_FRAME;) {
        long s = largest_string(out);
        if (s < 0) {
            snprintf(msg, sizeof msg, "is %zu bytes with no string field left to leave out, more than the %u a "
                     "point may be: not sent", size, MAX_FRAME);
            say(p, msg);
            return -EMSGSIZE;
        }
        snprintf(msg, sizeof msg, "is %zu bytes, more than the %u a point may be: its string field '%.64s' (%zu "
                 "bytes) is left out", size, MAX_FRAME, fields[s].key, fields[s].v.s ? strlen(fields[s].v.s) : 0);
        say(p, msg);
        memmove(&fields[s], &fields[s + 1], (out->nfields - (size_t)s - 1) * sizeof *fields);
        out->nfields--;
    }
    return 0;
}

int dlg_wire_send(int fd, const dlg_point *whole)
{
    dlg_field fields[DLG_WIRE_MAX_ITEMS];
    dlg_point fit;
    int rc = dlg_wire_fit(whole, fields, &fit);
    if (rc != 0)
        return rc;
    const dlg_point *p = &fit;
    wbuf b = {.fd = fd};
    put(&b, MAGIC, 4);
    put_u32(&b, (uint32_t)frame_size(p));
    put_str(&b, p->measurement);
    put(&b, &p->time_ns, 8);
    put_u32(&b, (uint32_t)p->ntags);
    for (size_t i = 0; i < p->ntags; i++) {
        put_str(&b, p->tags[i].key);
        put_str(&b, p->tags[i].value);
    }
    put_u32(&b, (uint32_t)p->nfields);
    for (size_t i = 0; i < p->nfields; i++) {
        const dlg_field *f = &p->fields[i];
        unsigned char t = (unsigned char)f->type;
        put_str(&b, f->key);
        put(&b, &t, 1);
        if (f->type == DLG_FIELD_STRING)
            put_str(&b, f->v.s);
        else if (f->type == DLG_FIELD_BOOL) {
            unsigned char v = f->v.b;
            put(&b, &v, 1);
        } else
            put(&b, &f->v, 8);
    }
    flush(&b);
    return -b.err;
}

static int read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return got == 0 && r == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return 1;
}

/* Reads past n bytes of a frame there is no memory for, so that the next
 * frame is read whole: 1, or -1 when the stream ends first. */
static int skip_body(int fd, size_t n)
{
    char chunk[4096];
    for (size_t k; n > 0; n -= k) {
        k = n < sizeof chunk ? n : sizeof chunk;
        if (read_all(fd, chunk, k) != 1)
            return -1;
    }
    return 1;
}

/* Copies n bytes into the arena as a NUL-terminated string. */
static char *arena_str(dlg_wire_point *wp, const char *s, size_t n)
{
    if (wp->used + n + 1 > wp->cap)
        return NULL; /* sized up front in recv, or grown by the setters */
    char *d = wp->arena + wp->used;
    memcpy(d, s, n);
    d[n] = '\0';
    wp->used += n + 1;
    return d;
}

typedef struct rbuf {
    const unsigned char *p;
    size_t len, off;
} rbuf;

static bool get(rbuf *r, void *dst, size_t n)
{
    if (r->off + n > r->len)
        return false;
    memcpy(dst, r->p + r->off, n);
    r->off += n;
    return true;
}

static const char *get_str(rbuf *r, dlg_wire_point *wp)
{
    uint32_t n;
    if (!get(r, &n, 4) || r->off + n > r->len)
        return NULL;
    const char *s = arena_str(wp, (const char *)r->p + r->off, n);
    r->off += n;
    return s;
}

static int decode(rbuf *r, dlg_wire_point *wp)
{
    uint32_t nt, nf;
    if (!(wp->point.measurement = get_str(r, wp)) || !get(r, &wp->point.time_ns, 8) || !get(r, &nt, 4) ||
        nt > DLG_WIRE_MAX_ITEMS)
        return -1;
    for (uint32_t i = 0; i < nt; i++)
        if (!(wp->tags[i].key = get_str(r, wp)) || !(wp->tags[i].value = get_str(r, wp)))
            return -1;
    if (!get(r, &nf, 4) || nf > DLG_WIRE_MAX_ITEMS)
        return -1;
    for (uint32_t i = 0; i < nf; i++) {
        dlg_field *f = &wp->fields[i];
        unsigned char t;
        if (!(f->key = get_str(r, wp)) || !get(r, &t, 1))
            return -1;
        f->type = (dlg_field_type)t;
        if (t == DLG_FIELD_STRING) {
            if (!(f->v.s = get_str(r, wp)))
                return -1;
        } else if (t == DLG_FIELD_BOOL) {
            unsigned char v;
            if (!get(r, &v, 1))
                return -1;
            f->v.b = v != 0;
        } else if (t >= DLG_FIELD_DOUBLE && t <= DLG_FIELD_UINT) {
            if (!get(r, &f->v, 8))
                return -1;
        } else
            return -1;
    }
    wp->point.ntags = nt;
    wp->point.nfields = nf;
    return 0;
}

int dlg_wire_recv(int fd, dlg_wire_point *out)
{
    memset(out, 0, sizeof *out);
    char hdr[8];
    int rc = read_all(fd, hdr, 8);
    if (rc <= 0)
        return rc;
    uint32_t len;
    memcpy(&len, hdr + 4, 4);
    if (memcmp(hdr, MAGIC, 4) != 0 || len > MAX_FRAME)
        return -1;
    unsigned char *body = malloc(len ? len : 1);
    /* strings can only shrink from the frame, plus a NUL each; 2x+ is ample */
    out->cap = (size_t)len * 2 + 4096;
    out->arena = malloc(out->cap);
    if (!body || !out->arena) {
        free(body);
        dlg_wire_point_free(out);
        return skip_body(fd, len) == 1 ? -ENOMEM : -1;
    }
    if (read_all(fd, body, len) != 1) {
        free(body);
        dlg_wire_point_free(out);
        return -1;
    }
    rbuf r = {body, len, 0};
    out->point.tags = out->tags;
    out->point.fields = out->fields;
    rc = decode(&r, out);
    free(body);
    if (rc != 0) {
        dlg_wire_point_free(out);
        return -1;
    }
    return 1;
}

void dlg_wire_point_free(dlg_wire_point *wp)
{
    free(wp->arena);
    memset(wp, 0, sizeof *wp);
}

void dlg_wire_point_move(dlg_wire_point *dst, dlg_wire_point *src)
{
    *dst = *src;
    dst->point.tags = dst->tags;
    dst->point.fields = dst->fields;
    memset(src, 0, sizeof *src);
}

int dlg_wire_point_init(dlg_wire_point *wp, const char *measurement, int64_t time_ns)
{
    memset(wp, 0, sizeof *wp);
    wp->cap = 16384;
    if (!(wp->arena = malloc(wp->cap)))
        return -1;
    wp->point.tags = wp->tags;
    wp->point.fields = wp->fields;
    wp->point.time_ns = time_ns;
    wp->point.measurement = arena_str(wp, measurement, strlen(measurement));
    return wp->point.measurement ? 0 : -1;
}

/* Setter strings go to the arena too; pointers into it must stay valid,
 * so it never moves: a full arena is an error. */
static const char *copy(dlg_wire_point *wp, const char *s) { return arena_str(wp, s, strlen(s)); }

int dlg_wire_set_tag(dlg_wire_point *wp, const char *key, const char *value)
{
    const char *v = copy(wp, value);
    if (!v || !value[0])
        return -1;
    size_t n = wp->point.ntags, i = 0;
    while (i < n && strcmp(wp->tags[i].key, key) < 0)
        i++;
    if (i < n && strcmp(wp->tags[i].key, key) == 0) {
        wp->tags[i].value = v;
        return 0;
    }
    const char *k = copy(wp, key);
    if (!k || n == DLG_WIRE_MAX_ITEMS)
        return -1;
    memmove(&wp->tags[i + 1], &wp->tags[i], (n - i) * sizeof wp->tags[0]);
    wp->tags[i] = (dlg_tag){k, v};
    wp->point.ntags = n + 1;
    return 0;
}

int dlg_wire_add_field(dlg_wire_point *wp, const dlg_field *f)
{
    dlg_field c = *f;
    if (!(c.key = copy(wp, f->key)) || (f->type == DLG_FIELD_STRING && !(c.v.s = copy(wp, f->v.s))))
        return -1;
    for (size_t i = 0; i < wp->point.nfields; i++)
        if (strcmp(wp->fields[i].key, c.key) == 0) {
            wp->fields[i] = c;
            return 0;
        }
    if (wp->point.nfields == DLG_WIRE_MAX_ITEMS)
        return -1;
    wp->fields[wp->point.nfields++] = c;
    return 0;
}

const dlg_field *dlg_wire_field(const dlg_wire_point *wp, const char *key)
{
    for (size_t i = 0; i < wp->point.nfields; i++)
        if (strcmp(wp->fields[i].key, key) == 0)
            return &wp->fields[i];
    return NULL;
}
