/* The credentials an InfluxDB URL may carry (http://user:PASSWORD@host/,
 * 1.x's ?u=user&p=PASSWORD) never appear in the sink's messages, which go
 * to terminals and CI logs: not in the warning of an unreachable InfluxDB,
 * the flush's error, nor the errors about the url option.  A url whose
 * port is not 1 to 65535, or whose db= is empty, is refused in words
 * that say so.  No server needed: port 1 on 127.0.0.1 refuses the
 * connection. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "influx.h"
#include "sink_test_util.h"

static void assert_shown(const char *url, const char *want)
{
    dlg_sbuf b = {0};
    assert_int_equal(influx_url_shown(url, &b), 0);
    assert_string_equal(b.p, want);
    sbuf_free(&b);
}

static void test_url_shown(void **unused)
{
    assert_shown("http://127.0.0.1:8086/write?db=x", "http://127.0.0.1:8086/write?db=x");
    assert_shown("http://admin:s3cr@t@db.lan:8086/write?db=x", "http://admin:***@db.lan:8086/write?db=x");
    assert_shown("https://admin@db.lan/write?db=x", "https://admin@db.lan/write?db=x"); /* no password */
    assert_shown("http://h/write?db=x&u=admin&p=s3cret&precision=ns",
                 "http://h/write?db=x&u=admin&p=***&precision=ns");
    assert_shown("http://h/write?p=a&db=p=x&token=t#p=frag", "http://h/write?p=***&db=p=x&token=***#p=frag");
    assert_shown("http://h/write?db=x&p=", "http://h/write?db=x&p="); /* nothing to hide */
    assert_shown("http://h/a@b:c/write?db=x", "http://h/a@b:c/write?db=x"); /* '@' in the path */
    assert_shown("ftp://u:pw@h/x", "ftp://u:***@h/x");
    assert_shown("not a url", "not a url");
    /* no scheme (http:// forgotten), which build_url refuses with this text */
    assert_shown("admin:s3cret@db.lan:8086/write?db=x", "admin:***@db.lan:8086/write?db=x");
    assert_shown("//admin:s3cret@db.lan/write?db=x", "//admin:***@db.lan/write?db=x");
}

/* A password with an unescaped '/', '?', '#' or '@' ends the authority
 * early for a URL parser: none of it may show.  Percent-encoded, it is one
 * password, hidden whole. */
static void test_url_shown_delimiters_in_password(void **unused)
{
    assert_shown("http://user:p/ss?w#rd@db.lan:8086/write?db=x", "http://user:***@db.lan:8086/write?db=x");
    assert_shown("http://user:p?ss@db.lan/write?db=x", "http://user:***@db.lan/write?db=x");
    assert_shown("http://user:p#ss@db.lan/write?db=x&p=s", "http://user:***@db.lan/write?db=x&p=***");
    assert_shown("http://user:p/s@s@db.lan/write?db=x", "http://user:***@db.lan/write?db=x");
    /* digits, then '/': a URL parser reads host "user", port 12 */
    assert_shown("http://user:12/ss@db.lan/write?db=x", "http://user:***@db.lan/write?db=x");
    assert_shown("http://user:p%2Fss%3Fw%23rd%40@db.lan/write?db=x", "http://user:***@db.lan/write?db=x");
    assert_shown("https://us%40er:p%3As@db.lan:8086/write?db=x", "https://us%40er:***@db.lan:8086/write?db=x");
    assert_shown("http://[::1]:8086/write?db=x&u=a&p=s%26t", "http://[::1]:8086/write?db=x&u=a&p=***");
}

/* Every message the sink gave, joined. */
typedef struct said {
    char text[8192];
} said;

static void note(said *w, const mock_host *m)
{
    size_t n = strlen(w->text);
    snprintf(w->text + n, sizeof w->text - n, "%s\n%s\n", m->last_log, m->last_error);
}

