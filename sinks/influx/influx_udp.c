/* UDP transport of the InfluxDB sink (InfluxDB 1.x [[udp]] listener,
 * Telegraf socket_listener): whole lines packed into datagrams of at most
 * `payload` bytes, since a line cut in two is a broken point. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "influx.h"

/* Largest UDP payload over IPv4. */
#define UDP_MAX 65507
/* Addresses of a name kept to fall back on. */
#define UDP_ADDRS 8

/* One address the name resolved to. */
typedef struct udp_addr {
    struct sockaddr_storage sa;
    socklen_t len;
    int family, socktype, protocol;
} udp_addr;

struct influx_udp {
    const dlg_host *h;
    int fd;
    size_t payload;
    char target[300];
    char host[256];           /* as configured */
    udp_addr addr[UDP_ADDRS]; /* in getaddrinfo's order */
    size_t naddr, cur;        /* addr[cur] is the one sent to */
    bool warned_send, warned_long;
};

/* "host:port" or "[v6addr]:port" */
static int split_hostport(const char *s, char *host, size_t hostlen, const char **port)
{
    const char *colon;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end || end[1] != ':')
            return -1;
        snprintf(host, hostlen, "%.*s", (int)(end - s - 1), s + 1);
        colon = end + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon || colon == s)
            return -1;
        snprintf(host, hostlen, "%.*s", (int)(colon - s), s);
    }
    *port = colon + 1;
    return **port ? 0 : -1;
}

int influx_udp_check(const dlg_host *h, const char *hostport)
{
    char host[256];
    const char *port;
    if (split_hostport(hostport, host, sizeof host, &port) != 0)
        return h->error(h, DLG_EINVAL, "udp = %s: expected HOST:PORT (or [IPv6]:PORT)", hostport);
    if (!influx_port_ok(port, strlen(port))) /* else every datagram goes astray unnoticed */
        return h->error(h, DLG_EINVAL, "udp = %s: the port must be a number from 1 to 65535", hostport);
    return 0;
}

/* The DLG_E* code of a getaddrinfo failure: a name server that does not
 * answer now (or no memory, or a system error) may pass by itself (the
 * next run retries); a name or port that does not resolve needs a
 * person. */
static int gai_code(int gai)
{
    switch (gai) {
    case EAI_AGAIN:
        return DLG_EAGAIN;
    case EAI_MEMORY:
        return DLG_ENOMEM;
    case EAI_SYSTEM:
        return DLG_EIO;
    default:
        return DLG_EINVAL;
    }
}

/* "ADDR:PORT" or "[ADDR]:PORT" of a. */
static const char *addr_text(const udp_addr *a, char *buf, size_t n)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    const struct sockaddr_in *v4 = (const struct sockaddr_in *)&a->sa;
    const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&a->sa;
    bool six = a->family == AF_INET6;
    inet_ntop(a->family, six ? (const void *)&v6->sin6_addr : (const void *)&v4->sin_addr, ip, sizeof ip);
    snprintf(buf, n, six ? "[%s]:%u" : "%s:%u", ip, ntohs(six ? v6->sin6_port : v4->sin_port));
    return buf;
}

/* A socket connected to u->addr[i] (connect() on UDP only fixes the peer,
 * so send() reports errors), or -1 with errno set. */
static int connect_addr(const influx_udp *u, size_t i)
{
    const udp_addr *a = &u->addr[i];
    int fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)&a->sa, a->len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        fd = -1;
    }
    return fd;
}

/* Connects to the first address from u->cur on that takes a socket;
 * u->cur becomes its index.  0 or an errno value. */
static int connect_from(influx_udp *u)
{
    int err = EADDRNOTAVAIL;
    for (; u->cur < u->naddr; u->cur++) {
        int fd = connect_addr(u, u->cur);
        if (fd >= 0) {
            u->fd = fd;
            return 0;
        }
        err = errno;
    }
    return err;
}

/* Resolves u->host and keeps its first UDP_ADDRS addresses. */
static int resolve(influx_udp *u, const char *hostport, const char *port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *ai = NULL;
    int gai = getaddrinfo(u->host, port, &hints, &ai);
    if (gai != 0)
        return u->h->error(u->h, gai_code(gai), "udp = %s: %s", hostport,
                           gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai));
    for (struct addrinfo *a = ai; a && u->naddr < UDP_ADDRS; a = a->ai_next) {
        if (a->ai_addrlen > sizeof u->addr[0].sa)
            continue;
        udp_addr *d = &u->addr[u->naddr++];
        memcpy(&d->sa, a->ai_addr, a->ai_addrlen);
        d->len = a->ai_addrlen;
        d->family = a->ai_family;
        d->socktype = a->ai_socktype;
        d->protocol = a->ai_protocol;
    }
    freeaddrinfo(ai);
    return 0;
}

