#include "point_wire.h"

#include "fd_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "DLGP"
#define MAX_FRAME (1u << 22)

typedef struct wbuf {
    unsigned char *p;
    size_t len, cap;
    bool oom;
} wbuf;

static void put(wbuf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 1024) + n;
        unsigned char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_u32(wbuf *b, uint32_t v) { put(b, &v, 4); }

static void put_str(wbuf *b, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : 0;
    put_u32(b, n);
    put(b, s, n);
}

int dlg_wire_send(int fd, const dlg_point *p)
{
    wbuf b = {0};
    put(&b, MAGIC, 4);
    put_u32(&b, 0); /* length, patched below */
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
    if (b.oom) {
        free(b.p);
        return -ENOMEM;
    }
    uint32_t len = (uint32_t)(b.len - 8);
    memcpy(b.p + 4, &len, 4);
    int e = dlg_write_all(fd, b.p, b.len);
    free(b.p);
    return -e;
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
    if (!body || !out->arena || read_all(fd, body, len) != 1) {
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