static void test_unreachable_messages_hide_credentials(void **unused)
{
    char *dir = st_tempdir(), sd[4200];
    snprintf(sd, sizeof sd, "spool_dir=%s/spool", dir);
    const char *ov[] = {"url=http://admin:s3cret@127.0.0.1:1/write?db=x&u=admin&p=s3cret", sd, "batch=1",
                        "retries=0", "timeout=1s", NULL};
    mock_host m;
    mock_host_init(&m);
    const dlg_sink_ops *ops;
    void *st = NULL;
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), 0);
    said w = {{0}};
    dlg_field f = {"v", DLG_FIELD_INT, {.i = 1}};
    dlg_point p = {"m", NULL, 0, &f, 1, 1};
    assert_int_equal(ops->write(st, &p, 1), 0);
    assert_int_equal(m.warnings, 1); /* unreachable: spooled */
    note(&w, &m);
    assert_int_equal(ops->flush(st, 2000000000u), -DLG_EAGAIN);
    note(&w, &m);
    ops->close(st);
    assert_non_null(strstr(w.text, "http://admin:***@127.0.0.1:1/write?db=x&u=admin&p=***&precision=ns"));
    assert_null(strstr(w.text, "s3cret"));
    st_rmtree(dir);
    free(dir);
}

/* The check op (--dry-run) and open refusing the url option. */
static void check_error(const char *const *ov, const char *want)
{
    const dlg_plugin_desc *d = mock_load_plugin("influx.so", DLG_KIND_SINK, "influx");
    assert_non_null(d);
    dlg_value vals[64];
    assert_int_equal(mock_options(d->options, vals, ov), 0);
    const dlg_sink_ops *ops = d->ops;
    mock_host m;
    mock_host_init(&m);
    assert_int_equal(ops->check(&m.host, vals, "influx"), -DLG_EINVAL);
    assert_null(strstr(m.last_error, "s3cret"));
    assert_non_null(strstr(m.last_error, want));
    void *st = NULL;
    mock_host_init(&m);
    assert_int_equal(ops->open(&m.host, vals, "influx", &st), -DLG_EINVAL);
    assert_null(strstr(m.last_error, "s3cret"));
    assert_non_null(strstr(m.last_error, want));
}

static void test_url_errors_hide_credentials(void **unused)
{
    const char *ftp[] = {"url=ftp://admin:s3cret@127.0.0.1/x", NULL};
    check_error(ftp, "url = ftp://admin:***@127.0.0.1/x: not an http");
    const char *noscheme[] = {"url=admin:s3cret@127.0.0.1:8086/write?db=x", NULL}; /* http:// forgotten */
    check_error(noscheme, "url = admin:***@127.0.0.1:8086/write?db=x: not an http");
    const char *nodb[] = {"url=http://127.0.0.1:8086/write?u=admin&p=s3cret", NULL};
    check_error(nodb, "url = http://127.0.0.1:8086/write?u=admin&p=***: has no db=");
    const char *prec[] = {"url=http://a:s3cret@h/write?db=x&precision=s", NULL};
    check_error(prec, "url = http://a:***@h/write?db=x&precision=s: dlgauge sends nanosecond");
    const char *both[] = {"path=/tmp/x.lp", "url=http://a:s3cret@h/write?db=x", NULL};
    check_error(both, "url = http://a:***@h/write?db=x: set exactly one");
    /* a '/', '?' and '#' in the password, s3cret behind them */
    const char *delim[] = {"url=http://admin:pw/s3cret?x#y@127.0.0.1:8086/write?db=x", NULL};
    check_error(delim, "url = http://admin:***@127.0.0.1:8086/write?db=x: not an http");
}

/* A port past 65535, not a number, or 0 (curl reads 0 as a port, where
 * nothing is reached): said as udp's check says it (these read "not an
 * http:// or https:// URL", and port 0 passed --dry-run). */
