/* influx.so over UDP to a socket bound here on 127.0.0.1: every datagram
 * is at most udp_payload bytes, holds whole lines, and all lines arrive. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "lineproto.h"
#include "sink_test_util.h"

enum { NPOINTS = 60, PAYLOAD = 200 };

/* A name server that does not answer: getaddrinfo of this host fails with
 * EAI_AGAIN (this executable's getaddrinfo comes first for influx.so:
 * CMakeLists exports it); every other name resolves as usual. */
#define DNS_DOWN_HOST "dns-down.invalid"
/* A name with two addresses, the first with no listener (as `localhost`
 * is ::1 first, and the listener bound to 127.0.0.1 only). */
#define TWO_ADDR_HOST "two.test"

typedef int gai_fn(const char *, const char *, const struct addrinfo *, struct addrinfo **);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res)
{
    if (node && strcmp(node, DNS_DOWN_HOST) == 0)
        return EAI_AGAIN;
    gai_fn *next = (gai_fn *)dlsym(RTLD_NEXT, "getaddrinfo");
    if (!next)
        return EAI_SYSTEM;
    if (!node || strcmp(node, TWO_ADDR_HOST) != 0)
        return next(node, service, hints, res);
    /* two real lists chained: glibc's freeaddrinfo frees entry by entry */
    struct addrinfo *first = NULL, *second = NULL;
    int rc = next("127.0.0.2", service, hints, &first);
    if (rc != 0)
        return rc;
    if ((rc = next("127.0.0.1", service, hints, &second)) != 0) {
        freeaddrinfo(first);
        return rc;
    }
    struct addrinfo *last = first;
    while (last->ai_next)
        last = last->ai_next;
    last->ai_next = second;
    *res = first;
    return 0;
}

/* A DNS outage is worth a retry (flush exits 1); a port that is no port
 * is the configuration's fault (exit 2). */
static void test_udp_resolve_errors(void **unused)
{
    (void)unused;
    const char *down[] = {"udp=" DNS_DOWN_HOST ":8089", NULL};
    const char *badport[] = {"udp=127.0.0.1:no-such-service", NULL};
    const dlg_sink_ops *ops;
    void *st = NULL;
    mock_host m;
    mock_host_init(&m);
    assert_int_not_equal(st_open_sink(&m, "influx.so", "influx", down, &ops, &st), 0);
    assert_int_equal(m.last_code, DLG_EAGAIN);
    assert_non_null(strstr(m.last_error, DNS_DOWN_HOST ":8089"));
    mock_host_init(&m);
    assert_int_not_equal(st_open_sink(&m, "influx.so", "influx", badport, &ops, &st), 0);
    assert_int_equal(m.last_code, DLG_EINVAL);
}

/* A port out of range is refused, by --dry-run's check and by open:
 * getaddrinfo would wrap 80899 to 15363 and every datagram would be lost. */
static void test_udp_port_range(void **unused)
{
    const dlg_plugin_desc *d = mock_load_plugin("influx.so", DLG_KIND_SINK, "influx");
    assert_non_null(d);
    const dlg_sink_ops *sink = d->ops;
    static const char *const bad[] = {"udp=127.0.0.1:80899", "udp=127.0.0.1:0", "udp=[::1]:65536",
                                      "udp=h:8089x", "udp=h:-1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *ov[] = {bad[i], NULL};
        dlg_value vals[64];
        assert_int_equal(mock_options(d->options, vals, ov), 0);
        mock_host m;
        mock_host_init(&m);
        assert_int_equal(sink->check(&m.host, vals, "influx"), -DLG_EINVAL);
        assert_non_null(strstr(m.last_error, "the port must be a number from 1 to 65535"));
        void *st = NULL;
        const dlg_sink_ops *ops;
        mock_host_init(&m);
        assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), -DLG_EINVAL);
        assert_non_null(strstr(m.last_error, bad[i] + 4));
    }
    const char *ok[] = {"udp=127.0.0.1:65535", NULL};
    const dlg_sink_ops *ops;
    void *st = NULL;
    mock_host m;
    mock_host_init(&m);
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ok, &ops, &st), 0);
    ops->close(st);
}

/* A UDP socket bound to 127.0.0.1 (port in *port). */
static int listen_udp(int *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t alen = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &alen);
    *port = ntohs(a.sin_port);
    return fd;
}

/* The next datagram within 2 s, NUL-ended, into buf; its length or -1. */
static ssize_t recv_within(int fd, char *buf, size_t n)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    if (poll(&pfd, 1, 2000) <= 0)
        return -1;
    ssize_t r = recv(fd, buf, n - 1, 0);
    buf[r > 0 ? r : 0] = '\0';
    return r;
}

/* A name whose first address refuses (nothing listens there): the open
 * message names the address chosen, the refusal moves the sink to the
 * next address with one warning, and the datagram that saw it arrives. */
