/* influx.so over HTTPS to fake_influx.py on 127.0.0.1 with a certificate
 * of a throwaway CA (make_test_ca.sh, the openssl command; exit 77, a
 * skip, without it): without ca_cert the certificate is not trusted, which
 * is said in one line naming the problem and what to set, is not retried,
 * and the point waits in the spool; with ca_cert it arrives, the spooled
 * one first; tls_verify = false delivers with a warning.  And the errors of
 * the two options, which need no server. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "sbuf.h"
#include "sink_test_util.h"

typedef struct tls_env {
    char *dir;  /* certificates, the fake's log, the spools */
    st_fake fk; /* HTTPS, answering 204 */
} tls_env;

static char *path_in(const tls_env *t, const char *name) { return st_join(t->dir, name); }

static int group_setup(void **state)
{
    tls_env *t = calloc(1, sizeof *t);
    t->dir = st_tempdir();
    const char *src = getenv("DLG_SOURCE_DIR");
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "'%s/tests/sinks/make_test_ca.sh' '%s/ca'", src ? src : ".", t->dir);
    int rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "%s\n", WEXITSTATUS(rc) == 77 ? "no openssl command to make a test CA: skipping"
                                                      : "make_test_ca.sh failed");
        st_rmtree(t->dir);
        free(t->dir);
        free(t);
        exit(WEXITSTATUS(rc) == 77 ? 77 : 1);
    }
    char *cert = path_in(t, "ca/server.pem");
    setenv("FAKE_INFLUX_CERT", cert, 1);
    static const char *const steps[] = {NULL};
    rc = st_fake_start(&t->fk, t->dir, "fake", steps);
    unsetenv("FAKE_INFLUX_CERT");
    free(cert);
    *state = t;
    return rc;
}

static int group_teardown(void **state)
{
    tls_env *t = *state;
    st_fake_stop(&t->fk); /* by its PID */
    st_rmtree(t->dir);
    free(t->dir);
    free(t);
    return 0;
}

/* An https sink on the fake with extra options (NULL-ended); spool under
 * spool/NAME.  Returns what open returned. */
static int open_tls(const tls_env *t, mock_host *m, const char *spool, const char *const *extra,
                    const dlg_sink_ops **ops, void **st)
{
    char url[128], sd[4200];
    snprintf(url, sizeof url, "url=https://127.0.0.1:%d/write?db=x", t->fk.port);
    snprintf(sd, sizeof sd, "spool_dir=%s/%s", t->dir, spool);
    const char *ov[16] = {url, sd, "batch=1", "retries=2", "backoff=1s", "timeout=5s"};
    for (size_t i = 0; extra[i] && i < 9; i++)
        ov[i + 6] = extra[i];
    mock_host_init(m);
    return st_open_sink(m, "influx.so", "influx", ov, ops, st);
}

static void write_one(const dlg_sink_ops *ops, void *st, const char *meas, int64_t v)
{
    dlg_field f = {"v", DLG_FIELD_INT, {.i = v}};
    dlg_point p = {meas, NULL, 0, &f, 1, 1000 + v};
    assert_int_equal(ops->write(st, &p, 1), 0);
}

/* The bodies of the fake's requests (requests.jsonl), in order, joined. */
static char *bodies(const tls_env *t)
{
    char *log = st_join(t->fk.dir, "requests.jsonl"), *text = st_slurp(log, NULL);
    free(log);
    dlg_sbuf out = {0};
    sbuf_adds(&out, "");
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        json_object *req = json_tokener_parse(line);
        sbuf_adds(&out, json_object_get_string(json_object_object_get(req, "body")));
        json_object_put(req);
    }
    free(text);
    return out.p;
}

/* A certificate of a private CA, no ca_cert: one line that names the
 * certificate problem and ca_cert, no retry (backoff = 1s would show), the
 * point in the spool; then with ca_cert it arrives, before the new one. */
