/* TLS of the InfluxDB sink's HTTP transport: the ca_cert and tls_verify
 * options, checked before any traffic, and what to fix when InfluxDB's
 * certificate is not trusted.  An internal InfluxDB often has a
 * certificate of a private CA, which the system's CA bundle lacks. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "influx.h"
#include "sinkfs.h"

/* A CA file larger than this is no CA file (the system's bundle of all
 * public CAs is about 200 KiB). */
#define CA_FILE_MAX (16u << 20)

/* Whether text holds a PEM certificate as OpenSSL and GnuTLS read a CA
 * file: a DER file or a lone key would fail every handshake with a
 * cryptic error, long after the run started. */
static bool has_pem_cert(const char *text)
{
    static const char *const labels[] = {"-----BEGIN CERTIFICATE-----", "-----BEGIN TRUSTED CERTIFICATE-----",
                                         "-----BEGIN X509 CERTIFICATE-----"};
    for (size_t i = 0; i < sizeof labels / sizeof *labels; i++)
        if (strstr(text, labels[i]))
            return true;
    return false;
}

/* The whole of a regular file of at most CA_FILE_MAX bytes into *out
 * (NUL-ended; caller frees), else an errno value (EISDIR: not a regular
 * file, EFBIG: too large).  Judged by stat first: a FIFO is not opened. */
static int read_ca(const char *path, char **out)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    if (!S_ISREG(st.st_mode))
        return EISDIR;
    if (st.st_size > CA_FILE_MAX)
        return EFBIG;
    size_t len;
    return sink_read_file(path, out, &len);
}

/* ca_cert must be a readable regular file holding a PEM certificate. */
static int check_ca_file(const dlg_host *h, const char *path)
{
    char *text = NULL;
    int e = read_ca(path, &text);
    if (e == EISDIR)
        return h->error(h, DLG_EINVAL, "ca_cert = %s: not a regular file (give the CA's PEM file)", path);
    if (e == EFBIG)
        return h->error(h, DLG_EINVAL, "ca_cert = %s: larger than %u MiB: not a CA file", path, CA_FILE_MAX >> 20);
    if (e)
        return h->error(h, e == ENOMEM ? DLG_ENOMEM : DLG_EINVAL, "ca_cert = %s: cannot read it: %s", path,
                        strerror(e));
    bool pem = has_pem_cert(text);
    free(text);
    if (!pem)
        return h->error(h, DLG_EINVAL, "ca_cert = %s: holds no PEM certificate (-----BEGIN CERTIFICATE-----); "
                        "convert a DER file with `openssl x509 -inform der -in FILE -out FILE.pem`", path);
    return 0;
}

/* "KEY = VALUE: only used with an https:// url; url = URL is not
 * encrypted", the url's credentials hidden. */
static int not_https(const dlg_host *h, const char *key, const char *value, const char *url)
{
    dlg_sbuf shown = {0};
    int rc = h->error(h, DLG_EINVAL, "%s = %s: only used with an https:// url; url = %s is not encrypted", key,
                      value, influx_url_shown(url, &shown) == 0 ? shown.p : "(hidden)");
    sbuf_free(&shown);
    return rc;
}

int influx_tls_check(const dlg_host *h, const influx_http_conf *conf)
{
    bool https = strncasecmp(conf->url, "https:", 6) == 0;
    if (conf->ca_cert && !https)
        return not_https(h, "ca_cert", conf->ca_cert, conf->url);
    if (!conf->tls_verify && !https)
        return not_https(h, "tls_verify", "false", conf->url);
    if (conf->ca_cert && !conf->tls_verify)
        return h->error(h, DLG_EINVAL, "ca_cert = %s: not used with tls_verify = false, which checks no "
                        "certificate; drop one of the two", conf->ca_cert);
    return conf->ca_cert ? check_ca_file(h, conf->ca_cert) : 0;
}

void influx_tls_setup(const dlg_host *h, void *e, const influx_http_conf *conf, const char *shown_url)
{
    if (conf->ca_cert) /* in place of the system's CA bundle */
        curl_easy_setopt(e, CURLOPT_CAINFO, conf->ca_cert);
    if (conf->tls_verify || strncasecmp(conf->url, "https:", 6) != 0)
        return;
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    h->log(h, DLG_LOG_WARN, "tls_verify = false: the certificate of InfluxDB at %s is not checked: the "
           "connection is encrypted but not verified, so anyone on the path can pose as InfluxDB and read "
           "the points and credentials", shown_url);
}

const char *influx_tls_hint(int curl_code, bool ca_cert)
{
    switch (curl_code) {
    case CURLE_PEER_FAILED_VERIFICATION: /* also the former CURLE_SSL_CACERT */
#if LIBCURL_VERSION_NUM >= 0x072900
    case CURLE_SSL_ISSUER_ERROR:
#endif
        return ca_cert ? "check ca_cert: InfluxDB's certificate must be signed by the CA in it and name the "
                         "url's host"
                       : "set ca_cert = the PEM file of the CA that signed InfluxDB's certificate (a private "
                         "CA is not in the system's bundle); the certificate must name the url's host";
    case CURLE_SSL_CACERT_BADFILE:
        return "check ca_cert: the TLS library could not load it as a CA file";
    default:
        return NULL;
    }
}
