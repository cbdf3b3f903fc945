/* The host's tuning record (see tune.h). */
#define _GNU_SOURCE
#include "tune.h"

#include "peak.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dlgauge/fnv1a.h>

#define MAGIC "dlgauge-tune 1"
#define MAX_BYTES DLG_TUNE_MAX_BYTES
/* the informational line of the host that last wrote it (not checked) */
#define WRITER "written_by_host"

static uint64_t fnv1a(const char *s) { return dlg_fnv1a_str(DLG_FNV1A_INIT, s); }

bool dlg_tune_host(char *out, size_t n)
{
    enum { INFO = 1 << 16 };
    char name[256] = "", vendor[64] = "", fam[16] = "", model[16] = "";
    char *info = calloc(1, INFO), *flags = calloc(1, INFO);
    FILE *f = info && flags ? fopen("/proc/cpuinfo", "r") : NULL;
    if (!info || !flags || (!f && errno == ENOMEM)) { /* (no /proc: the fields stay empty, as always) */
        free(info);
        free(flags);
        if (n)
            out[0] = '\0';
        return false;
    }
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
    /* no hostname: containers get a new one every run (it is written as
     * information only, WRITER) */
    snprintf(out, n, "%s | %s family %s model %s | flags %016llx", name, vendor, fam, model,
             (unsigned long long)fnv1a(flags));
    free(info);
    free(flags);
    return true;
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
    if (!default_dir(dir, sizeof dir) || !dlg_tune_host(host, sizeof host))
        return false;
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

/* What this process has said about its record, so that a record it
 * cannot use costs one line, not one per look-up, pass, layer and plan:
 * the plans that look it up share no context (peak.c, cpu_conv_algo.c,
 * any thread), so this is the one mutable state of the file.  It is about
 * one path (reset when $DLGAUGE_TUNE points elsewhere, as tests do). */
enum {
    SAID_BAD = 1,    /* corrupt or foreign, warned: cleared once rewritten */
    NO_READ = 2,     /* unreadable or too large: neither read nor rewritten */
    NO_WRITE = 4,    /* a store failed: no more tries */
    SAID_FULL = 8,   /* full: new entries dropped */
};
static struct {
    pthread_mutex_t mu;
    char path[DLG_TUNE_PATH_MAX];
    unsigned bits;
} said = {PTHREAD_MUTEX_INITIALIZER, "", 0};

/* Sets `set` and clears `clear` for path: the bits of `set` it lacked
 * before (those worth a line now). */
static unsigned said_update(const char *path, unsigned set, unsigned clear)
{
    pthread_mutex_lock(&said.mu);
    if (strncmp(said.path, path, sizeof said.path) != 0) {
        snprintf(said.path, sizeof said.path, "%s", path);
        said.bits = 0;
    }
    unsigned news = set & ~said.bits;
    said.bits = (said.bits | set) & ~clear;
    pthread_mutex_unlock(&said.mu);
    return news;
}

static bool said_has(const char *path, unsigned bit)
{
    pthread_mutex_lock(&said.mu);
    bool has = strncmp(said.path, path, sizeof said.path) == 0 && (said.bits & bit);
    pthread_mutex_unlock(&said.mu);
    return has;
}

/* REC_NOMEM: memory ran out reading it: neither read nor written this
 * time, nothing said (a later call tries again) */
typedef enum { REC_OK, REC_MISSING, REC_BAD, REC_UNUSABLE, REC_NOMEM } rec_state;

/* Why the text (len bytes) is not a record of this CPU (host), with the
 * line it fails at; NULL if it is.  *body: its entries, after the two
 * header lines. */
static const char *bad_record(const char *text, size_t len, const char *host, int *line, const char **body)
{
    char want[520];
    size_t ml = strlen(MAGIC);
    *line = 0;
    if (strlen(text) != len)
        return "a NUL byte";
    *line = 1;
    if (strncmp(text, MAGIC, ml) != 0 || text[ml] != '\n')
        return "not a dlgauge tuning record (first line '" MAGIC "')";
    snprintf(want, sizeof want, "host %s\n", host);
    *body = text + ml + 1;
    *line = 2;
    if (strncmp(*body, "host ", 5) != 0)
        return "no 'host' line";
    if (strncmp(*body, want, strlen(want)) != 0)
        return "another CPU's record (another host's, or this one's before a CPU or flags change)";
    *body += strlen(want);
    for (const char *l = *body; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        const char *bad = bad_entry(l, n);
        ++*line;
        if (bad || !e)
            return bad ? bad : "cut short (no newline)";
        l = e + 1;
    }
    return NULL;
}

/* The whole file into *text (malloc'ed, NUL-terminated): REC_MISSING,
 * REC_UNUSABLE with why[] (unreadable, or larger than the limit), or
 * REC_OK. */
static rec_state slurp_record(const char *path, char **text, size_t *len, char *why, size_t wn)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    *text = NULL;
    if (fd < 0 && errno == ENOENT)
        return REC_MISSING;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, wn, "cannot be read (%s)", strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(why, wn, "not a regular file");
    } else if (st.st_size > MAX_BYTES) {
        snprintf(why, wn, "larger than the %s a record grows to (not dlgauge's)", DLG_TUNE_MAX_TEXT);
    } else {
        size_t want = (size_t)st.st_size, got = 0;
        char *buf = malloc(want + 1);
        if (!buf) {
            close(fd);
            return REC_NOMEM;
        }
        ssize_t r = 1;
        while (got < want && (r = read(fd, buf + got, want - got)) != 0) {
            if (r < 0 && errno != EINTR)
                break;
            got += r > 0 ? (size_t)r : 0;
        }
        if (r >= 0) {
            close(fd);
            buf[got] = '\0';
            *text = buf;
            *len = got;
            return REC_OK;
        }
        snprintf(why, wn, "cannot be read (%s)", strerror(errno));
        free(buf);
    }
    if (fd >= 0)
        close(fd);
    return REC_UNUSABLE;
}