static void test_private_ca(void **state)
{
    tls_env *t = *state;
    mock_host m;
    const dlg_sink_ops *ops;
    void *st = NULL;
    static const char *const none[] = {NULL};
    assert_int_equal(open_tls(t, &m, "spool", none, &ops, &st), 0);
    double t0 = st_mono_s();
    write_one(ops, st, "untrusted", 1);
    assert_true(st_mono_s() - t0 < 0.9); /* not retried */
    assert_int_equal(m.warnings, 1);   /* spooled, once */
    assert_int_equal(ops->flush(st, 2000000000u), -DLG_EINVAL);
    ops->close(st);
    assert_int_equal(m.errors, 1);
    assert_null(strchr(m.last_error, '\n'));
    assert_non_null(strstr(m.last_error, "is not trusted (SSL certificate problem: "));
    assert_non_null(strstr(m.last_error, "set ca_cert = "));
    assert_non_null(strstr(m.last_error, "1 point stays spooled"));
    char *spool = path_in(t, "spool/influx.lp"), *text = st_slurp(spool, NULL), *got = bodies(t);
    assert_string_equal(text, "untrusted v=1i 1001\n");
    assert_string_equal(got, ""); /* no request got through */
    free(text);
    free(got);

    char ca[4200];
    snprintf(ca, sizeof ca, "ca_cert=%s/ca/ca.pem", t->dir);
    const char *with_ca[] = {ca, NULL};
    assert_int_equal(open_tls(t, &m, "spool", with_ca, &ops, &st), 0);
    write_one(ops, st, "trusted", 2);
    assert_int_equal(ops->flush(st, 2000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    assert_int_equal(m.warnings, 0);
    got = bodies(t);
    assert_string_equal(got, "untrusted v=1i 1001\ntrusted v=2i 1002\n");
    text = st_slurp(spool, NULL);
    assert_true(text == NULL || text[0] == '\0');
    free(text);
    free(got);
    free(spool);
}

/* tls_verify = false: delivered, with one warning that nothing is checked. */
static void test_no_verify_warns(void **state)
{
    tls_env *t = *state;
    char *before = bodies(t);
    mock_host m;
    const dlg_sink_ops *ops;
    void *st = NULL;
    static const char *const noverify[] = {"tls_verify=false", NULL};
    assert_int_equal(open_tls(t, &m, "spool-nv", noverify, &ops, &st), 0);
    assert_int_equal(m.warnings, 1);
    assert_non_null(strstr(m.last_log, "tls_verify = false: "));
    assert_non_null(strstr(m.last_log, "not verified"));
    write_one(ops, st, "unverified", 3);
    assert_int_equal(ops->flush(st, 2000000000u), 0);
    ops->close(st);
    assert_int_equal(m.errors, 0);
    char *got = bodies(t);
    assert_string_equal(got + strlen(before), "unverified v=3i 1003\n");
    free(got);
    free(before);
}

/* What check (--dry-run) and open refuse, each in one line starting with
 * the key (the core names its line). */
static void expect_refused(const tls_env *t, const char *const *ov, const char *start, const char *text)
{
    const dlg_plugin_desc *d = mock_load_plugin("influx.so", DLG_KIND_SINK, "influx");
    assert_non_null(d);
    const dlg_sink_ops *sink = d->ops;
    dlg_value vals[64];
    assert_int_equal(mock_options(d->options, vals, ov), 0);
    mock_host m;
    mock_host_init(&m);
    assert_int_equal(sink->check(&m.host, vals, "influx"), -DLG_EINVAL);
    assert_int_equal(strncmp(m.last_error, start, strlen(start)), 0);
    assert_non_null(strstr(m.last_error, text));
    const dlg_sink_ops *ops;
    void *st = NULL;
    mock_host_init(&m);
    assert_int_equal(st_open_sink(&m, "influx.so", "influx", ov, &ops, &st), -DLG_EINVAL);
    assert_int_equal(strncmp(m.last_error, start, strlen(start)), 0);
    assert_int_equal(m.errors, 1);
    (void)t;
}

static void test_option_errors(void **state)
{
    tls_env *t = *state;
    char ca[4200], key[4200], dir[4200], missing[4200];
    snprintf(ca, sizeof ca, "ca_cert=%s/ca/ca.pem", t->dir);
    snprintf(key, sizeof key, "ca_cert=%s/ca/key.pem", t->dir);
    snprintf(dir, sizeof dir, "ca_cert=%s/ca", t->dir);
    snprintf(missing, sizeof missing, "ca_cert=%s/nope.pem", t->dir);
    const char *https = "url=https://127.0.0.1:1/write?db=x";
    const char *http[] = {"url=http://u:s3cret@127.0.0.1:1/write?db=x", ca, NULL};
    expect_refused(t, http, "ca_cert = ", "only used with an https:// url; url = http://u:***@127.0.0.1");
    const char *http_nv[] = {"url=http://127.0.0.1:1/write?db=x", "tls_verify=false", NULL};
    expect_refused(t, http_nv, "tls_verify = false: ", "only used with an https:// url");
    const char *udp[] = {"udp=127.0.0.1:8089", ca, NULL};
    expect_refused(t, udp, "ca_cert = ", "udp = 127.0.0.1:8089 is not HTTP");
    const char *path_nv[] = {"path=/tmp/x.lp", "tls_verify=false", NULL};
    expect_refused(t, path_nv, "tls_verify = false: ", "path = /tmp/x.lp is not HTTP");
    const char *both[] = {https, ca, "tls_verify=false", NULL};
    expect_refused(t, both, "ca_cert = ", "drop one of the two");
    const char *nofile[] = {https, missing, NULL};
    expect_refused(t, nofile, "ca_cert = ", "cannot read it: No such file or directory");
    const char *notreg[] = {https, dir, NULL};
    expect_refused(t, notreg, "ca_cert = ", "not a regular file");
    const char *nopem[] = {https, key, NULL};
    expect_refused(t, nopem, "ca_cert = ", "holds no PEM certificate");
    chmod(key + 8, 0); /* unreadable (root reads it all the same) */
    if (geteuid() != 0)
        expect_refused(t, nopem, "ca_cert = ", "cannot read it: Permission denied");
    chmod(key + 8, 0600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_private_ca),
        cmocka_unit_test(test_no_verify_warns),
        cmocka_unit_test(test_option_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
