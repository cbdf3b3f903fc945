/* The host's tuning record (see tune.h). */
#define _GNU_SOURCE
#include "tune.h"

#include "peak.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "dlgauge-tune 1"
/* far more than every layer shape of every model at a few thread counts */
#define MAX_BYTES (1 << 20)

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void dlg_tune_host(char *out, size_t n)
{
    enum { INFO = 1 << 16 };
    char name[256] = "", vendor[64] = "", fam[16] = "", model[16] = "", host[256] = "";
    char *info = calloc(1, INFO), *flags = calloc(1, INFO);
    FILE *f = info && flags ? fopen("/proc/cpuinfo", "r") : NULL;
    if (f) {
        /* the first processor's block has it all: read no further (each
         * block costs the kernel a look at its CPU's clock) */
        size_t len = 0;
        while (len < INFO - 1 && fgets(info + len, (int)(INFO - len), f) && info[len] != '\n')
            len += strlen(info + len);
        info[len] = '\0';
        fclose(f);
        dlg_cpuinfo_field(info, "flags", flags, INFO);
        dlg_cpuinfo_field(info, "model name", name, sizeof name);
        dlg_cpuinfo_field(info, "vendor_id", vendor, sizeof vendor);
        dlg_cpuinfo_field(info, "cpu family", fam, sizeof fam);
        dlg_cpuinfo_field(info, "model", model, sizeof model);
    }
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "?");
    snprintf(out, n, "%s | %s | %s family %s model %s | flags %016llx", host, name, vendor, fam, model,
             (unsigned long long)fnv1a(flags ? flags : ""));
    free(info);
    free(flags);
}

/* The default folder, made if missing: false without a home for it. */
static bool default_dir(char *dir, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int len;
    if (xdg && xdg[0] == '/') {
        len = snprintf(dir, n, "%s/dlgauge", xdg);
    } else if (home && home[0] == '/') {
        len = snprintf(dir, n, "%s/.cache", home);
        if (len > 0 && (size_t)len < n)
            mkdir(dir, 0755);
        len = snprintf(dir, n, "%s/.cache/dlgauge", home);
    } else {
        return false;
    }
    if (len <= 0 || (size_t)len >= n)
        return false;
    mkdir(dir, 0755); /* EEXIST is fine; any other failure shows at the first store */
    return true;
}

bool dlg_tune_path(char *out, size_t n)
{
    const char *env = getenv("DLGAUGE_TUNE");
    if (env && *env) {
        if (strcmp(env, "off") == 0)
            return false;
        int len = snprintf(out, n, "%s", env);
        if (len > 0 && (size_t)len < n)
            return true;
        fprintf(stderr, "dlgauge: DLGAUGE_TUNE: a path longer than %zu bytes; no tuning record\n", n - 1);
        return false;
    }
    char dir[DLG_TUNE_PATH_MAX], host[512];
    if (!default_dir(dir, sizeof dir))
        return false;
    dlg_tune_host(host, sizeof host);
    int len = snprintf(out, n, "%s/tune-%016llx.txt", dir, (unsigned long long)fnv1a(host));
    return len > 0 && (size_t)len < n;
}

int dlg_tune_lock(const char *path)
{
    char lock[DLG_TUNE_PATH_MAX + 8];
    snprintf(lock, sizeof lock, "%s.lock", path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int rc;
    while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void dlg_tune_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* releases the flock */
}

/* Whether s[0..len) is one token of printable non-space characters. */
static bool token(const char *s, size_t len, size_t max)
{
    if (len == 0 || len >= max)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] <= ' ' || s[i] > '~')
            return false;
    return true;
}

/* Why line (len bytes, no newline) is not "<key> <value>", or NULL. */
static const char *bad_entry(const char *line, size_t len)
{
    const char *sp = memchr(line, ' ', len);
    if (!sp)
        return "not '<key> <value>'";
    if (!token(line, (size_t)(sp - line), DLG_TUNE_KEY_MAX))
        return "a bad key";
    if (!token(sp + 1, len - (size_t)(sp + 1 - line), DLG_TUNE_VAL_MAX))
        return "a bad value";
    return NULL;
}

static void warn(bool on, const char *path, int line, const char *why)
{
    if (!on)
        return;
    if (line > 0)
        fprintf(stderr, "dlgauge: tuning record %s line %d: %s; ignored (measured again and rewritten)\n", path,
                line, why);
    else
        fprintf(stderr, "dlgauge: tuning record %s: %s; ignored (measured again and rewritten)\n", path, why);
}

