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

#include "influx.h"

/* Largest UDP payload over IPv4. */
#define UDP_MAX 65507

struct influx_udp {
    const dlg_host *h;
    int fd;
    size_t payload;
    char target[300];
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

/* A decimal port 1..65535: getaddrinfo would take 80899 as 15363 (modulo
 * 65536) and 0 as no port, so every datagram would go astray unnoticed. */
static bool port_ok(const char *port)
{
    unsigned long v = 0;
    for (const char *c = port; *c; c++) {
        if (*c < '0' || *c > '9' || (v = v * 10 + (unsigned long)(*c - '0')) > 65535)
            return false;
    }
    return v > 0;
}

int influx_udp_check(const dlg_host *h, const char *hostport)
{
    char host[256];
    const char *port;
    if (split_hostport(hostport, host, sizeof host, &port) != 0)
        return h->error(h, DLG_EINVAL, "udp = %s: expected HOST:PORT (or [IPv6]:PORT)", hostport);
    if (!port_ok(port))
        return h->error(h, DLG_EINVAL, "udp = %s: the port must be a number from 1 to 65535", hostport);
    return 0;
}

/* The DLG_E* code of a getaddrinfo failure: a name server that does not
 * answer now (or no memory, or a system error) may pass by itself, so
 * `dlgauge flush` retries; a name or port that does not resolve needs a
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

int influx_udp_open(const dlg_host *h, const char *hostport, size_t payload, influx_udp **out)
{
    char host[256];
    const char *port;
    int rc = influx_udp_check(h, hostport);
    if (rc != 0)
        return rc;
    split_hostport(hostport, host, sizeof host, &port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *ai = NULL;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai != 0)
        return h->error(h, gai_code(gai), "udp = %s: %s", hostport,
                        gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai));
    int fd = -1, err = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        /* connect() on UDP only fixes the peer, so send() reports errors */
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        } else if (fd < 0) {
            err = errno;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return h->error(h, DLG_EIO, "udp = %s: %s", hostport, strerror(err));
    influx_udp *u = calloc(1, sizeof *u);
    if (!u) {
        close(fd);
        return h->error(h, DLG_ENOMEM, "out of memory");
    }
    u->h = h;
    u->fd = fd;
    u->payload = payload;
    snprintf(u->target, sizeof u->target, "%s", hostport);
    *out = u;
    return 0;
}

const char *influx_udp_target(const influx_udp *u) { return u->target; }

static void send_one(influx_udp *u, const char *p, size_t n)
{
    if (n == 0)
        return;
    if (send(u->fd, p, n, 0) < 0 && !u->warned_send) {
        u->h->log(u->h, DLG_LOG_WARN, "udp %s: %s; points sent over UDP may be lost", u->target,
                  strerror(errno));
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
            if (!u->warned_long)
                u->h->log(u->h, DLG_LOG_WARN, "udp %s: a line of %zu bytes exceeds udp_payload = %zu%s",
                          u->target, line, u->payload, line > UDP_MAX ? "; dropped" : "; sent alone");
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
    close(u->fd);
    free(u);
}