/* The record's entries into *body (malloc'ed): REC_OK; REC_MISSING; REC_BAD
 * (corrupt or another CPU's: timed again and rewritten) or REC_UNUSABLE
 * (left alone), each warned of once; REC_NOMEM. */
static rec_state load(const char *path, char **body)
{
    char *text, what[160], host[512];
    size_t len = 0;
    int line = 0;
    *body = NULL;
    rec_state st = slurp_record(path, &text, &len, what, sizeof what);
    if (st == REC_OK && !dlg_tune_host(host, sizeof host)) { /* not "another CPU's": that one is rewritten */
        free(text);
        return REC_NOMEM;
    }
    if (st == REC_UNUSABLE) {
        if (said_update(path, NO_READ | NO_WRITE, 0) & NO_READ)
            fprintf(stderr, "dlgauge: tuning record %s: %s; not used: kernels and clock are timed in each plan "
                            "(delete it, or set DLGAUGE_TUNE to another file or to off)\n",
                    path, what);
        return st;
    }
    if (st != REC_OK)
        return st;
    const char *entries = NULL, *why = bad_record(text, len, host, &line, &entries);
    if (why) {
        char at[32] = "";
        if (line > 0)
            snprintf(at, sizeof at, " line %d", line);
        if (said_update(path, SAID_BAD, 0) & SAID_BAD)
            fprintf(stderr, "dlgauge: tuning record %s%s: %s; ignored (measured again and rewritten)\n", path, at,
                    why);
        free(text);
        return REC_BAD;
    }
    memmove(text, entries, strlen(entries) + 1);
    *body = text;
    return REC_OK;
}

/* Whether line l (of body) holds key. */
static bool holds(const char *l, const char *key)
{
    size_t kl = strlen(key);
    return strncmp(l, key, kl) == 0 && l[kl] == ' ';
}