/* Why the text (got bytes read, at most MAX_BYTES + 1) is not a record
 * of this host, with the line it fails at; NULL if it is.  *body: its
 * entries, after the two header lines. */
static const char *bad_record(const char *text, size_t got, int *line, const char **body)
{
    char host[512], want[520];
    size_t ml = strlen(MAGIC);
    *line = 0;
    if (got > MAX_BYTES)
        return "larger than 1 MiB";
    if (strlen(text) != got)
        return "a NUL byte";
    *line = 1;
    if (strncmp(text, MAGIC, ml) != 0 || text[ml] != '\n')
        return "not a dlgauge tuning record (first line '" MAGIC "')";
    dlg_tune_host(host, sizeof host);
    snprintf(want, sizeof want, "host %s\n", host);
    *body = text + ml + 1;
    *line = 2;
    if (strncmp(*body, "host ", 5) != 0)
        return "no 'host' line";
    if (strncmp(*body, want, strlen(want)) != 0)
        return "another host's (or CPU's) record";
    *body += strlen(want);
    for (const char *l = *body; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        const char *bad = bad_entry(l, len);
        ++*line;
        if (bad || !e)
            return bad ? bad : "cut short (no newline)";
        l = e + 1;
    }
    return NULL;
}

/* The record's entries, malloc'ed; NULL when missing, unreadable,
 * corrupt or another host's (the last three warned of when `loud`). */
static char *load(const char *path, bool loud)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno != ENOENT)
            warn(loud, path, 0, strerror(errno));
        return NULL;
    }
    char *text = malloc(MAX_BYTES + 2);
    size_t got = text ? fread(text, 1, MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (!text)
        return NULL;
    text[got] = '\0';
    int line;
    const char *body = NULL, *why = bad_record(text, got, &line, &body);
    if (why) {
        warn(loud, path, line, why);
        free(text);
        return NULL;
    }
    memmove(text, body, strlen(body) + 1);
    return text;
}

/* The line of body holding key, or NULL. */
static const char *find(const char *body, const char *key)
{
    size_t kl = strlen(key);
    for (const char *l = body; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (strncmp(l, key, kl) == 0 && l[kl] == ' ')
            return l;
    return NULL;
}

bool dlg_tune_get(const char *path, const char *key, char *val, size_t n)
{
    char *body = load(path, true);
    const char *l = body ? find(body, key) : NULL;
    if (l) {
        const char *v = l + strlen(key) + 1;
        size_t len = (size_t)(strchr(v, '\n') - v);
        snprintf(val, n, "%.*s", (int)len, v);
    }
    free(body);
    return l != NULL;
}

/* The record as it will be: header, the old entries but key's, key's new. */
static int write_record(FILE *f, const char *body, const char *key, const char *val)
{
    char host[512];
    dlg_tune_host(host, sizeof host);
    fprintf(f, MAGIC "\nhost %s\n", host);
    size_t kl = strlen(key);
    for (const char *l = body; l && *l;) {
        const char *e = strchr(l, '\n');
        if (!(strncmp(l, key, kl) == 0 && l[kl] == ' '))
            fwrite(l, 1, (size_t)(e - l) + 1, f);
        l = e + 1;
    }
    fprintf(f, "%s %s\n", key, val);
    return ferror(f) ? -1 : 0;
}

int dlg_tune_put(const char *path, const char *key, const char *val)
{
    if (!token(key, strlen(key), DLG_TUNE_KEY_MAX) || !token(val, strlen(val), DLG_TUNE_VAL_MAX)) {
        fprintf(stderr, "dlgauge: tuning record %s: entry '%s %s' not stored (spaces or too long)\n", path, key,
                val);
        return -1;
    }
    char tmp[DLG_TUNE_PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    char *body = load(path, false); /* a bad record was warned of when read */
    FILE *f = fopen(tmp, "w");
    int rc = f ? write_record(f, body, key, val) : -1;
    int err = errno;
    free(body);
    if (f && fclose(f) != 0 && rc == 0)
        rc = -1, err = errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1, err = errno;
    if (rc != 0) {
        if (f)
            unlink(tmp);
        fprintf(stderr, "dlgauge: tuning record %s not written: %s (set DLGAUGE_TUNE to a writable file, "
                        "or to off)\n",
                path, strerror(err));
    }
    return rc;
}