/* Which address a name chose is worth a line: `localhost` may be ::1 to
 * the sink and 127.0.0.1 to the listener. */
static void say_chosen(const influx_udp *u)
{
    unsigned char ip[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, u->host, ip) == 1 || inet_pton(AF_INET6, u->host, ip) == 1)
        return; /* an address was written: no choice made */
    char buf[80];
    u->h->log(u->h, DLG_LOG_INFO, "udp = %s: sending to %s, address %zu of %zu of %s%s", u->target,
              addr_text(&u->addr[u->cur], buf, sizeof buf), u->cur + 1, u->naddr, u->host,
              u->cur + 1 < u->naddr ? " (the next one if it refuses)" : "");
}

int influx_udp_open(const dlg_host *h, const char *hostport, size_t payload, influx_udp **out)
{
    const char *port;
    int rc = influx_udp_check(h, hostport);
    if (rc != 0)
        return rc;
    influx_udp *u = calloc(1, sizeof *u);
    if (!u)
        return h->error(h, DLG_ENOMEM, "out of memory");
    *u = (influx_udp){.h = h, .fd = -1, .payload = payload};
    snprintf(u->target, sizeof u->target, "%s", hostport);
    split_hostport(hostport, u->host, sizeof u->host, &port);
    rc = resolve(u, hostport, port);
    int e = rc == 0 ? connect_from(u) : 0;
    if (e != 0)
        rc = h->error(h, DLG_EIO, "udp = %s: %s", hostport, strerror(e));
    if (rc != 0) {
        free(u);
        return rc;
    }
    say_chosen(u);
    *out = u;
    return 0;
}

const char *influx_udp_target(const influx_udp *u) { return u->target; }

/* A refusal (ICMP port unreachable from addr[cur], reported by a later
 * send) moves to the name's next address, once for each.  true when the
 * socket is now connected to another one. */
static bool next_addr(influx_udp *u)
{
    char was[80], now[80];
    size_t from = u->cur;
    addr_text(&u->addr[from], was, sizeof was);
    close(u->fd);
    u->fd = -1;
    u->cur++;
    if (connect_from(u) != 0) { /* none left: stay on the refusing one */
        u->cur = from;
        u->fd = connect_addr(u, from);
        return false;
    }
    u->h->log(u->h, DLG_LOG_WARN, "udp = %s: %s refused the datagrams (nothing listens there); sending to %s "
              "now, address %zu of %zu of %s (what was sent before is lost; write the address to choose it)",
              u->target, was, addr_text(&u->addr[u->cur], now, sizeof now), u->cur + 1, u->naddr, u->host);
    return true;
}

static void send_one(influx_udp *u, const char *p, size_t n)
{
    if (n == 0)
        return;
    int e = u->fd < 0 ? EBADF : send(u->fd, p, n, 0) < 0 ? errno : 0;
    /* the datagram that reported the refusal was not sent: resend it */
    while (e == ECONNREFUSED && u->cur + 1 < u->naddr && next_addr(u))
        e = send(u->fd, p, n, 0) < 0 ? errno : 0;
    if (e && !u->warned_send) {
        u->h->log(u->h, DLG_LOG_WARN, "udp %s: %s; points sent over UDP may be lost", u->target, strerror(e));
        u->warned_send = true;
    }
}

void influx_udp_send(influx_udp *u, const char *body, size_t len)
{
    const char *start = body, *end = body + len;
    const char *p = body;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *next = nl ? nl + 1 : end;
        size_t line = (size_t)(next - p);
        if ((size_t)(next - start) > u->payload && p > start) {
            send_one(u, start, (size_t)(p - start)); /* datagram full: send before this line */
            start = p;
        }
        if (line > u->payload) {
            /* one line alone exceeds udp_payload: send it by itself if UDP can carry it */
            /* once per run; a result row (over 1 KB) exceeds the default
             * 512, so sending it alone is expected: info, not a warning */
            if (!u->warned_long && line <= UDP_MAX)
                u->h->log(u->h, DLG_LOG_INFO, "udp %s: lines longer than udp_payload = %zu (the first: %zu bytes) "
                          "are sent alone, one datagram each", u->target, u->payload, line);
            else if (!u->warned_long)
                u->h->log(u->h, DLG_LOG_WARN, "udp %s: a line of %zu bytes exceeds the %d bytes a datagram can "
                          "carry; it is dropped (so is any other such line)", u->target, line, UDP_MAX);
            u->warned_long = true;
            if (line <= UDP_MAX)
                send_one(u, p, line);
            start = next;
        }
        p = next;
    }
    send_one(u, start, (size_t)(end - start));
}

void influx_udp_close(influx_udp *u)
{
    if (!u)
        return;
    if (u->fd >= 0)
        close(u->fd);
    free(u);
}