static void test_udp_refused_next_address(void **unused)
{
    (void)unused;
    int port, fd = listen_udp(&port);
    char opt[64], want[64];
    snprintf(opt, sizeof opt, "udp=" TWO_ADDR_HOST ":%d", port);
    const char *ov[] = {opt, NULL};
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), 0);
    snprintf(want, sizeof want, "sending to 127.0.0.2:%d, address 1 of 2 of " TWO_ADDR_HOST, port);
    assert_non_null(strstr(m.last_log, want));
    dlg_field f = {"v", DLG_FIELD_INT, {.i = 1}};
    dlg_point p = {"lost", NULL, 0, &f, 1, 1};
    assert_int_equal(ops->write(st, &p, 1), 0); /* to 127.0.0.2: refused */
    char got[512];
    for (int i = 0; i < 50 && m.warnings == 0; i++) {
        usleep(20000); /* the ICMP answer is reported by the next send */
        p.measurement = "kept";
        assert_int_equal(ops->write(st, &p, 1), 0);
    }
    assert_int_equal(m.warnings, 1);
    snprintf(want, sizeof want, "127.0.0.2:%d refused the datagrams", port);
    assert_non_null(strstr(m.last_log, want));
    snprintf(want, sizeof want, "sending to 127.0.0.1:%d now, address 2 of 2", port);
    assert_non_null(strstr(m.last_log, want));
    assert_true(recv_within(fd, got, sizeof got) > 0);
    assert_string_equal(got, "kept v=1i 1\n"); /* the one that saw the refusal */
    p.measurement = "after";
    assert_int_equal(ops->write(st, &p, 1), 0);
    assert_true(recv_within(fd, got, sizeof got) > 0);
    assert_string_equal(got, "after v=1i 1\n");
    ops->close(st);
    assert_int_equal(m.warnings, 1);
    close(fd);
}

static void test_udp_datagrams(void **unused)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    int big = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t alen = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &alen);

    char opt[64], pay[64];
    snprintf(opt, sizeof opt, "udp=127.0.0.1:%d", ntohs(a.sin_port));
    snprintf(pay, sizeof pay, "udp_payload=%d", PAYLOAD);
    const char *ov[] = {opt, pay, NULL};
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), 0);

    /* lines of varied length, one longer than the payload (sent alone) */
    static char notes[NPOINTS][300];
    dlg_point pts[NPOINTS];
    dlg_tag tags[NPOINTS][1];
    dlg_field fields[NPOINTS][2];
    dlg_sbuf want = {0};
    for (int i = 0; i < NPOINTS; i++) {
        int len = i == 17 ? 250 : 1 + (i * 7) % 60;
        memset(notes[i], 'a' + i % 26, (size_t)len);
        notes[i][len] = '\0';
        tags[i][0] = (dlg_tag){"cell", notes[i]};
        fields[i][0] = (dlg_field){"items_per_s", DLG_FIELD_DOUBLE, {.d = i * 1.5}};
        fields[i][1] = (dlg_field){"i", DLG_FIELD_INT, {.i = i}};
        pts[i] = (dlg_point){"dlgauge_progress", tags[i], 1, fields[i], 2, 1000 + i};
        assert_int_equal(lp_format_point(&want, &pts[i], 0, NULL), 1);
    }
    assert_int_equal(ops->write(st, pts, NPOINTS), 0);
    /* expected with the default 512 (a result row is over 1 KB): said
     * once, as info (not under -q), not a warning */
    assert_non_null(strstr(m.last_log, "are sent alone"));
    assert_int_equal(m.warnings, 0);
    m.last_log[0] = '\0';
    assert_int_equal(ops->write(st, &pts[17], 1), 0);
    assert_null(strstr(m.last_log, "sent alone"));
    assert_int_equal(lp_format_point(&want, &pts[17], 0, NULL), 1);
    ops->close(st);

    dlg_sbuf got = {0};
    char dgram[70000];
    int datagrams = 0;
    while (got.len < want.len) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 2000) <= 0)
            break;
        ssize_t n = recv(fd, dgram, sizeof dgram, 0);
        assert_true(n > 0);
        datagrams++;
        assert_true(dgram[n - 1] == '\n'); /* ends at a line boundary */
        if (n > PAYLOAD) /* only a single over-long line may exceed it */
            assert_ptr_equal(memchr(dgram, '\n', (size_t)n), dgram + n - 1);
        sbuf_add(&got, dgram, (size_t)n);
    }
    close(fd);
    assert_true(datagrams > 5);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.p, want.p, want.len); /* all lines, in order */
    sbuf_free(&got);
    sbuf_free(&want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_udp_datagrams),
        cmocka_unit_test(test_udp_resolve_errors),
        cmocka_unit_test(test_udp_port_range),
        cmocka_unit_test(test_udp_refused_next_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