static void test_url_port_refused(void **unused)
{
    static const char *const ports[] = {"99999", "65536", "abc", "0", "-1", "80a"};
    for (size_t i = 0; i < sizeof ports / sizeof *ports; i++) {
        char url[128], want[160];
        snprintf(url, sizeof url, "url=http://127.0.0.1:%s/write?db=x", ports[i]);
        snprintf(want, sizeof want, "url = http://127.0.0.1:%s/write?db=x: the port must be a number from 1 to "
                 "65535", ports[i]);
        const char *ov[] = {url, NULL};
        check_error(ov, want);
    }
    const char *v6[] = {"url=https://[::1]:70000/write?db=x", NULL};
    check_error(v6, "url = https://[::1]:70000/write?db=x: the port must be a number from 1 to 65535");
    const char *cred[] = {"url=http://admin:s3cret@127.0.0.1:99999/write?db=x", NULL};
    check_error(cred, "url = http://admin:***@127.0.0.1:99999/write?db=x: the port must be a number from 1 to 65535");
    const char *v2[] = {"url=http://127.0.0.1:0", "org=o", "bucket=b", "token=s3cret", NULL};
    check_error(v2, "url = http://127.0.0.1:0/: the port must be a number from 1 to 65535");
    assert_true(influx_url_port_ok("http://127.0.0.1:65535/write?db=x"));
    assert_true(influx_url_port_ok("http://127.0.0.1:1/write?db=x"));
    assert_true(influx_url_port_ok("http://127.0.0.1/write?db=x"));
    assert_true(influx_url_port_ok("http://127.0.0.1:/write?db=x")); /* empty: the scheme's */
    assert_true(influx_url_port_ok("http://[::1]:8086/write?db=x"));
    assert_true(influx_url_port_ok("http://[::1]/write?db=x"));
    assert_true(influx_url_port_ok("http://a:pw/x@127.0.0.1:8086/write?db=x")); /* the password's ':' */
}

/* db= with no name (it passed --dry-run, and every write got a 404). */
static void test_url_empty_db_refused(void **unused)
{
    const char *empty[] = {"url=http://127.0.0.1:8086/write?db=", NULL};
    check_error(empty, "url = http://127.0.0.1:8086/write?db=: db= names no database; write "
                "http://HOST:8086/write?db=NAME");
    const char *amp[] = {"url=http://127.0.0.1:8086/write?db=&u=admin&p=s3cret", NULL};
    check_error(amp, "url = http://127.0.0.1:8086/write?db=&u=admin&p=***: db= names no database");
}

/* A token, user or password with a newline or another control character
 * (a token read from a file, its newline kept) is refused by check and
 * open, naming the key, never the value: it ended the Authorization
 * header, and InfluxDB stored nothing of a request it answered 204. */
static void test_header_values_refused(void **unused)
{
    const char *tok[] = {"url=http://127.0.0.1:8086", "org=o", "bucket=b", "token=s3cret\n", NULL};
    check_error(tok, "token = (hidden): holds a newline at byte 7 of 7, which would end the HTTP header");
    const char *pw[] = {"url=http://127.0.0.1:8086/write?db=x", "user=admin", "password=s3cret\r", NULL};
    check_error(pw, "password = (hidden): holds a carriage return at byte 7 of 7");
    const char *user[] = {"url=http://127.0.0.1:8086/write?db=x", "user=ad\x01s3cret", "password=p", NULL};
    check_error(user, "user = (hidden): holds a control character at byte 3 of 9");
}

/* A 1.x url whose path is not /write (every write answered "404 page not
 * found", and --dry-run took it). */
static void test_url_path_not_write_refused(void **unused)
{
    const char *root[] = {"url=http://127.0.0.1:8086/?db=dl", NULL};
    check_error(root, "url = http://127.0.0.1:8086/?db=dl: InfluxDB 1.x writes at a path ending in /write; write "
                "http://HOST:8086/write?db=NAME");
    const char *query[] = {"url=http://a:s3cret@127.0.0.1:8086/query?db=dl", NULL};
    check_error(query, "url = http://a:***@127.0.0.1:8086/query?db=dl: InfluxDB 1.x writes at a path");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_shown),
        cmocka_unit_test(test_url_shown_delimiters_in_password),
        cmocka_unit_test(test_unreachable_messages_hide_credentials),
        cmocka_unit_test(test_url_errors_hide_credentials),
        cmocka_unit_test(test_url_port_refused),
        cmocka_unit_test(test_url_empty_db_refused),
        cmocka_unit_test(test_header_values_refused),
        cmocka_unit_test(test_url_path_not_write_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