/* The line of body holding key, or NULL. */
static const char *find(const char *body, const char *key)
{
    for (const char *l = body; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (holds(l, key))
            return l;
    return NULL;
}

bool dlg_tune_get(const char *path, const char *key, char *val, size_t n)
{
    char *body;
    if (said_has(path, NO_READ) || load(path, &body) != REC_OK)
        return false;
    const char *l = find(body, key);
    if (l) {
        const char *v = l + strlen(key) + 1;
        size_t len = (size_t)(strchr(v, '\n') - v);
        snprintf(val, n, "%.*s", (int)len, v);
    }
    free(body);
    return l != NULL;
}

/* This host's name as a value (information: the record is the CPU's). */
static void writer_name(char out[DLG_TUNE_VAL_MAX])
{
    char name[256] = "";
    if (gethostname(name, sizeof name - 1) != 0 || !name[0])
        snprintf(name, sizeof name, "?");
    snprintf(out, DLG_TUNE_VAL_MAX, "%.*s", DLG_TUNE_VAL_MAX - 1, name);
    for (char *c = out; *c; c++)
        if (*c <= ' ' || *c > '~')
            *c = '_';
}

/* The record as it will be (malloc'ed, *len bytes): header, the writer,
 * the old entries but key's, key's new; NULL without memory. */
static char *compose(const char *body, const char *key, const char *val, size_t *len)
{
    char host[512], name[DLG_TUNE_VAL_MAX];
    if (!dlg_tune_host(host, sizeof host))
        return NULL;
    writer_name(name);
    /* sized first, not an open_memstream: that drops a character it has no
     * memory for without an error, and the short text would be stored */
    int head = snprintf(NULL, 0, MAGIC "\nhost %s\n" WRITER " %s\n", host, name);
    /* the body's lines are kept or dropped: it takes at most its length */
    size_t need = (size_t)head + (body ? strlen(body) : 0) + strlen(key) + strlen(val) + 3;
    char *text = malloc(need);
    if (!text)
        return NULL;
    size_t at = (size_t)snprintf(text, need, MAGIC "\nhost %s\n" WRITER " %s\n", host, name);
    for (const char *l = body; l && *l;) {
        const char *e = strchr(l, '\n');
        if (!holds(l, key) && !holds(l, WRITER)) {
            memcpy(text + at, l, (size_t)(e - l) + 1);
            at += (size_t)(e - l) + 1;
        }
        l = e + 1;
    }
    at += (size_t)snprintf(text + at, need - at, "%s %s\n", key, val);
    *len = at;
    return text;
}

/* Makes what fd holds durable, then the directory entry that names it. */
static int sync_dir_of(const char *path)
{
    char dir[DLG_TUNE_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir] = '\0';
    int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0; /* the rename is done; only its durability is unknown */
    fsync(fd);
    close(fd);
    return 0;
}

/* text written whole to a temporary file of its own (threads of a process
 * that could not lock share the pid), synced and renamed over path. */
static int replace_file(const char *path, const char *text, size_t len)
{
    char tmp[DLG_TUNE_PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return -1;
    size_t done = 0;
    int rc = fchmod(fd, 0644);
    while (rc == 0 && done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno != EINTR)
            rc = -1;
        done += w > 0 ? (size_t)w : 0;
    }
    if (rc == 0)
        rc = fsync(fd); /* else a crash after the rename can leave it empty */
    int err = errno;
    if (close(fd) != 0 && rc == 0)
        rc = -1, err = errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1, err = errno;
    if (rc != 0) {
        unlink(tmp);
        errno = err;
        return -1;
    }
    return sync_dir_of(path);
}

int dlg_tune_put(const char *path, const char *key, const char *val)
{
    if (!token(key, strlen(key), DLG_TUNE_KEY_MAX) || !token(val, strlen(val), DLG_TUNE_VAL_MAX)) {
        fprintf(stderr, "dlgauge: tuning record %s: entry '%s %s' not stored (spaces or too long)\n", path, key,
                val);
        return -1;
    }
    char *body;
    rec_state st = said_has(path, NO_WRITE) ? REC_UNUSABLE : load(path, &body);
    if (st == REC_UNUSABLE || st == REC_NOMEM)
        return -1; /* said once; or memory ran out: the next store tries again */
    size_t len = 0;
    char *text = compose(body, key, val, &len);
    free(body);
    if (!text)
        return -1; /* out of memory: as load's */
    if (len > MAX_BYTES) {
        /* keep what it holds (a sweep's entries accumulate): new ones are timed */
        if (said_update(path, SAID_FULL, 0))
            fprintf(stderr, "dlgauge: tuning record %s is full (" DLG_TUNE_MAX_TEXT "): it keeps its entries, new "
                            "layers are timed in each plan (delete it to start afresh)\n",
                    path);
        free(text);
        return -1;
    }
    int rc = replace_file(path, text, len);
    int err = errno;
    free(text);
    if (rc != 0) {
        if (said_update(path, NO_WRITE, 0))
            fprintf(stderr, "dlgauge: tuning record %s not written: %s; kernels and clock are timed in each plan "
                            "(set DLGAUGE_TUNE to a writable file, or to off)\n",
                    path, strerror(err));
        return -1;
    }
    said_update(path, 0, SAID_BAD); /* sound again: a later fault is news */
    return 0;
}
